"""Figures with a legend keep its top entry clear of plotly's toolbar (drawn over the top right)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis import coverage_views, figures, llm_costs, scenario_map


def _room_needed(fig: go.Figure) -> int:
    legend = fig.layout.legend
    above = legend.orientation == "h" and legend.y is not None and legend.y >= 1
    return figures.TOOLBAR_PX + (figures.LEGEND_ROW_PX if above else 0)


def _scenario_points() -> pd.DataFrame:
    n = 40
    return pd.DataFrame({"scenario_id": [f"s{i}" for i in range(n)], "cluster_id": np.arange(n) % 5,
                         "text": "t", "skill_name": "k", "role": "pre", "x": np.arange(n, dtype=float),
                         "y": np.arange(n, dtype=float), "topic": np.arange(n) % 3 - 1})


LEGEND_FIGURES = {
    "skills by category": lambda: figures.skills_by_category(pd.DataFrame(
        {"category": ["git", "git", "files"], "status": ["accepted", "pending", "accepted"], "skills": [3, 1, 2]})),
    "scenario map": lambda: scenario_map.scenario_map(_scenario_points(), "topic"),
    "coverage growth": lambda: coverage_views.growth_figure(pd.DataFrame(
        {"batch": ["a", "a", "b", "b"], "paths": [1, 2, 1, 2], "unique_pairs": [1, 2, 1, 3]})),
    "LLM cost": lambda: llm_costs.cost_figure(pd.DataFrame(
        {"stage": ["scenarios", "bridges"], "model": ["m1", "m2"], "cost_usd": [0.1, 0.2]})),
    "LLM timeline": lambda: llm_costs.timeline_figure(pd.DataFrame(
        {"time": pd.to_datetime(["2025-01-01", "2025-01-02"]), "calls": [3, 4], "cache_hits": [1, 2],
         "cost_usd": [0.1, 0.2]})),
}


@pytest.mark.parametrize("name", list(LEGEND_FIGURES))
def test_the_legend_starts_below_the_toolbar(name):
    fig = LEGEND_FIGURES[name]()
    assert fig.layout.showlegend is not False and len(fig.data) >= 2, "a figure with a legend"
    assert (fig.layout.margin.t or 0) >= _room_needed(fig), name


def test_clear_of_toolbar_keeps_a_larger_margin_and_makes_room_for_a_legend_row_above():
    fig = go.Figure(layout=dict(margin=dict(t=80)))
    assert figures.clear_of_toolbar(fig).layout.margin.t == 80
    above = go.Figure(layout=dict(legend=dict(orientation="h", y=1.02), margin=dict(t=10)))
    assert figures.clear_of_toolbar(above).layout.margin.t == figures.TOOLBAR_PX + figures.LEGEND_ROW_PX


def test_counts_tick_in_whole_numbers():
    # The walk saw count axes ticked 0.5 and 1.2: a tick per unit while small, whole-number labels always.
    assert figures.count_ticks(3) == {"tickformat": ",d", "tick0": 0, "dtick": 1}
    assert figures.count_ticks(500) == {"tickformat": ",d"}
    few = figures.flagged_rules(pd.DataFrame({"rule": ["a", "b"], "skills": [2, 1]}))
    assert few.layout.xaxis.dtick == 1 and few.layout.xaxis.tickformat == ",d"
    many = figures.skills_by_category(pd.DataFrame({"category": ["git", "git"], "status": ["accepted", "pending"],
                                                    "skills": [300, 40]}))
    assert many.layout.xaxis.dtick is None and many.layout.xaxis.tickformat == ",d"
