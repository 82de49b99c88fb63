"""Coverage page through AppTest: heatmaps, growth and metrics; batches of different sizes are
compared at an equal budget by default (a 12-path batch against 200-path ones), and whole on request."""
from __future__ import annotations

import numpy as np

from analysis import coverage_views as cv
from pipeline.graph.sample_run import sample
from tests.pages.apptest_helpers import chart, frame, open_page, plotly_array
from workbench.store import graph as store


def _open(ws, monkeypatch):
    return open_page(ws, monkeypatch, "path_coverage.py")


def test_batches_of_different_sizes_are_compared_at_an_equal_budget(graph_workspace, monkeypatch):
    ws = graph_workspace  # 200 inverse-frequency and 200 random-walk paths
    small = sample(ws, "inverse-frequency", 12, seed=5).batch_id  # like a synthesis run's batch
    at = _open(ws, monkeypatch)
    left, right = at.selectbox(key="cov_left").value, at.selectbox(key="cov_right").value
    assert left == small and store.sample_batches(ws.db).set_index("batch_id").loc[right, "paths"] == 200
    assert at.toggle(key="cov_equal_budget").value is True
    label = at.selectbox(key="cov_left").format_func
    note = next(i.value for i in at.info if i.value.startswith("Compared at an equal budget"))
    assert "the first 12 paths of each batch" in note and f"{label(right)} (200 paths)" in note
    # metrics and growth over the first 12 paths of every batch
    metrics = frame(at, "batch", "paths", "unique_pairs").set_index("batch")
    assert set(metrics["paths"]) == {12}
    first12 = store.path_steps(ws.db, right)
    first12 = first12[first12["idx"] < 12]
    assert metrics.loc[label(right), "unique_pairs"] == len(first12[["src_anchor", "skill_id"]].drop_duplicates())
    assert {len(plotly_array(tr["y"])) for tr in chart(at, "growth")["data"]} == {12}
    # the side-by-side heatmaps count the same 12 paths
    cells = store.coverage_cells(ws.db, right, max_paths=12)
    assert cells["visits"].sum() == len(first12)
    expected = cv.heatmap_pair(store.coverage_cells(ws.db, left, max_paths=12), cells, top=cv.HEATMAP_ROWS)
    pair = chart(at, "heatmap_pair")["data"]
    for trace, m in zip(pair, expected):
        assert np.nansum(plotly_array(trace["z"]).astype(float)) == m.to_numpy().sum()

    # whole batches on request, and the page says that they do not compare
    at.toggle(key="cov_equal_budget").set_value(False).run()
    assert not at.exception, at.exception
    assert any(i.value.startswith("Each batch with all its paths") for i in at.info)
    metrics = frame(at, "batch", "paths", "unique_pairs").set_index("batch")
    assert metrics.loc[label(left), "paths"] == 12 and metrics.loc[label(right), "paths"] == 200
    whole = cv.heatmap_pair(store.coverage_cells(ws.db, left), store.coverage_cells(ws.db, right),
                            top=cv.HEATMAP_ROWS)[1]
    assert np.nansum(plotly_array(chart(at, "heatmap_pair")["data"][1]["z"]).astype(float)) == whole.to_numpy().sum()


def test_coverage_page_heatmaps_growth_and_metrics(graph_workspace, monkeypatch):
    ws = graph_workspace
    at = _open(ws, monkeypatch)
    for key in ("heatmap", "heatmap_pair", "growth"):
        fig = chart(at, key)
        assert fig["data"], key
    pair = chart(at, "heatmap_pair")["data"]
    assert [t["type"] for t in pair] == ["heatmap", "heatmap"] and pair[0]["y"] == pair[1]["y"]
    heat = chart(at, "heatmap")["data"][0]
    assert heat["type"] == "heatmap" and len(heat["y"]) <= 40
    batches = store.sample_batches(ws.db)
    by_id = batches.set_index("batch_id")
    left, right = at.selectbox(key="cov_left").value, at.selectbox(key="cov_right").value
    assert by_id.loc[left, "sampler"] == "inverse-frequency" and by_id.loc[right, "sampler"] == "random-walk"
    # the single-batch heatmap: the 40 most visited clusters, most visited first, all their visits
    cells = store.coverage_cells(ws.db, at.selectbox(key="cov_batch").value)
    per_cluster = cells.groupby(cells["cluster"].fillna("?"))["visits"].sum().sort_values(ascending=False)
    z = plotly_array(heat["z"]).reshape(len(heat["y"]), len(heat["x"]))
    assert np.nansum(z, axis=1).tolist() == per_cluster.head(40).tolist()  # zeros are drawn blank (NaN)
    assert sorted(heat["x"]) == sorted(cells["category"].unique())
    metrics = frame(at, "batch", "unique_pairs", "normalized_entropy", "gini", "kl_to_uniform")
    assert len(metrics) == 2
    labels = at.selectbox(key="cov_left").format_func
    for bid in (left, right):
        steps = store.path_steps(ws.db, bid)
        direct = len(steps[["src_anchor", "skill_id"]].drop_duplicates())
        row = metrics[metrics["batch"] == labels(bid)].iloc[0]
        assert row["unique_pairs"] == direct
        assert 0 < row["normalized_entropy"] <= 1 and 0 <= row["gini"] < 1 and row["kl_to_uniform"] >= 0
    # one growth curve per batch, ending at its unique pairs
    growth = {tr["name"]: plotly_array(tr["y"]) for tr in chart(at, "growth")["data"]}
    for _, row in metrics.iterrows():
        assert growth[row["batch"]][-1] == row["unique_pairs"]
        assert (np.diff(growth[row["batch"]]) >= 0).all()
