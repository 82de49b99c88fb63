"""The stored clusters, skills and verified bridges as a graph for sampling and analysis.

Nodes are clusters (canonical scenarios); each accepted skill is a transition from its
precondition's cluster to its postcondition's. A verified bridge from cluster a (a
postcondition) to cluster b (a precondition) lets a path go on from a with any skill
that starts in b, so it is folded into the transitions.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from pipeline.graph.transitions import TransitionGraph
from workbench.store import graph as store
from workbench.store.connection import Database


@dataclass
class AssembledGraph:
    transitions: TransitionGraph
    anchors: np.ndarray         # node index -> cluster anchor (scenario id)
    canonical: np.ndarray       # node index -> canonical text
    skill_ids: np.ndarray       # skill index -> skill id
    skill_edges: pd.DataFrame   # src, dst, skill (direct skill edges, no bridge folding)
    bridge_edges: pd.DataFrame  # src, dst (cluster level)
    skill_clusters: pd.DataFrame  # pre, post: every skill's two clusters, self-loops included


def assemble(db: Database) -> AssembledGraph:
    clusters = store.clusters_table(db).sort_values("cluster_id")
    members = store.members_table(db)
    if clusters.empty:
        raise ValueError("no graph yet: run `workbench graph build` first")
    pre = members[members["role"] == "pre"].set_index("skill_id")["cluster_id"]
    post = members[members["role"] == "post"].set_index("skill_id")["cluster_id"]
    both = pre.index.intersection(post.index).sort_values()
    skill_ids = np.asarray(both)
    skill_clusters = pd.DataFrame({"pre": pre.loc[both].to_numpy(), "post": post.loc[both].to_numpy()})
    skill_edges = pd.DataFrame({"src": skill_clusters["pre"], "dst": skill_clusters["post"],
                                "skill": np.arange(len(both))})
    skill_edges = skill_edges[skill_edges["src"] != skill_edges["dst"]]
    br = store.bridges_table(db, verified_only=True)
    bridge_edges = (br[["from_cluster", "to_cluster"]].dropna().astype(int)
                    .rename(columns={"from_cluster": "src", "to_cluster": "dst"}).drop_duplicates())
    bridge_edges = bridge_edges[bridge_edges["src"] != bridge_edges["dst"]]
    folded = bridge_edges.merge(skill_edges, left_on="dst", right_on="src", suffixes=("_b", ""))
    folded = pd.DataFrame({"src": folded["src_b"], "dst": folded["dst"], "skill": folded["skill"]})
    allt = pd.concat([skill_edges, folded[folded["src"] != folded["dst"]]]).drop_duplicates()
    tg = TransitionGraph.from_edges(len(clusters), len(skill_ids), allt["src"].to_numpy(np.int32),
                                    allt["skill"].to_numpy(np.int32), allt["dst"].to_numpy(np.int32))
    return AssembledGraph(tg, clusters["anchor"].to_numpy(), clusters["canonical"].to_numpy(), skill_ids,
                          skill_edges.reset_index(drop=True), bridge_edges.reset_index(drop=True), skill_clusters)


def graph_stats(g: AssembledGraph, sample_sources: int = 50, seed: int = 0) -> dict:
    """Components, degree distribution and path lengths (BFS from a sample of sources)."""
    G = nx.DiGraph()
    G.add_nodes_from(range(g.transitions.n_nodes))
    G.add_edges_from(zip(g.skill_edges["src"], g.skill_edges["dst"]))
    G.add_edges_from(zip(g.bridge_edges["src"], g.bridge_edges["dst"]))
    out_deg = np.array([d for _, d in G.out_degree()])
    in_deg = np.array([d for _, d in G.in_degree()])
    weak = sorted((len(c) for c in nx.weakly_connected_components(G)), reverse=True)
    rng = np.random.default_rng(seed)
    sources = rng.choice(G.number_of_nodes(), min(sample_sources, G.number_of_nodes()), replace=False)
    lengths = [d for s in sources for d in nx.single_source_shortest_path_length(G, int(s)).values() if d > 0]
    return {"nodes": G.number_of_nodes(), "skill_edges": int(len(g.skill_edges)),
            "bridge_edges": int(len(g.bridge_edges)), "transitions": int(len(g.transitions.skill)),
            "weak_components": len(weak), "largest_component": weak[0] if weak else 0,
            "isolated_nodes": int(((out_deg == 0) & (in_deg == 0)).sum()),
            "out_degree_mean": float(out_deg.mean()) if len(out_deg) else 0.0,
            "out_degree_max": int(out_deg.max()) if len(out_deg) else 0,
            "in_degree_max": int(in_deg.max()) if len(in_deg) else 0,
            "path_length_mean": float(np.mean(lengths)) if lengths else 0.0,
            "path_length_max": int(max(lengths)) if lengths else 0}


def degree_table(g: AssembledGraph) -> pd.DataFrame:
    deg = np.diff(g.transitions.indptr)
    return pd.DataFrame({"anchor": g.anchors, "canonical": g.canonical, "out_transitions": deg})
