"""Scenarios page through AppTest on the demo graph workspace: the map, lasso merges through the
dialog (scope, second ask), split, rename, undo, and every cluster reachable from the picker."""
from __future__ import annotations

import pandas as pd

from analysis import scenario_map as sm
from analysis.display import short
from pipeline.graph import edits
from pipeline.graph.build import build_graph
from tests.pages.apptest_helpers import button, frame, open_page
from tests.pages.apptest_helpers import chart as _chart
from workbench.store import graph as store


def _two_clusters(ws) -> tuple[pd.DataFrame, list[int]]:
    """The two largest clusters that lie in one HDBSCAN topic (a merge that needs no second
    confirmation), and the map points of both."""
    members = store.members_table(ws.db)
    topic_of = members.groupby("cluster_id")["topic"].agg(
        lambda t: int(t.iloc[0]) if t.nunique() == 1 and t.iloc[0] >= 0 else None).to_dict()
    first_of_topic: dict[int, int] = {}
    for cid in store.clusters_table(ws.db)["cluster_id"]:  # largest first
        t = topic_of.get(cid)
        if t is None:
            continue
        if t in first_of_topic:
            ids = [first_of_topic[t], int(cid)]
            return members[members["cluster_id"].isin(ids)], ids
        first_of_topic[t] = int(cid)
    raise AssertionError("no two clusters share a topic")


def _lasso(points: pd.DataFrame) -> dict:
    pts = [{"curve_number": 0, "point_number": i, "point_index": i, "x": float(x), "y": float(y),
            "customdata": [s, int(c)]}
           for i, (s, c, x, y) in enumerate(zip(points["scenario_id"], points["cluster_id"], points["x"], points["y"]))]
    return {"selection": {"points": pts, "point_indices": list(range(len(pts))), "box": [],
                          "lasso": [{"xref": "x", "yref": "y", "x": [0, 1, 1], "y": [0, 0, 1]}]}}


def _page_with_lasso(ws, monkeypatch, points: pd.DataFrame):
    """The Scenarios page after the user drew a lasso around `points` on the map."""
    at = open_page(ws, monkeypatch, "scenarios.py")
    at.session_state["scenario_map"] = _lasso(points)
    return at.run()


def test_scenarios_page_draws_the_map_with_ids_and_lists_members(graph_workspace, monkeypatch):
    ws = graph_workspace
    at = open_page(ws, monkeypatch, "scenarios.py")
    fig = _chart(at, "scenario_map")
    assert fig["layout"]["dragmode"] == "lasso"
    drawn = {tuple(cd) for tr in fig["data"] for cd in tr["customdata"]}
    members = store.members_table(ws.db)
    assert {s for s, _ in drawn} == set(members.loc[members["x"].notna(), "scenario_id"])
    assert all(int(c) == members.set_index("scenario_id").loc[s, "cluster_id"] for s, c in drawn)
    assert any(tr["name"].startswith("topic") for tr in fig["data"])
    # the picker is labelled "size · canonical text", largest first; its members are listed
    clusters = store.clusters_table(ws.db)
    pick = at.selectbox(key="cluster_pick")
    assert pick.value == clusters.iloc[0]["anchor"]
    assert pick.format_func(pick.value).startswith(f"{clusters.iloc[0]['size']} · ")
    shown = frame(at, "skill", "role", "text")
    assert len(shown) == clusters.iloc[0]["size"]
    # colour by the picked cluster: two traces, the picked one holding exactly its members
    at.radio(key="color_mode").set_value("cluster").run()
    fig = _chart(at, "scenario_map")
    assert [tr["name"] for tr in fig["data"]][-1] == f"cluster {clusters.iloc[0]['cluster_id']}"
    assert len(fig["data"][-1]["customdata"]) == clusters.iloc[0]["size"]


def test_lasso_merge_through_the_dialog_then_undo(graph_workspace, monkeypatch):
    ws = graph_workspace
    before = store.clusters_table(ws.db)
    points, ids = _two_clusters(ws)
    at = _page_with_lasso(ws, monkeypatch, points)
    assert not at.exception, at.exception
    opener = button(at, "merge_open")
    assert opener.label == "Merge 2 clusters"
    opener.click().run()
    assert not at.exception, at.exception
    # the dialog lists the canonical texts of both clusters and asks to confirm
    preview = frame(at, "cluster_id", "size", "canonical")
    assert set(preview["canonical"]) == set(before.set_index("cluster_id").loc[ids, "canonical"])
    button(at, "merge_confirm").click().run()
    assert not at.exception, at.exception
    after = store.clusters_table(ws.db)
    assert len(after) == len(before) - 1
    members = store.members_table(ws.db)
    merged = members[members["scenario_id"].isin(points["scenario_id"])]["cluster_id"].unique()
    assert len(merged) == 1
    assert any("Merged 2 clusters" in s.value for s in at.success)
    hist = store.edit_history(ws.db)
    assert hist.iloc[0]["kind"] == "merge" and hist.iloc[0]["author"] == "page-test"
    assert "merge_anchors" not in at.session_state  # the dialog closed
    # the edit survives a fresh build
    build_graph(ws)
    members = store.members_table(ws.db)
    assert members[members["scenario_id"].isin(points["scenario_id"])]["cluster_id"].nunique() == 1
    assert len(store.clusters_table(ws.db)) == len(before) - 1
    # undo restores the two clusters
    button(at, "undo").click().run()
    assert not at.exception, at.exception
    restored = store.clusters_table(ws.db)
    assert len(restored) == len(before)
    assert sorted(restored["canonical"]) == sorted(before["canonical"])


def test_merge_dialog_cancel_changes_nothing(graph_workspace, monkeypatch):
    ws = graph_workspace
    before = store.clusters_table(ws.db)
    points, _ = _two_clusters(ws)
    at = _page_with_lasso(ws, monkeypatch, points)
    button(at, "merge_open").click().run()
    button(at, "merge_cancel").click().run()
    assert not at.exception
    assert "merge_anchors" not in at.session_state
    assert not [b for b in at.button if b.key == "merge_confirm"]
    assert len(store.clusters_table(ws.db)) == len(before)


def test_a_selection_inside_one_cluster_offers_no_merge(graph_workspace, monkeypatch):
    ws = graph_workspace
    points, ids = _two_clusters(ws)
    at = open_page(ws, monkeypatch, "scenarios.py")
    at.session_state["scenario_map"] = _lasso(points[points["cluster_id"] == ids[0]])
    at.run()
    assert not at.exception
    assert not [b for b in at.button if b.key == "merge_open"]


def test_rename_survives_a_rebuild_and_undo_restores(graph_workspace, monkeypatch):
    ws = graph_workspace
    clusters = store.clusters_table(ws.db)
    target = clusters.iloc[2]
    at = open_page(ws, monkeypatch, "scenarios.py")
    at.selectbox(key="cluster_pick").set_value(target["anchor"]).run()
    box = next(t for t in at.text_input if t.label == "Canonical text")
    assert box.value == target["canonical"]
    box.input("A renamed scenario, chosen by the curator")
    next(b for b in at.button if b.label == "Rename").click().run()
    assert not at.exception, at.exception
    row = store.clusters_table(ws.db).set_index("anchor").loc[target["anchor"]]
    assert row["canonical"] == "A renamed scenario, chosen by the curator" and bool(row["renamed"])
    assert at.selectbox(key="cluster_pick").value == target["anchor"]  # still on the same cluster
    assert any(m.value.startswith("**A renamed scenario") for m in at.markdown)
    history = frame(at, "when", "kind", "what")
    assert history.iloc[0]["kind"] == "rename"
    build_graph(ws)
    row = store.clusters_table(ws.db).set_index("anchor").loc[target["anchor"]]
    assert row["canonical"] == "A renamed scenario, chosen by the curator"
    button(at, "undo").click().run()
    assert not at.exception
    row = store.clusters_table(ws.db).set_index("anchor").loc[target["anchor"]]
    assert row["canonical"] == target["canonical"] and not bool(row["renamed"])


def test_split_moves_members_into_a_new_cluster(graph_workspace, monkeypatch):
    ws = graph_workspace
    clusters = store.clusters_table(ws.db)
    target = clusters[clusters["size"] >= 2].iloc[0]
    at = open_page(ws, monkeypatch, "scenarios.py")
    at.selectbox(key="cluster_pick").set_value(target["anchor"]).run()
    split_box = next(m for m in at.multiselect if m.key.startswith("split_pick_"))
    mem = store.members_table(ws.db)
    mem = mem[mem["cluster_id"] == int(target["cluster_id"])].sort_values(["skill_name", "role"])
    assert len(split_box.options) == len(mem) == target["size"]
    moved_id = mem["scenario_id"].iloc[0]
    split_box.set_value([moved_id]).run()
    assert button(at, "split").label == "Split off 1 scenario(s)"
    button(at, "split").click().run()
    assert not at.exception, at.exception
    after = store.members_table(ws.db).set_index("scenario_id")["cluster_id"]
    stay = mem["scenario_id"].iloc[1]
    assert after[moved_id] != after[stay]
    assert len(store.clusters_table(ws.db)) == len(clusters) + 1
    assert store.edit_history(ws.db).iloc[0]["kind"] == "split"


def test_merge_dialog_says_what_it_joins_and_asks_again_past_the_threshold(graph_workspace, monkeypatch):
    ws = graph_workspace
    before = store.clusters_table(ws.db)
    ids = before["cluster_id"].tolist()[:sm.MERGE_ASK_AGAIN_CLUSTERS + 2]
    members = store.members_table(ws.db)
    points = members[members["cluster_id"].isin(ids)]
    topics = sorted(t for t in points["topic"].unique() if t >= 0)
    at = _page_with_lasso(ws, monkeypatch, points)
    assert any(f"in {len(ids)} dedup clusters from {len(topics)} topic(s)" in c.value for c in at.caption)
    button(at, "merge_open").click().run()
    assert not at.exception, at.exception
    summary = sm.merge_scope(members, ids).summary()
    assert summary.startswith(f"This merge joins {len(ids)} dedup clusters ({len(points)} scenarios) into one "
                              f"cluster. On the map, ")
    assert any(m.value == summary for m in at.markdown)
    assert any(f"more than {sm.MERGE_ASK_AGAIN_CLUSTERS} clusters" in w.value for w in at.warning)
    assert button(at, "merge_confirm").disabled  # asked again: nothing merges until confirmed
    at.checkbox(key="merge_sure").check().run()
    assert not button(at, "merge_confirm").disabled
    button(at, "merge_confirm").click().run()
    assert not at.exception, at.exception
    assert len(store.clusters_table(ws.db)) == len(before) - len(ids) + 1
    # the history names the merged clusters by their texts and sizes then, not by ids
    what = frame(at, "when", "kind", "what").iloc[0]["what"]
    largest = before.iloc[0]
    assert what.startswith(f"merged {len(ids)} clusters ({len(points)} scenarios): “")
    assert f"({int(largest['size'])})" in what and short(largest["canonical"], 60) in what
    assert f"+ {len(ids) - sm.HISTORY_TEXTS} more" in what and "[" not in what


def test_a_small_merge_in_one_topic_is_not_asked_twice(graph_workspace, monkeypatch):
    ws = graph_workspace
    points, _ = _two_clusters(ws)
    at = _page_with_lasso(ws, monkeypatch, points)
    button(at, "merge_open").click().run()
    assert any(m.value.startswith("This merge joins 2 dedup clusters") and " lie in topic " in m.value
               for m in at.markdown)
    assert not [c for c in at.checkbox if c.key == "merge_sure"] and not button(at, "merge_confirm").disabled


def test_split_off_a_merge_keeps_the_merge_and_the_pick_so_a_rename_lands_on_it(graph_workspace, monkeypatch):
    ws = graph_workspace
    points, ids = _two_clusters(ws)
    edits.merge(ws, ids, author="t")
    n_merged = len(store.clusters_table(ws.db))
    merged = points["scenario_id"].tolist()
    cluster = store.members_table(ws.db).set_index("scenario_id")["cluster_id"]
    anchor = store.clusters_table(ws.db).set_index("cluster_id").loc[cluster[merged[0]], "anchor"]
    at = open_page(ws, monkeypatch, "scenarios.py")
    at.selectbox(key="cluster_pick").set_value(anchor).run()
    split_box = next(m for m in at.multiselect if m.key.startswith("split_pick_"))
    moved_id = merged[0]
    split_box.set_value([moved_id]).run()
    button(at, "split").click().run()
    assert not at.exception, at.exception
    assert len(store.clusters_table(ws.db)) == n_merged + 1  # the merge stays: one cluster more, not all back
    cluster = store.members_table(ws.db).set_index("scenario_id")["cluster_id"]
    rest = [s for s in merged if s != moved_id]
    assert cluster[rest].nunique() == 1 and cluster[moved_id] != cluster[rest[0]]
    # the page stays on the merged cluster (what is left of it), so the rename goes there
    clusters = store.clusters_table(ws.db).set_index("cluster_id")
    assert at.selectbox(key="cluster_pick").value == clusters.loc[cluster[rest[0]], "anchor"]
    next(t for t in at.text_input if t.label == "Canonical text").input("The merged state")
    next(b for b in at.button if b.label == "Rename").click().run()
    assert not at.exception, at.exception
    cluster = store.members_table(ws.db).set_index("scenario_id")["cluster_id"]
    renamed = store.clusters_table(ws.db).set_index("cluster_id").loc[cluster[rest[0]]]
    assert renamed["canonical"] == "The merged state" and int(renamed["size"]) == len(rest)
    what = frame(at, "when", "kind", "what")["what"].tolist()
    assert what[0].startswith("renamed “") and what[0].endswith(f"({len(rest)}) to “The merged state”")
    assert what[1].startswith("split “")
    button(at, "undo").click().run()
    assert not at.exception
    assert "The merged state" not in set(store.clusters_table(ws.db)["canonical"])
    assert len(store.clusters_table(ws.db)) == n_merged + 1


def test_every_cluster_is_reachable_from_the_picker(graph_workspace, monkeypatch):
    ws = graph_workspace
    monkeypatch.setattr(sm, "PICKER_LIMIT", 20)
    clusters = store.clusters_table(ws.db)
    at = open_page(ws, monkeypatch, "scenarios.py")
    pick = at.selectbox(key="cluster_pick")
    assert len(pick.options) == 20
    assert any(f"The list holds the 20 largest clusters of {len(clusters):,}" in c.value and "filter box" in c.value
               for c in at.caption)
    last = clusters.iloc[-1]  # the smallest: not among the 20
    label = sm.cluster_labels(clusters)[last["anchor"]]
    assert label not in pick.options
    at.text_input(key="cluster_query").input(last["canonical"]).run()
    pick = at.selectbox(key="cluster_pick")
    assert label in pick.options
    pick.set_value(last["anchor"]).run()
    assert not at.exception
    assert any(m.value.startswith(f"**{last['canonical']}**") for m in at.markdown)


# --- Graph ------------------------------------------------------------------------------------------
