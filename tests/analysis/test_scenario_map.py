"""The data shaping and figure behind the Scenarios page: map, selection, picker, history."""
from __future__ import annotations

import json
from datetime import datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis import scenario_map as sm


def _members(n: int, n_clusters: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "scenario_id": [f"s{i}:{'pre' if i % 2 else 'post'}" for i in range(n)],
        "skill_id": [f"s{i}" for i in range(n)], "role": ["pre" if i % 2 else "post" for i in range(n)],
        "cluster_id": np.arange(n) % n_clusters, "text": [f"a scenario number {i}" for i in range(n)],
        "skill_name": [f"skill {i}" for i in range(n)], "category": "files",
        "x": rng.normal(size=n), "y": rng.normal(size=n), "topic": (np.arange(n) % 4) - 1})


def test_map_points_caps_deterministically_and_keeps_the_selected_cluster():
    m = _members(5_000, n_clusters=500)
    m.loc[3, "x"] = np.nan
    assert len(sm.map_points(m)) == 4_999  # under the cap: all with a projection
    a = sm.map_points(m, selected_cluster=7, max_points=300)
    b = sm.map_points(m, selected_cluster=7, max_points=300)
    assert len(a) == 300 and a["scenario_id"].tolist() == b["scenario_id"].tolist()
    assert set(m.loc[m["cluster_id"] == 7, "scenario_id"]) <= set(a["scenario_id"])
    assert a["x"].notna().all()


def test_scenario_map_carries_ids_per_point_and_switches_to_webgl():
    small = sm.map_points(_members(200))
    fig = sm.scenario_map(small, "topic")
    assert fig.layout.dragmode == "lasso"
    assert all(isinstance(t, go.Scatter) for t in fig.data)
    assert len(fig.data) == 4  # topics -1, 0, 1, 2
    assert fig.data[-1].name == "no topic"  # noise last, grey
    ids = {tuple(cd) for t in fig.data for cd in t.customdata}
    assert ids == {(s, c) for s, c in zip(small["scenario_id"], small["cluster_id"])}
    big = sm.scenario_map(sm.map_points(_members(3_000)), "topic")
    assert all(isinstance(t, go.Scattergl) for t in big.data)


def test_cluster_colour_mode_splits_the_picked_cluster_from_the_rest():
    pts = sm.map_points(_members(200))
    fig = sm.scenario_map(pts, "cluster", selected_cluster=3)
    assert [t.name for t in fig.data] == ["other clusters", "cluster 3"]
    assert {int(cd[1]) for cd in fig.data[1].customdata} == {3}
    assert len(fig.data[1].customdata) == (pts["cluster_id"] == 3).sum()
    with pytest.raises(ValueError):
        sm.scenario_map(pts, "nonsense")


def test_selection_reads_custom_data_as_list_or_dict_and_maps_to_current_clusters():
    m = _members(40, n_clusters=10)
    event = {"selection": {"points": [
        {"curve_number": 0, "point_index": 0, "customdata": ["s0:post", 0]},
        {"curve_number": 1, "point_index": 0, "customdata": {"0": "s1:pre", "1": "1"}},
        {"curve_number": 1, "point_index": 3, "customdata": ["s11:pre", 1]},
        {"curve_number": 2, "point_index": 2},  # no custom data: ignored
    ], "point_indices": [0, 0, 3, 2], "box": [], "lasso": []}}
    assert sm.selection_points(event) == [("s0:post", 0), ("s1:pre", 1), ("s11:pre", 1)]
    assert sm.selected_clusters(event, m) == [0, 1]
    # after a rebuild renumbered the clusters, the scenario ids still find the current ones
    renumbered = m.assign(cluster_id=(m["cluster_id"] + 5) % 10)
    assert sm.selected_clusters(event, renumbered) == [5, 6]
    assert sm.selected_clusters(None, m) == [] and sm.selected_clusters({"selection": {}}, m) == []


def test_cluster_picker_labels_filter_and_keep():
    clusters = pd.DataFrame({"cluster_id": [0, 1, 2], "anchor": ["a:pre", "b:post", "c:pre"],
                             "canonical": ["A git repository", "A CSV file", "A git branch"], "size": [5, 3, 1],
                             "renamed": False})
    assert sm.cluster_labels(clusters)["a:pre"] == "5 · A git repository"
    assert sm.cluster_options(clusters, "GIT") == ["a:pre", "c:pre"]
    assert sm.cluster_options(clusters, "git", keep="b:post") == ["a:pre", "c:pre", "b:post"]
    assert sm.cluster_options(clusters, "", limit=1) == ["a:pre"]
    assert sm.cluster_ids(clusters, ["c:pre", "gone", "a:pre"]) == [2, 0]


def test_cluster_picker_says_how_many_it_shows_and_how_to_reach_the_rest():
    clusters = pd.DataFrame({"cluster_id": range(7), "anchor": [f"a{i}" for i in range(7)],
                             "canonical": ["git x", "csv", "git y", "git z", "json", "tar", "git w"],
                             "size": [7, 6, 5, 4, 3, 2, 1]})
    assert sm.picker_note(clusters, limit=10) == "All 7 clusters are in the list (type in it to search)."
    note = sm.picker_note(clusters, limit=5)
    assert "5 largest clusters of 7" in note and "filter box" in note
    assert "of the 4 that contain “git”" in sm.picker_note(clusters, "git", limit=2)
    assert sm.picker_note(clusters, "git", limit=5) == "4 of 7 clusters contain “git”."
    # every cluster is reachable: the smallest one, past the limit, by a word of its text
    assert "a6" not in sm.cluster_options(clusters, limit=5)
    assert sm.cluster_options(clusters, "git w", limit=5) == ["a6"]


def test_merge_scope_counts_clusters_and_topics_and_asks_again_past_the_threshold():
    m = _members(200, n_clusters=50)
    m["topic"] = m["cluster_id"] % 4 - 1  # cluster c lies in topic c % 4 - 1 (-1: no topic)
    same_topic = [1, 5, 9]  # all topic 0
    scope = sm.merge_scope(m, same_topic)
    assert (scope.clusters, scope.scenarios, scope.topics, scope.no_topic) == (3, 12, (0,), 0)
    assert not scope.ask_again
    assert scope.summary() == ("This merge joins 3 dedup clusters (12 scenarios) into one cluster. "
                               "On the map, all 12 lie in topic 0.")
    mixed = sm.merge_scope(m, [0, 1, 2])
    assert mixed.topics == (0, 1) and mixed.no_topic == 4 and mixed.ask_again
    assert "2 different topics" in mixed.warning()
    # The walk read "(9 scenarios) from 1 HDBSCAN topic (and 5 in no topic)": say which topics, and
    # how many scenarios lie where, in the map's legend words.
    assert mixed.summary() == ("This merge joins 3 dedup clusters (12 scenarios) into one cluster. On the map, "
                               "4 of them are “no topic” (HDBSCAN noise) and 8 lie in topics 0 and 1.")
    assert "from 1 HDBSCAN topic" not in scope.summary()
    noise = sm.merge_scope(m, [0, 4])  # both in no topic
    assert noise.summary().endswith("none lies in a topic: all 8 are “no topic” (HDBSCAN noise).")
    many = sm.merge_scope(m, list(range(1, 50, 4)))  # 13 clusters of topic 0
    assert many.topics == (0,) and many.clusters == sm.MERGE_ASK_AGAIN_CLUSTERS + 3 and many.ask_again
    assert f"more than {sm.MERGE_ASK_AGAIN_CLUSTERS} clusters" in many.warning()


def test_edit_history_names_texts_and_sizes_as_they_were_never_cluster_ids():
    merged = [{"canonical": f"A state number {i}", "size": 10 - i} for i in range(5)]
    h = pd.DataFrame({"edit_id": ["e4", "e3", "e2", "e1"], "kind": ["rename", "split", "merge", "merge"],
                      "payload": [json.dumps({"anchor": "a", "text": "New text",
                                              "cluster": {"canonical": "Old text", "size": 4}}),
                                  json.dumps({"groups": [["a", "b"], ["c"]], "moved_texts": ["A moved one"],
                                              "cluster": {"canonical": "A state number 0", "size": 3}}),
                                  json.dumps({"scenario_ids": list("abcdefg"), "clusters": merged}),
                                  json.dumps({"scenario_ids": ["x", "y", "z"], "clusters": [1, 4]})],
                      "author": ["ann", "ann", "bob", "bob"],
                      "created_at": [datetime(2025, 1, 4), datetime(2025, 1, 3), datetime(2025, 1, 2),
                                     datetime(2025, 1, 1)],
                      "undone_at": [None, None, None, datetime(2025, 1, 3)]})
    v = sm.edit_history_view(h)
    assert v["what"].tolist() == [
        "renamed “Old text” (4) to “New text”",
        "split “A moved one” (scenario c) off “A state number 0” (3)",
        "merged 5 clusters (7 scenarios): “A state number 0” (10) + “A state number 1” (9) + "
        "“A state number 2” (8) + 2 more",
        "merged 2 clusters (3 scenarios)"]  # an edit from before texts were recorded: no ids
    assert v["undone"].tolist() == [False, False, False, True]
    assert sm.edit_history_view(h.iloc[0:0]).empty


def test_split_history_names_whose_scenario_moved():
    # The walk read "split 'A CSV table is in the working directory.' off 'A CSV table is in the
    # working directory.'": the moved scenario's text was the cluster's own; name its skill and role.
    same = "A CSV table is in the working directory."
    h = pd.DataFrame({"edit_id": ["e2", "e1"], "kind": ["split", "split"],
                      "payload": [json.dumps({"groups": [["a:pre", "b:pre"], ["c:pre"]], "moved_texts": [same],
                                              "moved_members": ["csv-stats · pre"],
                                              "cluster": {"canonical": same, "size": 3}}),
                                  # recorded before the members were: the scenario id stands in
                                  json.dumps({"groups": [["a:pre"], ["0123456789abcdef:post", "x:pre"]],
                                              "moved_texts": [same, "Another"],
                                              "cluster": {"canonical": same, "size": 3}})],
                      "author": ["ann", "ann"], "created_at": [datetime(2025, 1, 2), datetime(2025, 1, 1)],
                      "undone_at": [None, None]})
    assert sm.edit_history_view(h)["what"].tolist() == [
        f"split “{same}” (csv-stats · pre) off “{same}” (3)",
        f"split “{same}” (scenario 01234567:post) and 1 more off “{same}” (3)"]
