"""Cluster edits from the Scenarios page: record the edit, then rebuild the clusters.

Edits are stored as constraints on scenario ids, so `graph build` re-derives them on every
run; the rebuild here reuses cached embeddings and the stored projection, so it is quick.
Each edit also records the canonical texts and sizes of the clusters it changed, as they
were then: cluster ids are renumbered by every rebuild, so the history cannot name them.
"""
from __future__ import annotations

import pandas as pd

from pipeline.graph.build import BuildOptions, BuildReport, build_graph
from workbench.store import graph as store
from workbench.workspace import Workspace


def _members_of(ws: Workspace, cluster_ids: list[int]) -> list[str]:
    members = store.members_table(ws.db)
    return members[members["cluster_id"].isin(cluster_ids)]["scenario_id"].tolist()


def _as_they_were(clusters: pd.DataFrame, cluster_ids: list[int]) -> list[dict]:
    """{"canonical", "size"} of each cluster, largest first."""
    c = clusters[clusters["cluster_id"].isin(cluster_ids)].sort_values(["size", "cluster_id"],
                                                                        ascending=[False, True])
    return [{"canonical": str(t), "size": int(s)} for t, s in zip(c["canonical"], c["size"])]


def merge(ws: Workspace, cluster_ids: list[int], author: str, opts: BuildOptions | None = None) -> BuildReport:
    """Join whole clusters into one."""
    if len(set(cluster_ids)) < 2:
        raise ValueError("choose at least two clusters to merge")
    ids = sorted(set(cluster_ids))
    store.add_edit(ws.db, "merge", {"scenario_ids": _members_of(ws, ids),
                                    "clusters": _as_they_were(store.clusters_table(ws.db), ids)}, author)
    return build_graph(ws, opts)


def split(ws: Workspace, cluster_id: int, moved: list[str], author: str,
          opts: BuildOptions | None = None) -> BuildReport:
    """Move the scenarios `moved` out of a cluster into a cluster of their own."""
    members = store.members_table(ws.db)
    members = members[members["cluster_id"] == cluster_id]
    ids = set(members["scenario_id"])
    moved_set = set(moved) & ids
    if not moved_set or moved_set == ids:
        raise ValueError("choose some, but not all, scenarios of the cluster to split off")
    cluster = _as_they_were(store.clusters_table(ws.db), [cluster_id])
    gone = members[members["scenario_id"].isin(moved_set)]
    store.add_edit(ws.db, "split", {
        "groups": [sorted(ids - moved_set), sorted(moved_set)],
        "cluster": cluster[0] if cluster else None,
        "moved_texts": gone["text"].astype(str).tolist(),
        # who moved, as the split picker names them: the text alone often equals the cluster's own
        "moved_members": [f"{k} · {r}" for k, r in zip(gone["skill_name"], gone["role"])]}, author)
    return build_graph(ws, opts)


def rename(ws: Workspace, cluster_id: int, text: str, author: str, opts: BuildOptions | None = None) -> BuildReport:
    if not text.strip():
        raise ValueError("a canonical text cannot be empty")
    clusters = store.clusters_table(ws.db)
    if cluster_id not in set(clusters["cluster_id"]):
        raise ValueError(f"no cluster {cluster_id}")
    anchor = clusters.set_index("cluster_id").loc[cluster_id, "anchor"]
    store.add_edit(ws.db, "rename", {"anchor": anchor, "text": text.strip(),
                                     "cluster": _as_they_were(clusters, [cluster_id])[0]}, author)
    return build_graph(ws, opts)


def undo(ws: Workspace, opts: BuildOptions | None = None) -> str | None:
    """Undo the latest cluster edit and rebuild; returns the edit id undone (None: nothing)."""
    undone = store.undo_edit(ws.db)
    if undone:
        build_graph(ws, opts)
    return undone
