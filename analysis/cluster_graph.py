"""Data shaping and vis.js pages for the Graph page.

Cluster-level edges and degrees aggregated from the scenario graph, the top subgraph and
its precomputed layout, ego networks, the self-contained pyvis/vis.js HTML that draws
them, and one sampled path as a table and as a drawing. Pure functions of DataFrames and
arrays: nothing here reads the store or imports Streamlit, so notebooks can use it too.
"""
from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from analysis.display import HIGHLIGHT, short

MAX_GRAPH_NODES = 500        # cluster-level meta-graph
MAX_EGO_NODES = 150
# Kamada-Kawai spaces nodes evenly but its solver is slow and erratic past a few dozen nodes:
# on the dev corpus's graph 1-3.5 s for 55-90-node ego networks, 6 s at 150, 10 s for the
# 272-node core (a spring layout: 0.02-0.35 s). Above this size the spring layout does it.
KK_MAX_NODES = 40
LABEL_CHARS = 24             # a node's label: whole words up to this length; hover shows the full text
DISTINCT_LABEL_CHARS = 36    # a label kept apart from another it was cut alike to (distinct_labels)
HOVER_WIDTH = 70             # characters per line of the hover text (vis.js tooltips do not wrap)

SKILL_EDGE_COLOR = "#4a78b5"
BRIDGE_EDGE_COLOR = "#e0801e"
NODE_COLOR = "#9ab7d9"


# --- the cluster graph -----------------------------------------------------------------------

def cluster_edges(skill_edges: pd.DataFrame, bridge_edges: pd.DataFrame) -> pd.DataFrame:
    """Cluster-level edges: one row per (src, dst, kind) with ``weight`` = how many skills
    (kind 'skill') or 1 (kind 'bridge')."""
    s = (skill_edges.groupby(["src", "dst"]).size().rename("weight").reset_index().assign(kind="skill")
         if len(skill_edges) else pd.DataFrame(columns=["src", "dst", "weight", "kind"]))
    b = (bridge_edges[["src", "dst"]].drop_duplicates().assign(weight=1, kind="bridge")
         if len(bridge_edges) else pd.DataFrame(columns=["src", "dst", "weight", "kind"]))
    out = pd.concat([s, b], ignore_index=True)
    return out.astype({"src": np.int64, "dst": np.int64, "weight": np.int64})


def node_degrees(n_nodes: int, edges: pd.DataFrame) -> np.ndarray:
    """Distinct neighbours (in or out, any kind) of every node."""
    if edges.empty:
        return np.zeros(n_nodes, dtype=np.int64)
    pairs = pd.DataFrame({"a": np.concatenate([edges["src"], edges["dst"]]),
                          "b": np.concatenate([edges["dst"], edges["src"]])}).drop_duplicates()
    return np.bincount(pairs["a"].to_numpy(np.int64), minlength=n_nodes)


def cluster_nodes(anchors: np.ndarray, canonical: np.ndarray, edges: pd.DataFrame) -> pd.DataFrame:
    deg = node_degrees(len(anchors), edges)
    return pd.DataFrame({"node": np.arange(len(anchors)), "anchor": anchors, "canonical": canonical,
                         "degree": deg})


def top_subgraph(nodes: pd.DataFrame, edges: pd.DataFrame, max_nodes: int = MAX_GRAPH_NODES
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``max_nodes`` nodes of highest degree (ties: lower node id) and the edges among them."""
    top = nodes.sort_values(["degree", "node"], ascending=[False, True]).head(max_nodes)
    keep = set(top["node"])
    sub = edges[edges["src"].isin(keep) & edges["dst"].isin(keep)]
    return top.sort_values("node").reset_index(drop=True), sub.reset_index(drop=True)


def _component_layout(G: nx.Graph, seed: int) -> np.ndarray:
    """Positions of one connected component in a box whose longer side is 1."""
    nodes = list(G.nodes)
    n = len(nodes)
    if n == 1:
        return np.zeros((1, 2))
    if n == 2:
        return np.array([[0.0, 0.0], [1.0, 0.0]])
    if n <= KK_MAX_NODES:
        pos = nx.kamada_kawai_layout(G)  # even spacing; deterministic (circular start)
    else:
        pos = nx.spring_layout(G, seed=seed, k=1.5 / math.sqrt(n), iterations=80)
    xy = np.array([pos[v] for v in nodes], dtype=float)
    xy -= xy.min(axis=0)
    return xy / (xy.max() or 1.0)


def _shelf(boxes: list[tuple[float, float]], row_width: float, gap: float):
    x = y = row_h = width = 0.0
    origins = []
    for w, h in boxes:
        if x > 0 and x + w > row_width:
            y += row_h + gap
            x = row_h = 0.0
        origins.append((x, y))
        x += w + gap
        row_h = max(row_h, h)
        width = max(width, x - gap)
    return origins, width, y + row_h


def with_layout(nodes: pd.DataFrame, edges: pd.DataFrame, seed: int = 7, width: float = 1100.0,
                height: float = 620.0, margin: float = 30.0) -> pd.DataFrame:
    """Add pixel coordinates ``x``, ``y`` (computed here, once, so that vis.js draws with
    physics off). Each connected component is laid out on its own (Kamada–Kawai up to
    ``KK_MAX_NODES`` nodes, spring layout beyond) in a box of side ∝ size^0.6; the boxes, largest first, are
    packed in rows to the canvas's aspect ratio and the whole scaled to ``width`` × ``height``
    (an axis stretched by at most 2x). A single spring layout of everything would push the
    small components into a ring around a squeezed core."""
    G = nx.Graph()
    G.add_nodes_from(nodes["node"].tolist())
    G.add_edges_from((a, b) for a, b in zip(edges["src"].tolist(), edges["dst"].tolist()) if a != b)
    if len(G) == 0:
        return nodes.assign(x=pd.Series(dtype=float), y=pd.Series(dtype=float))
    comps = sorted((sorted(c) for c in nx.connected_components(G)), key=lambda c: (-len(c), c[0]))
    local, boxes = [], []
    for comp in comps:
        xy = _component_layout(G.subgraph(comp), seed) * len(comp) ** 0.6  # big components get room
        local.append(xy)
        span = xy.max(axis=0) if len(comp) > 1 else np.zeros(2)
        boxes.append((max(float(span[0]), 0.5), max(float(span[1]), 0.5)))
    gap = 0.6
    aspect = (width - 2 * margin) / (height - 2 * margin)
    widest, total = max(w for w, _ in boxes), sum(w + gap for w, _ in boxes)
    best = None
    for row_width in np.linspace(widest, max(widest, total), 60):
        origins, w, h = _shelf(boxes, float(row_width), gap)
        score = abs(math.log(max(w, 1e-9) / max(h, 1e-9) / aspect))
        if best is None or score < best[0] - 1e-9:
            best = (score, origins, w, h)
    _, origins, w, h = best
    # fill the canvas, stretching one axis by at most 2x
    sx, sy = (width - 2 * margin) / max(w, 1e-9), (height - 2 * margin) / max(h, 1e-9)
    sx, sy = min(sx, 2 * sy), min(sy, 2 * sx)
    pos: dict[int, tuple[float, float]] = {}
    for comp, xy, (ox, oy) in zip(comps, local, origins):
        for v, (px_, py_) in zip(comp, xy):
            pos[v] = (margin + (ox + px_) * sx, margin + (oy + py_) * sy)
    xy = np.array([pos[n] for n in nodes["node"]], dtype=float)
    return nodes.assign(x=xy[:, 0].round(1), y=xy[:, 1].round(1))


def ego_nodes(edges: pd.DataFrame, center: int, hops: int = 2, cap: int = MAX_EGO_NODES,
              degrees: np.ndarray | None = None) -> list[int]:
    """Nodes within ``hops`` (ignoring direction) of ``center``, breadth first; within a hop
    higher-degree neighbours come first; at most ``cap`` nodes, center first."""
    adj: dict[int, set[int]] = {}
    for a, b in zip(edges["src"].tolist(), edges["dst"].tolist()):
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    seen = [center]
    seen_set = {center}
    frontier = [center]
    for _ in range(hops):
        nxt = []
        for u in frontier:
            nb = [v for v in adj.get(u, ()) if v not in seen_set]
            nb.sort(key=lambda v: (-(degrees[v] if degrees is not None else 0), v))
            for v in nb:
                if len(seen) >= cap:
                    return seen
                seen.append(v)
                seen_set.add(v)
                nxt.append(v)
        frontier = nxt
    return seen


def _edge_style(kind: str, weight: int, highlight: bool = False) -> dict:
    if kind == "bridge":
        style = dict(color=BRIDGE_EDGE_COLOR, dashes=True, width=1.5,
                     smooth={"enabled": True, "type": "curvedCW", "roundness": 0.15})
    else:
        style = dict(color=SKILL_EDGE_COLOR, dashes=False, width=1 + min(4.0, math.log2(max(weight, 1))),
                     smooth={"enabled": False})
    if highlight:
        style.update(color=HIGHLIGHT, width=4)
    return style


def node_label(text: object, n: int = LABEL_CHARS) -> str:
    """A short label of whole words (at most ``n`` characters, "…" when cut); a first word
    longer than that (a path, say) is cut inside. Cutting mid-word gave labels like "calib/sta…"."""
    s = short(text, 10**9)
    if len(s) <= n:
        return s
    out = ""
    for word in s.split(" "):
        if len(out) + len(word) + (1 if out else 0) > n - 1:
            break
        out = f"{out} {word}" if out else word
    return (out or s[: n - 1]).rstrip(" ,.;:") + "…"


def distinct_labels(texts: Sequence[object], n: int = LABEL_CHARS, most: int = DISTINCT_LABEL_CHARS) -> list[str]:
    """:func:`node_label` of each text, with texts that differ kept apart: where several cut to
    the same label ("A log file is in the…" for every log-file scenario), each shows its first
    words shortened, then its own words from where the group's texts part ("A log file… rotated
    daily, gzipped"), in at most ``most`` characters; where those still read alike, from where
    that smaller group parts; texts that still read alike are numbered."""
    full = [short(t, 10**9) for t in texts]
    words = [t.split(" ") for t in full]
    labels = [node_label(t, n) for t in full]

    def part(idx: list[int], k0: int) -> None:
        k = k0
        while all(len(words[i]) > k for i in idx) and len({words[i][k] for i in idx}) == 1:
            k += 1
        if k == k0:
            return  # they part inside a word cut short: nothing more to show apart (numbered below)
        head = node_label(" ".join(words[idx[0]][:k]), max(n // 2, 8)).rstrip("…") + "…" if k else ""
        for i in idx:
            if words[i][k:]:
                labels[i] = f"{head} {node_label(' '.join(words[i][k:]), most - len(head) - 1)}".strip()
        for sub in _alike(idx):
            part(sub, k)

    def _alike(idx: list[int]) -> list[list[int]]:
        groups: dict[str, list[int]] = {}
        for i in idx:
            groups.setdefault(labels[i], []).append(i)
        return [g for g in groups.values() if len({full[i] for i in g}) > 1]

    for group in _alike(list(range(len(full)))):
        part(group, 0)
    seen: dict[str, int] = {}
    for i, lab in enumerate(labels):
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1 and full[i] != full[labels.index(lab)]:
            labels[i] = f"{lab} ({seen[lab]})"
    return labels


def hover_text(text: object, width: int = HOVER_WIDTH) -> str:
    """The full text, wrapped into lines (vis.js shows a tooltip string's newlines)."""
    return textwrap.fill(short(text, 10**9), width=width, break_long_words=True) or " "


def declutter_labels(nodes: pd.DataFrame, top: int, keep: Iterable[int] = (), chars: int = LABEL_CHARS,
                     char_px: float = 7.0, line_px: float = 16.0, labels: Sequence[str] | None = None,
                     gap_px: float = 6.0) -> set[int]:
    """Which nodes get a text label: the highest-degree ones (``keep`` first), at most ``top``,
    skipping any whose label box (drawn under the node, below its ``radius`` when the frame has
    one, at the layout's pixel scale, ``gap_px`` apart) would overlap a label already placed or
    reach past the outermost nodes (vis.js fits the view to the nodes, so such a label would be
    cut off). ``labels``: the texts drawn, one per row (else the canonical text cut to ``chars``)."""
    if nodes.empty:
        return set()
    lo, hi = float(nodes["x"].min()), float(nodes["x"].max())
    keep = [int(k) for k in keep]
    order = nodes.assign(_k=~nodes["node"].isin(keep)).sort_values(["_k", "degree", "node"],
                                                                     ascending=[True, False, True])
    width = (pd.Series([len(str(t)) for t in labels], index=nodes.index) if labels is not None
             else nodes["canonical"].map(lambda t: min(len(str(t)), chars)))
    order = order.assign(label_w=width.loc[order.index])
    boxes: list[tuple[float, float, float, float]] = []
    out: set[int] = set()
    for row in order.itertuples(index=False):
        if len(out) >= top:
            break
        w = (char_px * row.label_w + gap_px) / 2
        below = float(getattr(row, "radius", 6.0)) + 2
        box = (row.x - w, row.x + w, row.y + below, row.y + below + line_px)
        clash = any(not (box[1] < b[0] or b[1] < box[0] or box[3] < b[2] or b[3] < box[2]) for b in boxes)
        if (clash or box[0] < lo - 20 or box[1] > hi + 20) and int(row.node) not in keep:
            continue
        boxes.append(box)
        out.add(int(row.node))
    return out


@functools.lru_cache(maxsize=None)
def _templates(template_dir: str):
    """One jinja environment for pyvis's page template: pyvis gives every Network its own,
    which compiles the template again on each drawing (~0.1-0.2 s each, three per Graph page)."""
    from jinja2 import Environment, FileSystemLoader
    return Environment(loader=FileSystemLoader(template_dir))


def pyvis_html(nodes: pd.DataFrame, edges: pd.DataFrame, height: int = 620, label_top: int = 40,
               highlight_nodes: Iterable[int] = (), highlight_edges: Iterable[int] = (),
               edge_labels: bool = False, zoom_out: float = 0.9) -> str:
    """A self-contained vis.js page (pyvis template, scripts inlined, no CDN) for nodes with
    precomputed ``x``/``y`` and physics off.

    ``nodes``: node, canonical, x, y, and optionally degree (size) and label.
    ``edges``: src, dst, kind ('skill' | 'bridge'), weight, and optionally label/title.
    Nodes and edges are filled into ``net.nodes`` / ``net.edges`` directly
    (``Network.add_edge`` is quadratic). At most ``label_top`` nodes get a text label
    (:func:`declutter_labels`); every node shows its full text on hover.
    """
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", bgcolor="#ffffff")
    net.templateEnv = _templates(net.template_dir)
    hl_nodes = {int(n) for n in highlight_nodes}
    hl_edges = {int(i) for i in highlight_edges}
    deg = nodes["degree"].to_numpy() if "degree" in nodes else np.ones(len(nodes))
    max_deg = max(float(deg.max()) if len(deg) else 1.0, 1.0)
    radius = 5 + 11 * np.sqrt(deg.astype(float) / max_deg)
    texts = distinct_labels(nodes["canonical"].tolist())  # labels cut to the same words are kept apart
    labelled = declutter_labels(nodes.assign(degree=deg, radius=radius), label_top, keep=hl_nodes, labels=texts)
    for i, row in enumerate(nodes.itertuples(index=False)):
        n = int(row.node)
        label = getattr(row, "label", None)
        if label is None:
            label = texts[i] if n in labelled or n in hl_nodes else " "
        node = {"id": n, "label": label, "x": float(row.x), "y": float(row.y),
                "title": f"{hover_text(row.canonical)}\n(cluster {n}, degree {int(deg[i])})"}
        if getattr(row, "shape", "dot") == "box":  # text inside, wrapped
            node.update(shape="box", widthConstraint={"maximum": 170}, margin=8,
                        color={"background": HIGHLIGHT if n in hl_nodes else "#e3ecf7",
                               "border": HIGHLIGHT if n in hl_nodes else NODE_COLOR},
                        font={"size": 13, "color": "#fff" if n in hl_nodes else "#222"})
        else:
            node.update(shape="dot", size=float(radius[i]),
                        color=HIGHLIGHT if n in hl_nodes else NODE_COLOR,
                        font={"size": 14 if n in hl_nodes else 12, "color": "#222"})
        net.nodes.append(node)
    for i, row in enumerate(edges.itertuples(index=False)):
        e = {"from": int(row.src), "to": int(row.dst), "arrows": "to",
             **_edge_style(row.kind, int(row.weight), i in hl_edges)}
        title = getattr(row, "title", None)
        e["title"] = title if title else (f"bridge: {int(row.src)} → {int(row.dst)}" if row.kind == "bridge"
                                          else f"{int(row.weight)} skill(s): {int(row.src)} → {int(row.dst)}")
        label = getattr(row, "label", None)
        if edge_labels and label:
            e["label"] = label
            e["font"] = {"size": 12, "align": "horizontal", "color": "#333", "background": "#ffffff",
                         "strokeWidth": 0}
        net.edges.append(e)
    net.options = {
        "physics": {"enabled": False},
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": len(edges) > 2000,
                        "navigationButtons": False},
        "edges": {"arrows": {"to": {"enabled": True, "scaleFactor": 0.5}}},
        "nodes": {"borderWidth": 1}}
    page = net.generate_html()
    # The template links Bootstrap from a CDN and adds empty headings; neither is needed and
    # a CDN may be unreachable (the workbench runs offline).
    page = re.sub(r"<link\s[^>]*bootstrap[^>]*>", "", page, flags=re.S)
    page = re.sub(r"<script\s[^>]*bootstrap[^>]*>\s*</script>", "", page, flags=re.S)
    page = re.sub(r"<center>\s*<h1>\s*</h1>\s*</center>", "", page)
    # Keep the canvas inside the iframe, and after vis.js fits the view zoom out a little so
    # that labels of nodes on the border are not cut off.
    page = page.replace("</head>", "<style>html,body{margin:0;overflow:hidden} #mynetwork{box-sizing:border-box;"
                        "float:none !important} .card{border:0}</style></head>", 1)
    page = page.replace("</body>", "<script>if (typeof network !== 'undefined') {network.once('afterDrawing', "
                        f"function() {{network.moveTo({{scale: network.getScale() * {zoom_out}}});}});}}"
                        "</script></body>", 1)
    return page


# --- one sampled path ------------------------------------------------------------------------

def path_table(steps: pd.DataFrame, canonical_by_anchor: Mapping[str, str], current: int | None = None
               ) -> pd.DataFrame:
    """One path's steps as text: step, from, skill, category, to, and a marker on ``current``."""
    s = steps.sort_values("step")
    out = pd.DataFrame({
        "step": s["step"].astype(int).to_numpy(),
        "from": [canonical_by_anchor.get(a, f"(gone: {a})") for a in s["src_anchor"]],
        "skill": s["skill_name"].to_numpy(),
        "category": s["category"].to_numpy(),
        "to": [canonical_by_anchor.get(a, f"(gone: {a})") for a in s["dst_anchor"]]})
    out.insert(0, "now", ["▶" if current is not None and st == current else "" for st in out["step"]])
    return out


def path_drawing(steps: pd.DataFrame, canonical_by_anchor: Mapping[str, str], upto: int
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes and edges of a path's steps 0..upto for :func:`pyvis_html`: text boxes laid out
    left to right in a zigzag (edge labels fall between the rows); the last drawn step's
    edge is the one to highlight (index -1)."""
    s = steps.sort_values("step")
    s = s[s["step"] <= upto]
    order: list[str] = []
    for a, b in zip(s["src_anchor"], s["dst_anchor"]):
        for x in (a, b):
            if x not in order:
                order.append(x)
    idx = {a: i for i, a in enumerate(order)}
    nodes = pd.DataFrame({
        "node": np.arange(len(order)), "canonical": [canonical_by_anchor.get(a, a) for a in order],
        "x": [i * 180.0 for i in range(len(order))], "y": [(i % 2) * 170.0 for i in range(len(order))],
        "degree": np.ones(len(order)), "shape": "box"})
    nodes["label"] = [f"{i}: {short(t, 80)}" for i, t in enumerate(nodes["canonical"])]
    edges = pd.DataFrame({
        "src": [idx[a] for a in s["src_anchor"]], "dst": [idx[b] for b in s["dst_anchor"]],
        "kind": "skill", "weight": 1,
        "label": [f"{int(k)}. {short(n, 30)}" for k, n in zip(s["step"], s["skill_name"])],
        "title": [f"step {int(k)}: {n} ({c})" for k, n, c in zip(s["step"], s["skill_name"], s["category"])]})
    return nodes, edges
