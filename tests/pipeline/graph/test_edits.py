"""Cluster edits on the demo graph: a split off a merged cluster keeps the rest merged, and
every edit records the clusters' texts and sizes as they were (ids are renumbered by rebuilds)."""
from __future__ import annotations

import json

from pipeline.graph import edits
from workbench.store import graph as store


def _cluster_of(ws) -> dict[str, int]:
    return store.members_table(ws.db).set_index("scenario_id")["cluster_id"].to_dict()


def test_splitting_one_scenario_off_a_merge_keeps_the_rest_merged(graph_workspace):
    ws = graph_workspace
    before = store.clusters_table(ws.db)
    ids = before["cluster_id"].tolist()[:6]
    members = store.members_table(ws.db)
    merged = members[members["cluster_id"].isin(ids)]["scenario_id"].tolist()
    edits.merge(ws, ids, author="t")
    assert len(store.clusters_table(ws.db)) == len(before) - 5
    cluster = _cluster_of(ws)
    target = cluster[merged[0]]
    assert {cluster[s] for s in merged} == {target}
    edits.split(ws, target, [merged[0]], author="t")
    # one more cluster, not the merge undone (that gave len(before) again)
    assert len(store.clusters_table(ws.db)) == len(before) - 4
    cluster = _cluster_of(ws)
    rest = {cluster[s] for s in merged[1:]}
    assert len(rest) == 1 and cluster[merged[0]] not in rest
    sizes = store.clusters_table(ws.db).set_index("cluster_id")["size"]
    assert sizes[rest.pop()] == len(merged) - 1 and sizes[cluster[merged[0]]] == 1
    # undoing the split restores the merge; undoing the merge restores the clusters
    edits.undo(ws)
    assert len(store.clusters_table(ws.db)) == len(before) - 5
    edits.undo(ws)
    assert sorted(store.clusters_table(ws.db)["canonical"]) == sorted(before["canonical"])


def test_edits_record_texts_and_sizes_as_they_were(graph_workspace):
    ws = graph_workspace
    before = store.clusters_table(ws.db)
    a, b = before.iloc[0], before.iloc[1]
    edits.merge(ws, [int(a["cluster_id"]), int(b["cluster_id"])], author="t")
    merge = json.loads(store.edit_history(ws.db).iloc[0]["payload"])
    assert merge["clusters"] == [{"canonical": a["canonical"], "size": int(a["size"])},
                                 {"canonical": b["canonical"], "size": int(b["size"])}]
    now = store.clusters_table(ws.db).iloc[0]
    members = store.members_table(ws.db)
    moved = members[members["cluster_id"] == now["cluster_id"]].iloc[0]
    edits.split(ws, int(now["cluster_id"]), [moved["scenario_id"]], author="t")
    split = json.loads(store.edit_history(ws.db).iloc[0]["payload"])
    assert split["cluster"] == {"canonical": now["canonical"], "size": int(now["size"])}
    assert split["moved_texts"] == [moved["text"]]
    assert split["moved_members"] == [f"{moved['skill_name']} · {moved['role']}"]
    target = store.clusters_table(ws.db).iloc[3]
    edits.rename(ws, int(target["cluster_id"]), "A new name", author="t")
    rename = json.loads(store.edit_history(ws.db).iloc[0]["payload"])
    assert rename["cluster"] == {"canonical": target["canonical"], "size": int(target["size"])}
    assert rename["text"] == "A new name"
