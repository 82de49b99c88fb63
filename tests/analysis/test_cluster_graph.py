"""The cluster graph behind the Graph page: aggregation, layout, ego networks, vis.js pages, paths."""
from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from analysis import cluster_graph as cg


def _graph(n: int = 30, seed: int = 1):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 120)
    dst = rng.integers(0, n, 120)
    keep = src != dst
    skill_edges = pd.DataFrame({"src": src[keep], "dst": dst[keep], "skill": np.arange(keep.sum())})
    bridge_edges = pd.DataFrame({"src": [0, 1, 0], "dst": [2, 3, 2]})
    edges = cg.cluster_edges(skill_edges, bridge_edges)
    nodes = cg.cluster_nodes(np.array([f"a{i}" for i in range(n)]), np.array([f"text {i}" for i in range(n)]), edges)
    return skill_edges, edges, nodes


def test_cluster_edges_aggregate_skills_and_keep_bridges_apart():
    skill_edges = pd.DataFrame({"src": [0, 0, 1], "dst": [1, 1, 2], "skill": [0, 1, 2]})
    e = cg.cluster_edges(skill_edges, pd.DataFrame({"src": [0, 0], "dst": [1, 1]}))
    assert sorted(map(tuple, e[["src", "dst", "kind", "weight"]].to_numpy().tolist())) == [
        (0, 1, "bridge", 1), (0, 1, "skill", 2), (1, 2, "skill", 1)]
    assert cg.node_degrees(4, e).tolist() == [1, 2, 1, 0]


def test_top_subgraph_and_layout():
    _, edges, nodes = _graph()
    top, sub = cg.top_subgraph(nodes, edges, max_nodes=10)
    assert len(top) == 10
    assert top["degree"].min() >= nodes["degree"].sort_values(ascending=False).iloc[9]
    assert sub["src"].isin(top["node"]).all() and sub["dst"].isin(top["node"]).all()
    a, b = cg.with_layout(top, sub), cg.with_layout(top, sub)
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
    xy = cg.with_layout(nodes, edges).set_index("node")[["x", "y"]]
    cycle, tri, lone = xy.loc[0:19], xy.loc[20:22], xy.loc[23:25]

    def box(f):
        return f["x"].min(), f["x"].max(), f["y"].min(), f["y"].max()

    def overlap(a, b):
        return not (a[1] < b[0] or b[1] < a[0] or a[3] < b[2] or b[3] < a[2])
    assert not overlap(box(cycle), box(tri))
    assert all(not overlap(box(cycle), box(lone.iloc[[i]])) for i in range(3))
    # the biggest component gets the biggest box
    assert (box(cycle)[1] - box(cycle)[0]) > (box(tri)[1] - box(tri)[0])


def _core(rng, n=280):
    """Shaped like the dev corpus's 272-cluster core: sparse and tree-like."""
    src = list(range(1, n)) + rng.integers(0, n, 80).tolist()
    return src, [int(rng.integers(0, i)) for i in range(1, n)] + rng.integers(0, n, 80).tolist(), n


def _ego(rng, n=90):
    """Shaped like a 2-hop ego network there: a centre, 20 neighbours with leaves, cross edges."""
    src, dst = [0] * 20 + [int(rng.integers(1, 21)) for _ in range(21, n)], list(range(1, n))
    cross = rng.integers(1, n, (25, 2))
    return src + cross[:, 0].tolist(), dst + cross[:, 1].tolist(), n


@pytest.mark.parametrize("shape,limit_s", [(_core, 1.5), (_ego, 0.8)], ids=["core", "ego"])
def test_a_dev_sized_graph_is_laid_out_in_a_moment(shape, limit_s):
    # Kamada-Kawai took 4-10 s on the core (the Graph page's first render) and 1.7-3 s on an
    # ego network (each pick in the ego picker); a spring layout a tenth of a second.
    src, dst, n = shape(np.random.default_rng(3))
    edges = pd.DataFrame({"src": src, "dst": dst, "kind": "skill", "weight": 1})
    edges = edges[edges["src"] != edges["dst"]]
    nodes = pd.DataFrame({"node": range(n), "canonical": [f"t{i}" for i in range(n)], "degree": 1})
    cg.with_layout(nodes.head(3), edges.head(2))   # imports and first-call costs out of the timing
    start = time.perf_counter()
    xy = cg.with_layout(nodes, edges)[["x", "y"]]
    assert time.perf_counter() - start < limit_s
    assert np.isfinite(xy.to_numpy()).all() and not xy.duplicated().any()


def test_declutter_labels_skips_overlapping_labels_and_labels_past_the_border():
    nodes = pd.DataFrame({"node": [0, 1, 2, 3, 4, 5], "canonical": ["a long enough label"] * 6,
                          "degree": [9, 8, 7, 1, 0, 0], "x": [100.0, 105.0, 300.0, 100.0, 0.0, 400.0],
                          "y": [0.0, 0.0, 0.0, 200.0, 100.0, 100.0]})
    assert cg.declutter_labels(nodes, top=10) == {0, 2, 3}  # 1 sits on 0's label; 4 and 5 would be cut off
    assert cg.declutter_labels(nodes, top=2) == {0, 2}
    assert cg.declutter_labels(nodes, top=10, keep=[1, 5]) == {1, 5, 2, 3}  # kept nodes come first, always


def test_truncated_labels_stay_distinct_and_are_spaced_by_the_text_drawn():
    # The walk saw several nodes labelled "A log file is in the…", overlapping one another.
    texts = ["A log file is in the working directory.", "A log file is in the /var/log folder, rotated daily.",
             "A log file is in the working directory. It has errors.", "Logs rotated", "Logs rotated"]
    labels = cg.distinct_labels(texts)
    assert len(set(labels[:4])) == 4 and labels[3] == labels[4] == "Logs rotated"  # same text, same label
    assert labels[0] == "A log file… working directory." and labels[1].startswith("A log file… /var/log")
    assert max(map(len, labels)) <= cg.DISTINCT_LABEL_CHARS
    # where the group's tails still read alike, the smaller group parts further on; a cut word is numbered
    nested = cg.distinct_labels(["A log file is in the working directory with 40 lines",
                                 "A log file is in the working directory with 41 lines",
                                 "A log file is in the /var/log directory with 3 lines",
                                 "/a/very/long/path/name/that/goes/on/a.txt", "/a/very/long/path/name/that/goes/on/b.txt"])
    assert nested[:2] == ["A log file… 40 lines", "A log file… 41 lines"]
    assert nested[2].startswith("A log file… /var/log") and nested[4] == nested[3] + " (2)"
    nodes = pd.DataFrame({"node": range(5), "canonical": texts[:3] + ["a", "b"], "degree": [1, 1, 1, 0, 0],
                          "x": [100.0, 400.0, 700.0, 0.0, 800.0], "y": [0.0] * 5})  # a and b: the borders
    data = json.loads(cg.pyvis_html(nodes, pd.DataFrame(columns=["src", "dst", "kind", "weight"]), label_top=3)
                      .split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    shown = [d["label"] for d in data if d["label"].strip()]
    assert len(shown) == len(set(shown)) == 3
    # a box as wide as the label drawn (not the canonical text cut to LABEL_CHARS), below the dot's radius
    wide = pd.DataFrame({"node": [0, 1, 2, 3, 4], "canonical": ["x"] * 5, "degree": [3, 2, 1, 0, 0],
                         "x": [100.0, 330.0, 560.0, -200.0, 900.0], "y": [0.0] * 5})
    assert cg.declutter_labels(wide, top=2, labels=["y" * 36] * 3 + ["a", "b"]) == {0, 2}
    assert cg.declutter_labels(wide, top=3, labels=["y" * 20] * 3 + ["a", "b"]) == {0, 1, 2}
    stacked = pd.DataFrame({"node": [0, 1, 2, 3], "canonical": ["a label"] * 2 + ["a", "b"], "degree": [2, 1, 0, 0],
                            "x": [100.0, 100.0, 0.0, 200.0], "y": [0.0, 20.0, 0.0, 0.0],
                            "radius": [16.0, 6.0, 1.0, 1.0]})
    assert 1 not in cg.declutter_labels(stacked, top=4)  # 0's label hangs below its big dot, onto 1's


def test_ego_nodes_respects_hops_cap_and_order():
    edges = pd.DataFrame({"src": [0, 0, 1, 2, 3, 5], "dst": [1, 2, 3, 4, 5, 6],
                          "kind": "skill", "weight": 1})
    assert cg.ego_nodes(edges, 0, hops=1) == [0, 1, 2]
    assert set(cg.ego_nodes(edges, 0, hops=2)) == {0, 1, 2, 3, 4}
    assert cg.ego_nodes(edges, 3, hops=1) == [3, 1, 5]  # direction ignored
    assert cg.ego_nodes(edges, 0, hops=2, cap=3) == [0, 1, 2]
    deg = np.array([2, 2, 2, 2, 1, 2, 1])
    deg[2] = 9
    assert cg.ego_nodes(edges, 0, hops=1, degrees=deg) == [0, 2, 1]  # higher degree first


def test_pyvis_html_is_self_contained_precomputed_and_styles_edge_kinds(monkeypatch):
    from pyvis.network import Network

    def no_add_edge(*a, **k):
        raise AssertionError("add_edge is quadratic: fill net.edges directly")
    monkeypatch.setattr(Network, "add_edge", no_add_edge)
    _, edges, nodes = _graph()
    nodes = cg.with_layout(nodes, edges)
    page = cg.pyvis_html(nodes, edges, height=500, highlight_nodes=[0])
    assert "new vis.Network" in page and "vis-network" in page.lower()
    assert "cdn.jsdelivr" not in page and "bootstrap" not in page.lower()
    options = json.loads(page.split("var options = ", 1)[1].split(";\n", 1)[0])
    assert options["physics"]["enabled"] is False
    data = json.loads(page.split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert len(data) == len(nodes)
    assert {d["id"] for d in data} == set(nodes["node"])
    first = next(d for d in data if d["id"] == int(nodes.iloc[0]["node"]))
    assert (first["x"], first["y"]) == (float(nodes.iloc[0]["x"]), float(nodes.iloc[0]["y"]))
    assert first["color"] == cg.HIGHLIGHT
    e = json.loads(page.split("edges = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    kinds = {(d["dashes"], d["color"]) for d in e}
    assert kinds == {(False, cg.SKILL_EDGE_COLOR), (True, cg.BRIDGE_EDGE_COLOR)}
    assert len(e) == len(edges)


def test_node_labels_are_short_whole_words_and_the_hover_holds_the_full_text():
    text = ("Calibration state written to ~/.config/calib/state.json after every sensor sweep, with the "
            "previous file kept as a timestamped backup next to it so that a bad run can be rolled back by hand "
            "when the sensors drift between sweeps")
    assert cg.node_label(text) == "Calibration state…"  # not cut inside "written" or a path
    assert cg.node_label("Logs rotated") == "Logs rotated"
    assert cg.node_label("~/.config/calib/state.json is written") == "~/.config/calib/state.j…"
    nodes = pd.DataFrame({"node": [0, 1, 2], "canonical": [text, "short", "other"], "degree": [3, 1, 1],
                          "x": [300.0, 0.0, 600.0], "y": [0.0, 0.0, 0.0]})
    edges = pd.DataFrame({"src": [0], "dst": [1], "kind": ["skill"], "weight": [1]})
    data = json.loads(cg.pyvis_html(nodes, edges).split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    node = next(d for d in data if d["id"] == 0)
    assert node["label"] == "Calibration state…" and len(node["label"]) <= cg.LABEL_CHARS
    hover = node["title"].split("\n(cluster", 1)[0]
    assert " ".join(hover.split()) == text  # all of it, on wrapped lines
    assert max(len(line) for line in hover.splitlines()) <= cg.HOVER_WIDTH


def test_path_table_and_drawing():
    steps = pd.DataFrame({"step": [1, 0, 2], "src_anchor": ["b", "a", "c"], "dst_anchor": ["c", "b", "d"],
                          "skill_id": ["k2", "k1", "k3"], "skill_name": ["two", "one", "three"],
                          "category": ["git", "files", "text"], "idx": 0})
    canon = {"a": "start", "b": "middle", "c": "later"}
    t = cg.path_table(steps, canon, current=1)
    assert t["step"].tolist() == [0, 1, 2] and t["now"].tolist() == ["", "▶", ""]
    assert t.loc[0, "from"] == "start" and t.loc[2, "to"].startswith("(gone")
    nodes, edges = cg.path_drawing(steps, canon, upto=1)
    assert nodes["canonical"].tolist() == ["start", "middle", "later"]
    assert edges[["src", "dst"]].to_numpy().tolist() == [[0, 1], [1, 2]]
    assert edges["label"].iloc[-1].startswith("1. two")
    assert cg.pyvis_html(nodes, edges, edge_labels=True).count('"label": "1. two"') == 1
