"""Data shaping and figures for the Scenarios, Graph and Coverage pages.

Pure functions of DataFrames and arrays: plotly figures for the scenario map and the
coverage heatmaps, pyvis/vis.js HTML for the cluster graph, and path / coverage frames.
Nothing here reads the store or imports Streamlit, so notebooks can use it too.

Coverage metrics over a ``path_steps`` frame count a step ``u --s--> v`` as the pair
(src_anchor, skill_id), the same definition as :mod:`analysis.coverage` uses over sampler
output; logarithms are natural (KL in nats).
"""
from __future__ import annotations

import html as html_mod
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime

import networkx as nx
import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

MAX_MAP_POINTS = 20_000      # drawn points on the scenario map (DESIGN §8: lasso stays usable)
WEBGL_FROM = 2_000           # Scattergl above this many points
MAX_GRAPH_NODES = 500        # cluster-level meta-graph
MAX_EGO_NODES = 150
HEATMAP_ROWS = 40

SKILL_EDGE_COLOR = "#4a78b5"
BRIDGE_EDGE_COLOR = "#e0801e"
NODE_COLOR = "#9ab7d9"
HIGHLIGHT = "#d62728"
REST_COLOR = "#c8c8c8"
TOPIC_PALETTE = px.colors.qualitative.Dark24 + px.colors.qualitative.Light24


def short(text: object, n: int = 60) -> str:
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


# --- scenario map --------------------------------------------------------------------------

def map_points(members: pd.DataFrame, selected_cluster: int | None = None, max_points: int = MAX_MAP_POINTS,
               seed: int = 0) -> pd.DataFrame:
    """The members to draw: those with a projection, at most ``max_points`` of them.

    Beyond the cap a deterministic sample (fixed seed, same input → same points) is drawn,
    and the selected cluster's members are always kept.
    """
    pts = members[members["x"].notna() & members["y"].notna()].reset_index(drop=True)
    if len(pts) <= max_points:
        return pts
    keep = np.zeros(len(pts), dtype=bool)
    if selected_cluster is not None:
        keep |= (pts["cluster_id"] == selected_cluster).to_numpy()
    rest = np.flatnonzero(~keep)
    room = max(0, max_points - int(keep.sum()))
    if room and len(rest):
        rng = np.random.default_rng(seed)
        keep[rng.choice(rest, min(room, len(rest)), replace=False)] = True
    return pts[keep].reset_index(drop=True)


def _hover(points: pd.DataFrame) -> list[str]:
    return [f"<b>{html_mod.escape(short(t, 90))}</b><br>{html_mod.escape(short(s, 50))} · {r}<br>cluster {c}"
            for t, s, r, c in zip(points["text"], points["skill_name"], points["role"], points["cluster_id"])]


def scenario_map(points: pd.DataFrame, color_by: str = "topic", selected_cluster: int | None = None,
                 height: int = 620) -> go.Figure:
    """UMAP scatter of scenarios, one trace per colour; every point carries
    ``customdata = [scenario_id, cluster_id]`` (point indices are per trace)."""
    if color_by not in ("topic", "cluster"):
        raise ValueError("color_by is 'topic' or 'cluster'")
    trace_cls = go.Scattergl if len(points) > WEBGL_FROM else go.Scatter
    fig = go.Figure()
    pts = points.assign(_hover=_hover(points)) if len(points) else points.assign(_hover=[])

    def add(frame: pd.DataFrame, name: str, color: str, size: float, opacity: float) -> None:
        fig.add_trace(trace_cls(
            x=frame["x"], y=frame["y"], mode="markers", name=name,
            marker=dict(color=color, size=size, opacity=opacity, line=dict(width=0)),
            customdata=np.column_stack([frame["scenario_id"].astype(str).to_numpy(),
                                        frame["cluster_id"].astype(int).to_numpy()]).tolist() if len(frame) else [],
            text=frame["_hover"], hovertemplate="%{text}<extra></extra>"))

    if color_by == "topic":
        topics = pts["topic"].fillna(-1).astype(int)
        for i, t in enumerate(sorted(topics.unique(), key=lambda t: (t < 0, t))):
            part = pts[topics == t]
            if t < 0:
                add(part, "no topic", REST_COLOR, 5, 0.6)
            else:
                add(part, f"topic {t}", TOPIC_PALETTE[t % len(TOPIC_PALETTE)], 6, 0.8)
    else:
        chosen = (pts["cluster_id"] == selected_cluster) if selected_cluster is not None else \
            pd.Series(False, index=pts.index)
        add(pts[~chosen], "other clusters", REST_COLOR, 5, 0.6)
        if chosen.any():
            add(pts[chosen], f"cluster {selected_cluster}", HIGHLIGHT, 10, 1.0)
    fig.update_layout(height=height, dragmode="lasso", uirevision="scenario_map",
                      margin=dict(l=0, r=0, t=10, b=0), legend=dict(itemsizing="constant", font=dict(size=11)),
                      xaxis=dict(showticklabels=False, title="", zeroline=False),
                      yaxis=dict(showticklabels=False, title="", zeroline=False), plot_bgcolor="#fafafa")
    return fig


def _field(obj: object, key: str, default=None):
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    try:
        return obj[key]  # Streamlit's AttributeDictionary
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, default)


def _custom(point: object) -> tuple[str, int] | None:
    cd = _field(point, "customdata")
    if cd is None:
        cd = _field(point, "custom_data")
    if cd is None:
        return None
    if isinstance(cd, Mapping):  # it may come back as {"0": ..., "1": ...}
        vals = [cd[k] for k in sorted(cd, key=lambda k: int(k))]
    else:
        vals = list(cd)
    if len(vals) < 2:
        return None
    try:
        return str(vals[0]), int(float(vals[1]))
    except (TypeError, ValueError):
        return None


def selection_points(event: object) -> list[tuple[str, int]]:
    """(scenario_id, cluster_id) of every selected point of a plotly_chart selection event
    (the return value of ``st.plotly_chart`` or its session-state entry)."""
    sel = _field(event, "selection")
    points = _field(sel, "points") or []
    out = [c for c in (_custom(p) for p in points) if c is not None]
    return list(dict.fromkeys(out))


def selected_clusters(event: object, members: pd.DataFrame) -> list[int]:
    """The current clusters of the selected scenarios (read through their ids, which stay
    valid when a rebuild has renumbered the clusters since the selection was made)."""
    sids = [s for s, _ in selection_points(event)]
    if not sids:
        return []
    cur = members.set_index("scenario_id")["cluster_id"]
    return sorted({int(c) for c in cur.reindex(sids).dropna()})


def cluster_labels(clusters: pd.DataFrame, n: int = 90) -> dict[str, str]:
    """anchor → "size · canonical text" for the cluster picker."""
    return {a: f"{int(s)} · {short(c, n)}" for a, s, c in zip(clusters["anchor"], clusters["size"],
                                                          clusters["canonical"])}


def cluster_options(clusters: pd.DataFrame, query: str = "", limit: int = 5_000,
                    keep: str | None = None) -> list[str]:
    """Anchors for the picker, largest first: those whose canonical text contains ``query``
    (case-insensitive), at most ``limit`` (a selectbox with 50k options is slow to send),
    plus ``keep`` if it still exists."""
    c = clusters
    if query.strip():
        c = c[c["canonical"].str.contains(query.strip(), case=False, regex=False, na=False)]
    out = c["anchor"].head(limit).tolist()
    if keep is not None and keep not in out and keep in set(clusters["anchor"]):
        out.append(keep)
    return out


def anchor_of_scenario(members: pd.DataFrame, clusters: pd.DataFrame, scenario_id: str) -> str | None:
    row = members[members["scenario_id"] == scenario_id]
    if row.empty:
        return None
    hit = clusters[clusters["cluster_id"] == int(row.iloc[0]["cluster_id"])]
    return None if hit.empty else str(hit.iloc[0]["anchor"])


def cluster_ids(clusters: pd.DataFrame, anchors: Iterable[str]) -> list[int]:
    by_anchor = dict(zip(clusters["anchor"], clusters["cluster_id"]))
    return [int(by_anchor[a]) for a in anchors if a in by_anchor]


def cluster_members(members: pd.DataFrame, cluster_id: int) -> pd.DataFrame:
    m = members[members["cluster_id"] == cluster_id]
    return (m[["scenario_id", "skill_name", "role", "text", "category"]].rename(columns={"skill_name": "skill"})
            .sort_values(["skill", "role"]).reset_index(drop=True))


def merge_preview(clusters: pd.DataFrame, ids: Iterable[int]) -> pd.DataFrame:
    c = clusters[clusters["cluster_id"].isin(list(ids))]
    return c[["cluster_id", "size", "canonical"]].sort_values("size", ascending=False).reset_index(drop=True)


def _edit_summary(kind: str, payload: object) -> str:
    p = json.loads(payload) if isinstance(payload, str) else (payload or {})
    if kind == "merge":
        return f"merged clusters {p.get('clusters', [])} ({len(p.get('scenario_ids', []))} scenarios)"
    if kind == "split":
        groups = p.get("groups", [])
        moved = len(groups[-1]) if groups else 0
        return f"split {moved} scenario(s) off cluster {p.get('cluster', '?')}"
    if kind == "rename":
        return f"renamed to “{short(p.get('text', ''), 80)}”"
    return str(p)


def edit_history_view(history: pd.DataFrame) -> pd.DataFrame:
    cols = ["when", "kind", "what", "author", "undone", "edit_id"]
    if history.empty:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame({"when": history["created_at"], "kind": history["kind"],
                         "what": [_edit_summary(k, p) for k, p in zip(history["kind"], history["payload"])],
                         "author": history["author"], "undone": history["undone_at"].notna(),
                         "edit_id": history["edit_id"]})[cols]


# --- cluster graph -------------------------------------------------------------------------

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
    if n <= 300:
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
    physics off). Each connected component is laid out on its own (Kamada–Kawai up to 300
    nodes, spring layout beyond) in a box of side ∝ size^0.6; the boxes, largest first, are
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


def declutter_labels(nodes: pd.DataFrame, top: int, keep: Iterable[int] = (), chars: int = 32,
                     char_px: float = 6.6, line_px: float = 16.0) -> set[int]:
    """Which nodes get a text label: the highest-degree ones (``keep`` first), at most ``top``,
    skipping any whose label box (drawn under the node, at the layout's pixel scale) would
    overlap a label already placed or reach past the outermost nodes (vis.js fits the view
    to the nodes, so such a label would be cut off)."""
    if nodes.empty:
        return set()
    lo, hi = float(nodes["x"].min()), float(nodes["x"].max())
    keep = [int(k) for k in keep]
    order = nodes.assign(_k=~nodes["node"].isin(keep)).sort_values(["_k", "degree", "node"],
                                                                     ascending=[True, False, True])
    boxes: list[tuple[float, float, float, float]] = []
    out: set[int] = set()
    for row in order.itertuples(index=False):
        if len(out) >= top:
            break
        w = char_px * min(len(str(row.canonical)), chars) / 2
        box = (row.x - w, row.x + w, row.y + 8, row.y + 8 + line_px)
        clash = any(not (box[1] < b[0] or b[1] < box[0] or box[3] < b[2] or b[3] < box[2]) for b in boxes)
        if (clash or box[0] < lo - 20 or box[1] > hi + 20) and int(row.node) not in keep:
            continue
        boxes.append(box)
        out.add(int(row.node))
    return out


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
    hl_nodes = {int(n) for n in highlight_nodes}
    hl_edges = {int(i) for i in highlight_edges}
    deg = nodes["degree"].to_numpy() if "degree" in nodes else np.ones(len(nodes))
    max_deg = max(float(deg.max()) if len(deg) else 1.0, 1.0)
    labelled = declutter_labels(nodes.assign(degree=deg), label_top, keep=hl_nodes)
    for i, row in enumerate(nodes.itertuples(index=False)):
        n = int(row.node)
        label = getattr(row, "label", None)
        if label is None:
            label = short(row.canonical, 32) if n in labelled or n in hl_nodes else " "
        node = {"id": n, "label": label, "x": float(row.x), "y": float(row.y),
                "title": f"{short(row.canonical, 200)}\n(cluster {n}, degree {int(deg[i])})"}
        if getattr(row, "shape", "dot") == "box":  # text inside, wrapped
            node.update(shape="box", widthConstraint={"maximum": 170}, margin=8,
                        color={"background": HIGHLIGHT if n in hl_nodes else "#e3ecf7",
                               "border": HIGHLIGHT if n in hl_nodes else NODE_COLOR},
                        font={"size": 13, "color": "#fff" if n in hl_nodes else "#222"})
        else:
            node.update(shape="dot", size=5 + 11 * math.sqrt(float(deg[i]) / max_deg),
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


# --- sampled paths -------------------------------------------------------------------------

def batch_label(row: Mapping | pd.Series) -> str:
    """"sampler · n paths · time" for a sample batch row."""
    at = row["created_at"]
    when = at.strftime("%Y-%m-%d %H:%M:%S") if isinstance(at, (datetime, pd.Timestamp)) else str(at)
    n = int(row["paths"]) if "paths" in row and pd.notna(row["paths"]) else int(row["n_paths"])
    return f"{row['sampler']} · {n} paths · {when}"


def batch_labels(batches: pd.DataFrame) -> dict[str, str]:
    labels = {r["batch_id"]: batch_label(r) for _, r in batches.iterrows()}
    counts = pd.Series(list(labels.values())).value_counts()
    return {b: (f"{lab} · {b[:6]}" if counts[lab] > 1 else lab) for b, lab in labels.items()}


def default_pair(batches: pd.DataFrame) -> tuple[str | None, str | None]:
    """The newest inverse-frequency and the newest random-walk batch (falling back to the
    newest batches of any sampler)."""
    if batches.empty:
        return None, None
    b = batches.sort_values("created_at", ascending=False)
    ids = b["batch_id"].tolist()

    def newest(sampler: str, other_than: str | None = None) -> str | None:
        hit = b[(b["sampler"] == sampler) & (b["batch_id"] != other_than)]
        return None if hit.empty else hit.iloc[0]["batch_id"]

    left = newest("inverse-frequency") or ids[0]
    right = newest("random-walk", left) or next((i for i in ids if i != left), left)
    return left, right


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


# --- coverage --------------------------------------------------------------------------------

GONE = "(cluster gone since sampling)"


def heatmap_matrix(cells: pd.DataFrame, top: int = HEATMAP_ROWS, rows: list[str] | None = None,
                   columns: list[str] | None = None) -> pd.DataFrame:
    """Visits pivoted to (cluster × skill category): the ``top`` clusters by visits (most
    visited first) unless ``rows`` fixes them; categories alphabetical unless ``columns``."""
    c = cells.assign(cluster=cells["cluster"].fillna(GONE))
    m = c.pivot_table(index="cluster", columns="category", values="visits", aggfunc="sum", fill_value=0)
    if rows is None:
        rows = m.sum(axis=1).sort_values(ascending=False, kind="stable").head(top).index.tolist()
    if columns is None:
        columns = sorted(m.columns)
    return m.reindex(index=rows, columns=columns, fill_value=0).astype(np.int64)


def heatmap_pair(cells_a: pd.DataFrame, cells_b: pd.DataFrame, top: int = HEATMAP_ROWS
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two batches' matrices over the same rows (top clusters by their summed visits) and
    the same categories, so that the two heatmaps compare cell by cell."""
    both = pd.concat([cells_a, cells_b], ignore_index=True)
    if both.empty:
        return heatmap_matrix(cells_a), heatmap_matrix(cells_b)
    joint = heatmap_matrix(both, top=top)
    rows, cols = joint.index.tolist(), joint.columns.tolist()
    return (heatmap_matrix(cells_a, rows=rows, columns=cols), heatmap_matrix(cells_b, rows=rows, columns=cols))


HEAT_SCALE = [[0.0, "#c6dbef"], [0.35, "#6baed6"], [0.7, "#2171b5"], [1.0, "#08306b"]]


def _unique_labels(rows: Iterable[object], n: int) -> list[str]:
    """Truncated row labels, kept unique (plotly merges equal category labels)."""
    out, seen = [], {}
    for r in rows:
        lab = short(r, n)
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def _heat_trace(matrix: pd.DataFrame, ylabels: list[str], zmax: float | None, **kw) -> go.Heatmap:
    # Zero visits are left blank, so that any visited cell shows (a 1 is not lost in a pale 0).
    z = matrix.astype(float).where(matrix > 0).to_numpy()
    full = np.array([[r] * matrix.shape[1] for r in matrix.index], dtype=object)
    return go.Heatmap(z=z, x=list(matrix.columns), y=ylabels, customdata=full, colorscale=HEAT_SCALE,
                      zmin=1, zmax=zmax if zmax is not None else max(float(np.nanmax(z, initial=1)), 1.0),
                      xgap=1, ygap=1, hoverongaps=False,
                      hovertemplate="%{customdata}<br>category %{x}<br>visits %{z}<extra></extra>", **kw)


def _heat_layout(fig: go.Figure, n_rows: int, title: bool) -> None:
    fig.update_layout(height=max(320, 19 * n_rows + 150), margin=dict(l=0, r=0, t=40 if title else 10, b=0),
                      plot_bgcolor="#ffffff")
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=11), showgrid=False)
    fig.update_xaxes(tickangle=-40, tickfont=dict(size=11), showgrid=False, side="bottom")


def coverage_heatmap(matrix: pd.DataFrame, title: str = "", zmax: float | None = None, label_len: int = 48,
                     show_scale: bool = True) -> go.Figure:
    """Visits per (cluster row × category column); blank cells were not visited."""
    fig = go.Figure(_heat_trace(matrix, _unique_labels(matrix.index, label_len), zmax, showscale=show_scale,
                                colorbar=dict(title="visits", thickness=12)))
    _heat_layout(fig, len(matrix), bool(title))
    if title:
        fig.update_layout(title=dict(text=title, font=dict(size=14)))
    return fig


def coverage_heatmap_pair(left: pd.DataFrame, right: pd.DataFrame, titles: tuple[str, str],
                          label_len: int = 48) -> go.Figure:
    """Two batches' matrices (same rows and columns, from :func:`heatmap_pair`) side by side in
    one figure: shared rows labelled once, one colour scale, panels of equal width."""
    from plotly.subplots import make_subplots
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=[short(t, 60) for t in titles])
    zmax = float(max(left.to_numpy().max(initial=0), right.to_numpy().max(initial=0), 1))
    ylabels = _unique_labels(left.index, label_len)
    fig.add_trace(_heat_trace(left, ylabels, zmax, coloraxis="coloraxis"), row=1, col=1)
    fig.add_trace(_heat_trace(right, ylabels, zmax, coloraxis="coloraxis"), row=1, col=2)
    fig.update_layout(coloraxis=dict(colorscale=HEAT_SCALE, cmin=1, cmax=zmax,
                                     colorbar=dict(title="visits", thickness=12)))
    _heat_layout(fig, len(left), True)
    fig.update_annotations(font=dict(size=13))
    return fig


def pair_counts(steps: pd.DataFrame) -> np.ndarray:
    """Steps per distinct (src_anchor, skill_id) pair."""
    if steps.empty:
        return np.zeros(0, dtype=np.int64)
    return steps.groupby(["src_anchor", "skill_id"]).size().to_numpy(np.int64)


def unique_pairs(steps: pd.DataFrame) -> int:
    return int(len(steps[["src_anchor", "skill_id"]].drop_duplicates())) if len(steps) else 0


def _check(counts: np.ndarray, universe: int) -> None:
    if universe < 1:
        raise ValueError("universe must be >= 1")
    if counts.size > universe:
        raise ValueError(f"{counts.size} distinct pairs observed but the universe has {universe}")


def normalized_entropy(counts: np.ndarray, universe: int) -> float:
    """Entropy of the pair distribution / log(universe): 1 = every pair equally often."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    if universe == 1:
        return 1.0
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum() / np.log(universe))


def gini(counts: np.ndarray, universe: int) -> float:
    """Gini of per-pair step counts over the whole universe (unseen pairs are zeros)."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    x = np.concatenate([np.zeros(universe - counts.size), np.sort(counts).astype(np.float64)])
    i = np.arange(1, universe + 1, dtype=np.float64)
    return float(((2 * i - universe - 1) * x).sum() / (universe * x.sum()))


def kl_to_uniform(counts: np.ndarray, universe: int) -> float:
    """KL(p ‖ uniform over the universe) in nats = log(U) − H(p)."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    p = counts / counts.sum()
    return float(max(0.0, (p * np.log(p * universe)).sum()))


def effective_universe(universe: int | None, all_steps: pd.DataFrame) -> tuple[int, bool]:
    """The universe to normalise by, and whether it had to be widened: batches sampled on an
    older graph can hold pairs the current graph no longer has, so the universe is at least
    the distinct pairs of all batches (and that alone when the graph's is unknown)."""
    seen = unique_pairs(all_steps)
    if not universe:
        return max(seen, 1), False
    return (max(universe, seen), seen > universe)


def batch_metrics(steps_by_batch: Mapping[str, pd.DataFrame], universe: int) -> pd.DataFrame:
    """One row per batch: paths, steps, unique pairs, coverage, normalised entropy, Gini, KL."""
    rows = []
    for label, st in steps_by_batch.items():
        c = pair_counts(st)
        rows.append({"batch": label, "paths": int(st["path_id"].nunique()) if len(st) else 0,
                     "steps": int(len(st)), "unique_pairs": int(c.size), "coverage": c.size / universe,
                     "normalized_entropy": normalized_entropy(c, universe), "gini": gini(c, universe),
                     "kl_to_uniform": kl_to_uniform(c, universe)})
    return pd.DataFrame(rows, columns=["batch", "paths", "steps", "unique_pairs", "coverage",
                                       "normalized_entropy", "gini", "kl_to_uniform"])


def coverage_growth(steps: pd.DataFrame, n_paths: int | None = None) -> np.ndarray:
    """Unique pairs after each path (paths in ``idx`` order; one entry per path)."""
    n = int(n_paths if n_paths is not None else (steps["idx"].max() + 1 if len(steps) else 0))
    if steps.empty:
        return np.zeros(n, dtype=np.int64)
    s = steps.sort_values(["idx", "step"], kind="stable")
    first = s.drop_duplicates(["src_anchor", "skill_id"])
    return np.cumsum(np.bincount(first["idx"].to_numpy(np.int64), minlength=n)[:n]).astype(np.int64)


def growth_curves(steps_by_batch: Mapping[str, pd.DataFrame], n_paths: Mapping[str, int] | None = None
                  ) -> pd.DataFrame:
    parts = []
    for label, st in steps_by_batch.items():
        g = coverage_growth(st, (n_paths or {}).get(label))
        parts.append(pd.DataFrame({"batch": label, "paths": np.arange(1, len(g) + 1), "unique_pairs": g}))
    if not parts:
        return pd.DataFrame(columns=["batch", "paths", "unique_pairs"])
    return pd.concat(parts, ignore_index=True)


def growth_figure(curves: pd.DataFrame, universe: int | None = None) -> go.Figure:
    fig = px.line(curves, x="paths", y="unique_pairs", color="batch",
                  color_discrete_sequence=["#1f77b4", "#d62728", "#2ca02c", "#9467bd"])
    if universe:
        fig.add_hline(y=universe, line_dash="dot", line_color="#888",
                      annotation_text=f"all {universe} pairs", annotation_position="top left")
    fig.update_layout(height=380, margin=dict(l=0, r=0, t=10, b=0), xaxis_title="paths sampled",
                      yaxis_title="unique (scenario, skill) pairs",
                      legend=dict(title="", orientation="h", yanchor="bottom", y=1.02, x=0))
    return fig
