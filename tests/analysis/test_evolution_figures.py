"""analysis/evolution_figures.py: what each figure draws, from small frames built by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import evolution as ev
from analysis import evolution_figures as figs

NOISY = ev.AgentConfig("noisy-oracle")


def _lineage(rows):
    cols = ["task_id", "parent_id", "root_id", "operator", "round", "run_id", "parent_pass_rate", "parent_rollouts",
            "provider", "change", "status", "error", "verdict"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows], columns=cols)


LINEAGE = _lineage([
    ("t__d1", "t", "t", "harder", 1, "r1", 1.0, 4, "offline", "added step 3", "made", None, "accepted"),
    ("t__d1__b1", "t__d1", "t", "context_switch", 2, "r1", 0.5, 4, "offline", "", "no_variant", "no family", None),
])
RATES = pd.DataFrame({"task_id": ["t", "t__d1"], "rollouts": [4, 4], "passed": [4, 2], "r": [1.0, 0.5]})


def _node_traces(fig):
    return [t for t in fig.data if t.mode == "markers+text"]


def test_the_tree_colours_rated_nodes_by_r_and_greys_the_rest():
    fig = figs.lineage_tree_figure(ev.lineage_tree(LINEAGE, RATES, "t"), NOISY, highlight="t__d1")
    rated, unrated = _node_traces(fig)
    assert list(rated.text) == ["original · r=1.00", "d1 · r=0.50"]
    assert list(rated.marker.color) == [1.0, 0.5] and rated.marker.cmin == 0 and rated.marker.cmax == 1
    assert list(rated.marker.line.width) == [1, 4]                      # the highlighted variant is ringed
    assert list(unrated.text) == ["b1 · r=—"] and unrated.marker.color == figs.NO_RATE
    assert list(unrated.marker.symbol) == ["x"]                          # no variant made
    assert "not made: no family" in unrated.hovertext[0]
    edges = {t.name: t for t in fig.data if t.mode == "lines"}
    assert set(edges) == {"harder", "context_switch"}
    assert list(edges["harder"].x) == [0.0, 1.0, None]
    assert "simulated, not a model" in fig.layout.title.text


def test_before_after_draws_one_dumbbell_per_operator_with_pairs():
    summary = ev.operator_summary(ev.variants_frame(LINEAGE, RATES))
    fig = figs.before_after_figure(summary, NOISY)
    dumbbells = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in dumbbells] == ["harder"]                      # the context switch made nothing
    assert list(dumbbells[0].x) == [1.0, 0.5]
    assert fig.layout.annotations[0].text == "1.00 → 0.50 (n = 1; SETA: lowers r)"
    assert "simulated, not a model" in fig.layout.xaxis.title.text


def test_productive_share_bars_with_counts():
    share = pd.DataFrame({"round": [0, 1], "tasks": [5, 2], "productive": [2, 2], "share": [0.4, 1.0],
                          "unrated": [0, 1]})
    bar = figs.productive_share_figure(share, NOISY).data[0]
    assert list(bar.x) == ["round 0 (originals)", "round 1"]
    assert list(bar.y) == [0.4, 1.0] and list(bar.text) == ["2/5", "2/2 (1 without rollouts)"]
    assert "simulated, not a model" in figs.productive_share_figure(share, NOISY).layout.title.text


def test_rates_by_round_a_line_per_operator_for_variants_and_parents():
    rounds = pd.DataFrame({"round": [1, 2, 1], "operator": ["harder", "harder", "easier"], "rated": [2, 1, 1],
                           "r_before": [0.9, 0.8, 0.0], "r_after": [0.4, 0.5, 0.75]})
    fig = figs.rates_by_round_figure(rounds, NOISY)
    assert [t.name for t in fig.data] == ["harder: variants", "harder: parents", "easier: variants",
                                          "easier: parents"]
    assert np.asarray(fig.data[0].y).tolist() == pytest.approx([0.4, 0.5])
    assert fig.data[1].line.dash == "dot"
    assert "simulated, not a model" in fig.layout.title.text
