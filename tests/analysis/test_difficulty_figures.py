"""analysis/difficulty_figures.py: what each figure draws, from hand-made frames."""
from __future__ import annotations

import pandas as pd

from analysis import difficulty_figures as figs
from analysis.difficulty import BAND_COLORS

DIST = pd.DataFrame([
    {"agent_label": "a", "value": 3, "band": "hard", "tasks": 2},
    {"agent_label": "a", "value": 10, "band": "solved", "tasks": 1},
    {"agent_label": "b", "value": 3, "band": "hard", "tasks": 1},
    {"agent_label": "b", "value": "unknown", "band": "unsolved", "tasks": 4},
])


def test_a_distribution_has_one_titled_panel_per_agent_config_and_one_legend_entry_per_band():
    fig = figs.distribution_figure(DIST, "path length")
    assert [a.text for a in fig.layout.annotations] == ["a", "b"]
    assert [(t.name, t.xaxis, list(t.x), list(t.y)) for t in fig.data] == [
        ("hard", "x", ["3"], [2]), ("solved", "x", ["10"], [1]), ("unsolved", "x2", ["unknown"], [4]),
        ("hard", "x2", ["3"], [1])]
    assert [t.name for t in fig.data if t.showlegend is not False] == ["hard", "solved", "unsolved"]
    assert [t.marker.color for t in fig.data] == [BAND_COLORS[t.name] for t in fig.data]
    # path lengths in number order on every panel, then names
    assert list(fig.layout.xaxis.categoryarray) == ["3", "10", "unknown"] == list(fig.layout.xaxis2.categoryarray)
    assert fig.layout.xaxis2.title.text == "path length"


def test_check_vs_task_bars_say_their_counts():
    rates = pd.DataFrame([{"agent_label": "a", "rollouts": 4, "rollouts_passed": 1, "task_rate": 0.25,
                           "checks_run": 16, "checks_passed": 13, "check_rate": 13 / 16},
                          {"agent_label": "b", "rollouts": 1, "rollouts_passed": 0, "task_rate": 0.0,
                           "checks_run": 0, "checks_passed": 0, "check_rate": float("nan")}])
    fig = figs.check_vs_task_figure(rates)
    checks, tasks = fig.data
    assert list(checks.text) == ["81% (13/16)", "no tests"] and list(tasks.text) == ["25% (1/4)", "0% (0/1)"]
    # the walk: a 0% bar was invisible, its text dropped with it; the text now stands beside every bar
    assert {t.textposition for t in fig.data} == {"outside"} and not any(t.cliponaxis for t in fig.data)


def test_bands_by_agent_keep_the_band_order():
    counts = pd.DataFrame([{"agent_label": "a", "band": b, "tasks": i} for i, b in
                           enumerate(["unsolved", "hard", "medium", "easy", "solved"])])
    fig = figs.bands_by_agent_figure(counts)
    assert [t.name for t in fig.data] == ["unsolved", "hard", "medium", "easy", "solved"]
    assert fig.layout.xaxis.tickformat == ",d" and fig.layout.xaxis.dtick == 1  # 10 tasks: a tick per task
