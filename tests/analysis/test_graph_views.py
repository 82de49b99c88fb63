"""Pure data shaping and figures behind the Scenarios, Graph and Coverage pages."""
from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis import graph_views as gv


def _members(n: int, n_clusters: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "scenario_id": [f"s{i}:{'pre' if i % 2 else 'post'}" for i in range(n)],
        "skill_id": [f"s{i}" for i in range(n)], "role": ["pre" if i % 2 else "post" for i in range(n)],
        "cluster_id": np.arange(n) % n_clusters, "text": [f"a scenario number {i}" for i in range(n)],
        "skill_name": [f"skill {i}" for i in range(n)], "category": "files",
        "x": rng.normal(size=n), "y": rng.normal(size=n), "topic": (np.arange(n) % 4) - 1})


# --- scenario map --------------------------------------------------------------------------------

def test_map_points_caps_deterministically_and_keeps_the_selected_cluster():
    m = _members(5_000, n_clusters=500)
    m.loc[3, "x"] = np.nan
    assert len(gv.map_points(m)) == 4_999  # under the cap: all with a projection
    a = gv.map_points(m, selected_cluster=7, max_points=300)
    b = gv.map_points(m, selected_cluster=7, max_points=300)
    assert len(a) == 300 and a["scenario_id"].tolist() == b["scenario_id"].tolist()
    assert set(m.loc[m["cluster_id"] == 7, "scenario_id"]) <= set(a["scenario_id"])
    assert a["x"].notna().all()


def test_scenario_map_carries_ids_per_point_and_switches_to_webgl():
    small = gv.map_points(_members(200))
    fig = gv.scenario_map(small, "topic")
    assert fig.layout.dragmode == "lasso"
    assert all(isinstance(t, go.Scatter) for t in fig.data)
    assert len(fig.data) == 4  # topics -1, 0, 1, 2
    assert fig.data[-1].name == "no topic"  # noise last, grey
    ids = {tuple(cd) for t in fig.data for cd in t.customdata}
    assert ids == {(s, c) for s, c in zip(small["scenario_id"], small["cluster_id"])}
    big = gv.scenario_map(gv.map_points(_members(3_000)), "topic")
    assert all(isinstance(t, go.Scattergl) for t in big.data)


def test_cluster_colour_mode_splits_the_picked_cluster_from_the_rest():
    pts = gv.map_points(_members(200))
    fig = gv.scenario_map(pts, "cluster", selected_cluster=3)
    assert [t.name for t in fig.data] == ["other clusters", "cluster 3"]
    assert {int(cd[1]) for cd in fig.data[1].customdata} == {3}
    assert len(fig.data[1].customdata) == (pts["cluster_id"] == 3).sum()
    with pytest.raises(ValueError):
        gv.scenario_map(pts, "nonsense")


def test_selection_reads_custom_data_as_list_or_dict_and_maps_to_current_clusters():
    m = _members(40, n_clusters=10)
    event = {"selection": {"points": [
        {"curve_number": 0, "point_index": 0, "customdata": ["s0:post", 0]},
        {"curve_number": 1, "point_index": 0, "customdata": {"0": "s1:pre", "1": "1"}},
        {"curve_number": 1, "point_index": 3, "customdata": ["s11:pre", 1]},
        {"curve_number": 2, "point_index": 2},  # no custom data: ignored
    ], "point_indices": [0, 0, 3, 2], "box": [], "lasso": []}}
    assert gv.selection_points(event) == [("s0:post", 0), ("s1:pre", 1), ("s11:pre", 1)]
    assert gv.selected_clusters(event, m) == [0, 1]
    # after a rebuild renumbered the clusters, the scenario ids still find the current ones
    renumbered = m.assign(cluster_id=(m["cluster_id"] + 5) % 10)
    assert gv.selected_clusters(event, renumbered) == [5, 6]
    assert gv.selected_clusters(None, m) == [] and gv.selected_clusters({"selection": {}}, m) == []


def test_cluster_picker_labels_filter_and_keep():
    clusters = pd.DataFrame({"cluster_id": [0, 1, 2], "anchor": ["a:pre", "b:post", "c:pre"],
                             "canonical": ["A git repository", "A CSV file", "A git branch"], "size": [5, 3, 1],
                             "renamed": False})
    assert gv.cluster_labels(clusters)["a:pre"] == "5 · A git repository"
    assert gv.cluster_options(clusters, "GIT") == ["a:pre", "c:pre"]
    assert gv.cluster_options(clusters, "git", keep="b:post") == ["a:pre", "c:pre", "b:post"]
    assert gv.cluster_options(clusters, "", limit=1) == ["a:pre"]
    assert gv.cluster_ids(clusters, ["c:pre", "gone", "a:pre"]) == [2, 0]


def test_edit_history_view_summarises_payloads():
    h = pd.DataFrame({"edit_id": ["e2", "e1"], "kind": ["rename", "merge"],
                      "payload": [json.dumps({"anchor": "a", "text": "New text"}),
                                  json.dumps({"scenario_ids": ["x", "y", "z"], "clusters": [1, 4]})],
                      "author": ["ann", "bob"], "created_at": [datetime(2025, 1, 2), datetime(2025, 1, 1)],
                      "undone_at": [None, datetime(2025, 1, 3)]})
    v = gv.edit_history_view(h)
    assert v["what"].tolist() == ["renamed to “New text”", "merged clusters [1, 4] (3 scenarios)"]
    assert v["undone"].tolist() == [False, True]
    assert gv.edit_history_view(h.iloc[0:0]).empty


# --- cluster graph --------------------------------------------------------------------------------

def _graph(n: int = 30, seed: int = 1):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 120)
    dst = rng.integers(0, n, 120)
    keep = src != dst
    skill_edges = pd.DataFrame({"src": src[keep], "dst": dst[keep], "skill": np.arange(keep.sum())})
    bridge_edges = pd.DataFrame({"src": [0, 1, 0], "dst": [2, 3, 2]})
    edges = gv.cluster_edges(skill_edges, bridge_edges)
    nodes = gv.cluster_nodes(np.array([f"a{i}" for i in range(n)]), np.array([f"text {i}" for i in range(n)]), edges)
    return skill_edges, edges, nodes


def test_cluster_edges_aggregate_skills_and_keep_bridges_apart():
    skill_edges = pd.DataFrame({"src": [0, 0, 1], "dst": [1, 1, 2], "skill": [0, 1, 2]})
    e = gv.cluster_edges(skill_edges, pd.DataFrame({"src": [0, 0], "dst": [1, 1]}))
    assert sorted(map(tuple, e[["src", "dst", "kind", "weight"]].to_numpy().tolist())) == [
        (0, 1, "bridge", 1), (0, 1, "skill", 2), (1, 2, "skill", 1)]
    assert gv.node_degrees(4, e).tolist() == [1, 2, 1, 0]


def test_top_subgraph_and_layout():
    _, edges, nodes = _graph()
    top, sub = gv.top_subgraph(nodes, edges, max_nodes=10)
    assert len(top) == 10
    assert top["degree"].min() >= nodes["degree"].sort_values(ascending=False).iloc[9]
    assert sub["src"].isin(top["node"]).all() and sub["dst"].isin(top["node"]).all()
    a, b = gv.with_layout(top, sub), gv.with_layout(top, sub)
    assert np.isfinite(a[["x", "y"]].to_numpy()).all()
    assert a[["x", "y"]].equals(b[["x", "y"]])  # deterministic
    # pixel coordinates inside the canvas, using most of it
    assert a["x"].between(0, 1100).all() and a["y"].between(0, 620).all()
    assert a["x"].max() - a["x"].min() > 500 or a["y"].max() - a["y"].min() > 300
    assert not a[["x", "y"]].duplicated().any()


def test_layout_packs_components_apart():
    # a 20-node cycle, a triangle and three isolated nodes
    edges = pd.DataFrame({"src": list(range(20)) + [20, 21, 22],
                          "dst": [(i + 1) % 20 for i in range(20)] + [21, 22, 20],
                          "kind": "skill", "weight": 1})
    nodes = pd.DataFrame({"node": range(26), "canonical": [f"t{i}" for i in range(26)], "degree": 1})
    xy = gv.with_layout(nodes, edges).set_index("node")[["x", "y"]]
    cycle, tri, lone = xy.loc[0:19], xy.loc[20:22], xy.loc[23:25]

    def box(f):
        return f["x"].min(), f["x"].max(), f["y"].min(), f["y"].max()

    def overlap(a, b):
        return not (a[1] < b[0] or b[1] < a[0] or a[3] < b[2] or b[3] < a[2])
    assert not overlap(box(cycle), box(tri))
    assert all(not overlap(box(cycle), box(lone.iloc[[i]])) for i in range(3))
    # the biggest component gets the biggest box
    assert (box(cycle)[1] - box(cycle)[0]) > (box(tri)[1] - box(tri)[0])


def test_declutter_labels_skips_overlapping_labels_and_labels_past_the_border():
    nodes = pd.DataFrame({"node": [0, 1, 2, 3, 4, 5], "canonical": ["a long enough label"] * 6,
                          "degree": [9, 8, 7, 1, 0, 0], "x": [100.0, 105.0, 300.0, 100.0, 0.0, 400.0],
                          "y": [0.0, 0.0, 0.0, 200.0, 100.0, 100.0]})
    assert gv.declutter_labels(nodes, top=10) == {0, 2, 3}  # 1 sits on 0's label; 4 and 5 would be cut off
    assert gv.declutter_labels(nodes, top=2) == {0, 2}
    assert gv.declutter_labels(nodes, top=10, keep=[1, 5]) == {1, 5, 2, 3}  # kept nodes come first, always


def test_ego_nodes_respects_hops_cap_and_order():
    edges = pd.DataFrame({"src": [0, 0, 1, 2, 3, 5], "dst": [1, 2, 3, 4, 5, 6],
                          "kind": "skill", "weight": 1})
    assert gv.ego_nodes(edges, 0, hops=1) == [0, 1, 2]
    assert set(gv.ego_nodes(edges, 0, hops=2)) == {0, 1, 2, 3, 4}
    assert gv.ego_nodes(edges, 3, hops=1) == [3, 1, 5]  # direction ignored
    assert gv.ego_nodes(edges, 0, hops=2, cap=3) == [0, 1, 2]
    deg = np.array([2, 2, 2, 2, 1, 2, 1])
    deg[2] = 9
    assert gv.ego_nodes(edges, 0, hops=1, degrees=deg) == [0, 2, 1]  # higher degree first


def test_pyvis_html_is_self_contained_precomputed_and_styles_edge_kinds(monkeypatch):
    from pyvis.network import Network

    def no_add_edge(*a, **k):
        raise AssertionError("add_edge is quadratic: fill net.edges directly")
    monkeypatch.setattr(Network, "add_edge", no_add_edge)
    _, edges, nodes = _graph()
    nodes = gv.with_layout(nodes, edges)
    page = gv.pyvis_html(nodes, edges, height=500, highlight_nodes=[0])
    assert "new vis.Network" in page and "vis-network" in page.lower()
    assert "cdn.jsdelivr" not in page and "bootstrap" not in page.lower()
    options = json.loads(page.split("var options = ", 1)[1].split(";\n", 1)[0])
    assert options["physics"]["enabled"] is False
    data = json.loads(page.split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert len(data) == len(nodes)
    assert {d["id"] for d in data} == set(nodes["node"])
    first = next(d for d in data if d["id"] == int(nodes.iloc[0]["node"]))
    assert (first["x"], first["y"]) == (float(nodes.iloc[0]["x"]), float(nodes.iloc[0]["y"]))
    assert first["color"] == gv.HIGHLIGHT
    e = json.loads(page.split("edges = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    kinds = {(d["dashes"], d["color"]) for d in e}
    assert kinds == {(False, gv.SKILL_EDGE_COLOR), (True, gv.BRIDGE_EDGE_COLOR)}
    assert len(e) == len(edges)


def test_path_table_and_drawing():
    steps = pd.DataFrame({"step": [1, 0, 2], "src_anchor": ["b", "a", "c"], "dst_anchor": ["c", "b", "d"],
                          "skill_id": ["k2", "k1", "k3"], "skill_name": ["two", "one", "three"],
                          "category": ["git", "files", "text"], "idx": 0})
    canon = {"a": "start", "b": "middle", "c": "later"}
    t = gv.path_table(steps, canon, current=1)
    assert t["step"].tolist() == [0, 1, 2] and t["now"].tolist() == ["", "▶", ""]
    assert t.loc[0, "from"] == "start" and t.loc[2, "to"].startswith("(gone")
    nodes, edges = gv.path_drawing(steps, canon, upto=1)
    assert nodes["canonical"].tolist() == ["start", "middle", "later"]
    assert edges[["src", "dst"]].to_numpy().tolist() == [[0, 1], [1, 2]]
    assert edges["label"].iloc[-1].startswith("1. two")
    assert gv.pyvis_html(nodes, edges, edge_labels=True).count('"label": "1. two"') == 1


# --- coverage ------------------------------------------------------------------------------------------

def test_heatmap_matrix_orders_rows_by_visits_and_pairs_share_rows():
    cells = pd.DataFrame({"cluster": ["c1", "c1", "c2", "c3", None],
                          "category": ["git", "files", "git", "text", "git"], "visits": [5, 1, 9, 2, 4]})
    m = gv.heatmap_matrix(cells, top=3)
    assert m.index.tolist() == ["c2", "c1", gv.GONE]
    assert m.columns.tolist() == ["files", "git", "text"] and m.loc["c1", "git"] == 5
    other = pd.DataFrame({"cluster": ["c3"], "category": ["net"], "visits": [50]})
    a, b = gv.heatmap_pair(cells, other, top=2)
    assert a.index.tolist() == b.index.tolist() == ["c3", "c2"]
    assert a.columns.tolist() == b.columns.tolist() == ["files", "git", "net", "text"]
    assert b.loc["c3", "net"] == 50 and a.loc["c3", "net"] == 0
    fig = gv.coverage_heatmap(a, title="t", zmax=50)
    assert isinstance(fig.data[0], go.Heatmap) and fig.data[0].zmax == 50
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[a.to_numpy() == 0]).all()  # unvisited cells are blank
    assert np.nansum(z) == a.to_numpy().sum()
    pair = gv.coverage_heatmap_pair(a, b, ("left batch", "right batch"))
    assert len(pair.data) == 2 and list(pair.data[0].y) == list(pair.data[1].y)
    assert pair.layout.coloraxis.cmax == 50 and pair.data[0].coloraxis == pair.data[1].coloraxis == "coloraxis"
    assert [an.text for an in pair.layout.annotations] == ["left batch", "right batch"]


def test_heatmap_labels_stay_unique_after_truncation():
    m = pd.DataFrame([[1], [2]], index=["x" * 80 + "1", "x" * 80 + "2"], columns=["git"])
    fig = gv.coverage_heatmap(m, label_len=20)
    assert len(set(fig.data[0].y)) == 2


def _steps_frame(paths: list[list[tuple[str, str]]]) -> pd.DataFrame:
    rows = [{"path_id": f"p{i}", "idx": i, "step": j, "src_anchor": s, "skill_id": k, "dst_anchor": "z",
             "skill_name": k, "category": "c"} for i, p in enumerate(paths) for j, (s, k) in enumerate(p)]
    return pd.DataFrame(rows, columns=["path_id", "idx", "step", "src_anchor", "skill_id", "dst_anchor",
                                       "skill_name", "category"])


def test_metrics_known_values():
    uniform = np.array([3, 3, 3, 3])
    assert gv.normalized_entropy(uniform, 4) == pytest.approx(1.0)
    assert gv.gini(uniform, 4) == pytest.approx(0.0)
    assert gv.kl_to_uniform(uniform, 4) == pytest.approx(0.0)
    one = np.array([10])
    assert gv.normalized_entropy(one, 4) == pytest.approx(0.0)
    assert gv.gini(one, 4) == pytest.approx(3 / 4)
    assert gv.kl_to_uniform(one, 4) == pytest.approx(math.log(4))
    assert math.isnan(gv.gini(np.zeros(0, dtype=int), 4))
    with pytest.raises(ValueError):
        gv.gini(np.array([1, 1, 1]), 2)


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
    row = gv.batch_metrics({"b": steps}, universe).iloc[0]
    assert row["unique_pairs"] == coverage.unique_pairs(P) == len(set(sum(paths, [])))
    assert row["normalized_entropy"] == pytest.approx(coverage.normalized_entropy(P, universe))
    assert row["gini"] == pytest.approx(coverage.gini(P, universe))
    assert row["kl_to_uniform"] == pytest.approx(coverage.kl_to_uniform(P, universe))
    assert gv.coverage_growth(steps).tolist() == coverage.coverage_growth(P).tolist()


def test_growth_curves_and_universe():
    steps = _steps_frame([[("a", "1"), ("b", "2")], [("a", "1")], [("c", "1"), ("a", "2")]])
    g = gv.coverage_growth(steps, n_paths=5)
    assert g.tolist() == [2, 2, 4, 4, 4]
    curves = gv.growth_curves({"x": steps}, {"x": 5})
    assert curves["paths"].tolist() == [1, 2, 3, 4, 5]
    fig = gv.growth_figure(curves, universe=10)
    assert fig.data[0].name == "x"
    assert gv.effective_universe(10, steps) == (10, False)
    assert gv.effective_universe(3, steps) == (4, True)
    assert gv.effective_universe(None, steps) == (4, False)


def test_batch_labels_and_default_pair():
    t0 = datetime(2025, 5, 1, 12, 0, 0)
    b = pd.DataFrame({"batch_id": ["r2", "i2", "r1", "i1"],
                      "sampler": ["random-walk", "inverse-frequency", "random-walk", "inverse-frequency"],
                      "n_paths": [200] * 4, "paths": [200, 200, 150, 200],
                      "created_at": [t0 + timedelta(minutes=m) for m in (4, 3, 2, 1)]})
    labels = gv.batch_labels(b)
    assert labels["r1"] == "random-walk · 150 paths · 2025-05-01 12:02:00"
    assert gv.default_pair(b) == ("i2", "r2")
    assert gv.default_pair(b[b["sampler"] == "random-walk"]) == ("r2", "r1")
    assert gv.default_pair(b.iloc[0:0]) == (None, None)
