"""Graph: the cluster-level graph, its statistics, ego networks and sampled paths step by step."""
import pandas as pd
import streamlit as st

from analysis import cluster_graph as cg
from analysis import graph_health as gh
from analysis.coverage_views import batch_labels
from analysis.display import short
from analysis.scenario_map import cluster_options, picker_note
from pages import cached
from pages.shared import provider_note, scenario_graph_or_stop, workspace
from pipeline.graph.assemble import assemble, graph_stats
from workbench.store import graph as store

ws = workspace()
st.title("Graph")
st.caption(provider_note())

build, clusters = scenario_graph_or_stop(ws)


@st.cache_data(ttl=3600, max_entries=4, show_spinner="Assembling the graph and laying it out…")
def _graph(_ws, root: str, build_id: str) -> dict:
    """Everything about one build that does not depend on the user's picks (cached per build)."""
    g = assemble(_ws.db)
    edges = cg.cluster_edges(g.skill_edges, g.bridge_edges)
    nodes = cg.cluster_nodes(g.anchors, g.canonical, edges)
    top_nodes, top_edges = cg.top_subgraph(nodes, edges, cg.MAX_GRAPH_NODES)
    top_nodes = cg.with_layout(top_nodes, top_edges)
    return {"stats": graph_stats(g), "health": gh.measure(g), "nodes": nodes, "edges": edges, "top_nodes": top_nodes,
            "top_edges": top_edges, "html": cg.pyvis_html(top_nodes, top_edges, height=640, label_top=25)}


@st.cache_data(ttl=3600, max_entries=4, show_spinner=False)
def _ego_labels(_ws, root: str, build_id: str) -> dict[str, str]:
    """The ego picker's labels, most neighbours first (0.25 s for 40k clusters: once per build)."""
    nodes = _graph(_ws, root, build_id)["nodes"].sort_values(["degree", "node"], ascending=[False, True])
    return dict(zip(nodes["anchor"], nodes["degree"].astype(str) + " neighbours · "
                    + nodes["canonical"].map(lambda t: short(t, 90))))


@st.cache_data(ttl=3600, max_entries=32, show_spinner=False)
def _ego(_ws, root: str, build_id: str, center: int, hops: int) -> dict:
    """The drawing of one ego network (its layout is a solver run: once per build, cluster and hops)."""
    g = _graph(_ws, root, build_id)
    nodes, edges = g["nodes"], g["edges"]
    ego = cg.ego_nodes(edges, center, hops=hops, cap=cg.MAX_EGO_NODES, degrees=nodes["degree"].to_numpy())
    ego_e = edges[edges["src"].isin(ego) & edges["dst"].isin(ego)]
    ego_n = cg.with_layout(nodes[nodes["node"].isin(ego)], ego_e, height=500)
    return {"clusters": len(ego), "edges": len(ego_e),
            "html": cg.pyvis_html(ego_n, ego_e, height=520, label_top=25, highlight_nodes=[center])}


@st.cache_data(ttl=3600, max_entries=8)
def _steps(_ws, root: str, batch_id: str) -> pd.DataFrame:
    return store.path_steps(_ws.db, batch_id)  # a batch never changes once stored


view = _graph(ws, str(ws.root), build["build_id"])
stats, nodes, edges = view["stats"], view["nodes"], view["edges"]

# --- health: can this graph give multi-step paths? ------------------------------------------------
st.subheader("Health")
health = view["health"]
items = gh.card(health)
for col, item in zip(st.columns(len(items)), items):
    col.metric(item.label, item.value)
    if item.ok is not None:
        col.markdown(f":{'green' if item.ok else 'red'}[{'✓' if item.ok else '✗'} target {item.target}]")
tips = gh.advice(health)
if tips:
    st.warning("\n".join([f"**{gh.summary(health)}**", ""] + [f"- {t}" for t in tips]))
else:
    st.success(gh.summary(health))
st.caption(f"Shares of the {health.clusters:,} clusters and {health.skills:,} skills in the graph; the mean path is "
           f"of {health.sample_paths} fresh inverse-frequency paths (seed {health.sample_seed}, nothing stored). "
           "`workbench graph stats` prints the same figures.")

# --- statistics --------------------------------------------------------------------------------
st.subheader("Statistics")
row1 = [("Clusters (nodes)", stats["nodes"]), ("Skill edges", stats["skill_edges"]),
        ("Bridge edges", stats["bridge_edges"]), ("Transitions", stats["transitions"]),
        ("Weak components", stats["weak_components"]), ("Largest component", stats["largest_component"])]
row2 = [("Isolated clusters", stats["isolated_nodes"]), ("Mean out-degree", f"{stats['out_degree_mean']:.2f}"),
        ("Max out-degree", stats["out_degree_max"]), ("Max in-degree", stats["in_degree_max"]),
        ("Mean path length", f"{stats['path_length_mean']:.2f}"),
        ("Longest shortest path", stats["path_length_max"])]
for row in (row1, row2):
    for col, (label, value) in zip(st.columns(len(row)), row):
        col.metric(label, value)
st.caption("Path lengths are BFS distances from a sample of 50 source clusters.")

# --- the meta-graph ----------------------------------------------------------------------------
st.subheader("Cluster graph")
n_top, n_all = len(view["top_nodes"]), len(nodes)
st.caption(f"Showing {n_top:,} of {n_all:,} clusters (the {n_top:,} with the most neighbours) and the "
           f"{len(view['top_edges']):,} of {len(edges):,} cluster edges among them. "
           f"Solid blue: skills (thicker = more skills); dashed orange: verified bridges. "
           f"Hover a node for its text; scroll to zoom, drag to pan.")
st.iframe(view["html"], height=660)

# --- ego network ------------------------------------------------------------------------------------
st.subheader("Ego network")
by_degree = nodes.sort_values(["degree", "node"], ascending=[False, True])
labels = _ego_labels(ws, str(ws.root), build["build_id"])
e1, e2, e3 = st.columns([4, 2, 1])
query = e2.text_input("Filter clusters", key="ego_query", placeholder="words in the canonical text")
if st.session_state.get("ego_pick") not in labels:
    st.session_state.pop("ego_pick", None)
pickable = by_degree.rename(columns={"degree": "size"})  # the picker's order: most neighbours first
options = cluster_options(pickable, query, keep=st.session_state.get("ego_pick"))
if not options:
    e2.warning("No cluster matches.")
    query = ""
    options = cluster_options(pickable, query, keep=st.session_state.get("ego_pick"))
center_anchor = e1.selectbox("Cluster (neighbours · canonical text)", options, format_func=labels.get,
                             key="ego_pick")
e1.caption(picker_note(pickable, query, what="best-connected"))
hops = e3.radio("Hops", [1, 2], index=1, key="ego_hops", horizontal=True)
center = int(nodes.loc[nodes["anchor"] == center_anchor, "node"].iloc[0])
ego = _ego(ws, str(ws.root), build["build_id"], center, hops)
capped = " (capped)" if ego["clusters"] >= cg.MAX_EGO_NODES else ""
st.caption(f"{ego['clusters']} clusters within {hops} hop(s){capped}, {ego['edges']} edges; "
           "the picked cluster in red.")
st.iframe(ego["html"], height=540)

# --- a sampled path, step by step ------------------------------------------------------------------
st.subheader("A sampled path, step by step")
batches = cached.sample_batches(ws)
if batches.empty:
    st.info("No paths sampled yet. Run `workbench sample --sampler inverse-frequency --n 200`.")
    st.stop()
blabels = batch_labels(batches)
b1, b2 = st.columns([3, 1])
batch_id = b1.selectbox("Batch (sampler · paths · time)", batches["batch_id"].tolist(), format_func=blabels.get,
                        key="path_batch")
steps = _steps(ws, str(ws.root), batch_id)
n_paths = int(batches.set_index("batch_id").loc[batch_id, "paths"])
if steps.empty or n_paths == 0:
    st.write("This batch has no steps.")
    st.stop()
idx = int(b2.number_input("Path index", min_value=0, max_value=n_paths - 1, value=0, step=1, key="path_idx"))
path = steps[steps["idx"] == idx]
if path.empty:
    st.write(f"Path {idx} has no steps (the sampler found no walk from its start).")
    st.stop()
canonical = dict(zip(clusters["anchor"], clusters["canonical"]))
last = int(path["step"].max())
step = st.slider("Step", 0, last, value=last, key=f"path_step_{batch_id}_{idx}") if last > 0 else 0
table = cg.path_table(path, canonical, current=step)
st.dataframe(table.style.apply(lambda r: ["background-color: #ffe3e3; font-weight: 600" if r["now"] else ""
                                          for _ in r], axis=1),
             hide_index=True, width="stretch", key="path_steps",
             column_config={"now": st.column_config.TextColumn("", width="small"),
                            "step": st.column_config.NumberColumn(width="small")})
p_nodes, p_edges = cg.path_drawing(path, canonical, step)
st.iframe(cg.pyvis_html(p_nodes, p_edges, height=330, label_top=len(p_nodes),
                              highlight_nodes=[int(p_edges['dst'].iloc[-1])], highlight_edges=[len(p_edges) - 1],
                              edge_labels=True), height=350)
