"""Cluster edits from the Scenarios page: record the edit, then rebuild the clusters.

Edits are stored as constraints on scenario ids, so `graph build` re-derives them on every
run; the rebuild here reuses cached embeddings and the stored projection, so it is quick.
"""
from __future__ import annotations

from pipeline.graph.build import BuildOptions, BuildReport, build_graph
from workbench.store import graph as store
from workbench.workspace import Workspace


def _members_of(ws: Workspace, cluster_ids: list[int]) -> list[str]:
    members = store.members_table(ws.db)
    return members[members["cluster_id"].isin(cluster_ids)]["scenario_id"].tolist()


def merge(ws: Workspace, cluster_ids: list[int], author: str, opts: BuildOptions | None = None) -> BuildReport:
    """Join whole clusters into one."""
    if len(set(cluster_ids)) < 2:
        raise ValueError("choose at least two clusters to merge")
    store.add_edit(ws.db, "merge", {"scenario_ids": _members_of(ws, cluster_ids), "clusters": sorted(set(cluster_ids))},
                   author)
    return build_graph(ws, opts)


def split(ws: Workspace, cluster_id: int, moved: list[str], author: str,
          opts: BuildOptions | None = None) -> BuildReport:
    """Move the scenarios `moved` out of a cluster into a cluster of their own."""
    members = set(_members_of(ws, [cluster_id]))
    moved_set = set(moved) & members
    if not moved_set or moved_set == members:
        raise ValueError("choose some, but not all, scenarios of the cluster to split off")
    store.add_edit(ws.db, "split", {"groups": [sorted(members - moved_set), sorted(moved_set)],
                                    "cluster": cluster_id}, author)
    return build_graph(ws, opts)


def rename(ws: Workspace, cluster_id: int, text: str, author: str, opts: BuildOptions | None = None) -> BuildReport:
    if not text.strip():
        raise ValueError("a canonical text cannot be empty")
    clusters = store.clusters_table(ws.db).set_index("cluster_id")
    if cluster_id not in clusters.index:
        raise ValueError(f"no cluster {cluster_id}")
    store.add_edit(ws.db, "rename", {"anchor": clusters.loc[cluster_id, "anchor"], "text": text.strip()}, author)
    return build_graph(ws, opts)


def undo(ws: Workspace, opts: BuildOptions | None = None) -> str | None:
    """Undo the latest cluster edit and rebuild; returns the edit id undone (None: nothing)."""
    undone = store.undo_edit(ws.db)
    if undone:
        build_graph(ws, opts)
    return undone
