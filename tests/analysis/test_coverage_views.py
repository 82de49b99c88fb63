"""The Coverage page's data: batch labels, heatmaps, per-batch metrics and growth curves."""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis import coverage_views as cv


def test_heatmap_matrix_orders_rows_by_visits_and_pairs_share_rows():
    cells = pd.DataFrame({"cluster": ["c1", "c1", "c2", "c3", None],
                          "category": ["git", "files", "git", "text", "git"], "visits": [5, 1, 9, 2, 4]})
    m = cv.heatmap_matrix(cells, top=3)
    assert m.index.tolist() == ["c2", "c1", cv.GONE]
    assert m.columns.tolist() == ["files", "git", "text"] and m.loc["c1", "git"] == 5
    other = pd.DataFrame({"cluster": ["c3"], "category": ["net"], "visits": [50]})
    a, b = cv.heatmap_pair(cells, other, top=2)
    assert a.index.tolist() == b.index.tolist() == ["c3", "c2"]
    assert a.columns.tolist() == b.columns.tolist() == ["files", "git", "net", "text"]
    assert b.loc["c3", "net"] == 50 and a.loc["c3", "net"] == 0
    fig = cv.coverage_heatmap(a, title="t", zmax=50)
    assert isinstance(fig.data[0], go.Heatmap) and fig.data[0].zmax == 50
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[a.to_numpy() == 0]).all()  # unvisited cells are blank
    assert np.nansum(z) == a.to_numpy().sum()
    pair = cv.coverage_heatmap_pair(a, b, ("left batch", "right batch"))
    assert len(pair.data) == 2 and list(pair.data[0].y) == list(pair.data[1].y)
    assert pair.layout.coloraxis.cmax == 50 and pair.data[0].coloraxis == pair.data[1].coloraxis == "coloraxis"
    assert [an.text for an in pair.layout.annotations] == ["left batch", "right batch"]


def test_heatmaps_clear_the_toolbar_and_tick_visits_in_whole_numbers():
    # The walk: the toolbar covered the top right cells and the colour bar's title; visits ticked 1.2.
    from analysis.figures import TOOLBAR_PX
    m = pd.DataFrame([[1, 3], [2, 0]], index=["c1", "c2"], columns=["git", "files"])
    fig = cv.coverage_heatmap(m)
    assert fig.layout.margin.t >= TOOLBAR_PX
    assert fig.data[0].colorbar.dtick == 1 and fig.data[0].colorbar.tickformat == ",d"
    pair = cv.coverage_heatmap_pair(m, m, ("a", "b"))
    assert pair.layout.margin.t >= TOOLBAR_PX and pair.layout.coloraxis.colorbar.dtick == 1


def test_heatmap_labels_stay_unique_after_truncation():
    m = pd.DataFrame([[1], [2]], index=["x" * 80 + "1", "x" * 80 + "2"], columns=["git"])
    fig = cv.coverage_heatmap(m, label_len=20)
    assert len(set(fig.data[0].y)) == 2


def _steps_frame(paths: list[list[tuple[str, str]]]) -> pd.DataFrame:
    rows = [{"path_id": f"p{i}", "idx": i, "step": j, "src_anchor": s, "skill_id": k, "dst_anchor": "z",
             "skill_name": k, "category": "c"} for i, p in enumerate(paths) for j, (s, k) in enumerate(p)]
    return pd.DataFrame(rows, columns=["path_id", "idx", "step", "src_anchor", "skill_id", "dst_anchor",
                                       "skill_name", "category"])


def test_metrics_known_values():
    uniform = np.array([3, 3, 3, 3])
    assert cv.normalized_entropy(uniform, 4) == pytest.approx(1.0)
    assert cv.gini(uniform, 4) == pytest.approx(0.0)
    assert cv.kl_to_uniform(uniform, 4) == pytest.approx(0.0)
    one = np.array([10])
    assert cv.normalized_entropy(one, 4) == pytest.approx(0.0)
    assert cv.gini(one, 4) == pytest.approx(3 / 4)
    assert cv.kl_to_uniform(one, 4) == pytest.approx(math.log(4))
    assert math.isnan(cv.gini(np.zeros(0, dtype=int), 4))
    with pytest.raises(ValueError):
        cv.gini(np.array([1, 1, 1]), 2)


def test_metrics_agree_with_analysis_coverage_on_the_same_steps():
    from analysis import coverage
    rng = np.random.default_rng(3)
    paths = [[(f"n{rng.integers(0, 12)}", f"k{rng.integers(0, 7)}") for _ in range(rng.integers(1, 6))]
             for _ in range(60)]
    steps = _steps_frame(paths)
    codes_src, _ = pd.factorize(steps["src_anchor"])
    codes_skill, _ = pd.factorize(steps["skill_id"])
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])])
    P = SimpleNamespace(src=codes_src, skill=codes_skill, dst=codes_src, ptr=ptr)
    universe = 84
    row = cv.batch_metrics({"b": steps}, universe).iloc[0]
    assert row["unique_pairs"] == coverage.unique_pairs(P) == len(set(sum(paths, [])))
    assert row["normalized_entropy"] == pytest.approx(coverage.normalized_entropy(P, universe))
    assert row["gini"] == pytest.approx(coverage.gini(P, universe))
    assert row["kl_to_uniform"] == pytest.approx(coverage.kl_to_uniform(P, universe))
    assert cv.coverage_growth(steps).tolist() == coverage.coverage_growth(P).tolist()


def test_growth_curves_and_universe():
    steps = _steps_frame([[("a", "1"), ("b", "2")], [("a", "1")], [("c", "1"), ("a", "2")]])
    g = cv.coverage_growth(steps, n_paths=5)
    assert g.tolist() == [2, 2, 4, 4, 4]
    curves = cv.growth_curves({"x": steps}, {"x": 5})
    assert curves["paths"].tolist() == [1, 2, 3, 4, 5]
    fig = cv.growth_figure(curves, universe=10)
    assert fig.data[0].name == "x"
    assert cv.effective_universe(10, steps) == (10, False)
    assert cv.effective_universe(3, steps) == (4, True)
    assert cv.effective_universe(None, steps) == (4, False)


def test_growth_figure_scales_to_the_curves_and_states_the_universe():
    # The walk saw both curves (~20 pairs) flat on 0 under an axis that ran to the 714-pair universe.
    curves = pd.DataFrame({"batch": ["a"] * 3 + ["b"] * 3, "paths": [1, 2, 3] * 2,
                           "unique_pairs": [5, 12, 21, 4, 9, 17]})
    fig = cv.growth_figure(curves, universe=714)
    top = fig.layout.yaxis.range[1]
    assert 21 <= top < 30
    assert not [s for s in fig.layout.shapes if s.y0 == 714]  # no line at 714 stretching the axis
    assert any("714" in a.text and "21" in a.text for a in fig.layout.annotations)
    assert fig.layout.yaxis.tickformat == ",d" and fig.layout.xaxis.dtick == 1  # counts: whole ticks
    near = cv.growth_figure(curves.assign(unique_pairs=curves["unique_pairs"] * 30), universe=714)
    assert near.layout.yaxis.range[1] >= 714  # curves near the universe: its line is drawn
    assert cv.growth_figure(curves).layout.yaxis.range[1] < 30


def test_batch_labels_and_default_pair():
    t0 = datetime(2025, 5, 1, 12, 0, 0)
    b = pd.DataFrame({"batch_id": ["r2", "i2", "r1", "i1"],
                      "sampler": ["random-walk", "inverse-frequency", "random-walk", "inverse-frequency"],
                      "n_paths": [200] * 4, "paths": [200, 200, 150, 200],
                      "created_at": [t0 + timedelta(minutes=m) for m in (4, 3, 2, 1)]})
    labels = cv.batch_labels(b)
    assert labels["r1"] == "random-walk · 150 paths · 2025-05-01 12:02:00"
    assert cv.default_pair(b) == ("i2", "r2")
    assert cv.default_pair(b[b["sampler"] == "random-walk"]) == ("r2", "r1")
    assert cv.default_pair(b.iloc[0:0]) == (None, None)


def test_equal_budget_cuts_every_batch_to_the_smallest_and_says_so():
    sizes = {"synthesis · 12 paths": 12, "random-walk · 200 paths": 200}
    assert cv.equal_budget(sizes) == 12 and cv.equal_budget({}) == 0
    steps = pd.DataFrame({"idx": [0, 0, 1, 11, 12, 199], "step": [0, 1, 0, 0, 0, 0]})
    assert cv.first_paths(steps, 12)["idx"].tolist() == [0, 0, 1, 11]
    assert len(cv.first_paths(steps, None)) == 6 and cv.first_paths(steps.iloc[:0], 3).empty
    assert cv.budget_note(sizes, 12) == (
        "Compared at an equal budget: the first 12 paths of each batch, the size of the smallest; "
        "cut: random-walk · 200 paths (200 paths). Turn off 'Equal budget' to compare whole batches.")
    assert cv.budget_note({"a": 200, "b": 200}, 200) == "Every batch compared has 200 paths: compared whole."
    assert cv.budget_note(sizes, None).startswith("Each batch with all its paths: batches of different sizes")
