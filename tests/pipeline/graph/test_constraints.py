"""Cluster edits become dedup constraints; later edits win over earlier ones they contradict."""
from __future__ import annotations

from pipeline.graph.constraints import from_edits

IDX = {f"s{i}": i for i in range(10)}


def edit(kind, **payload):
    return {"kind": kind, "payload": payload}


def test_merge_split_rename_map_to_indices():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "missing"]),
                    edit("split", groups=[["s3"], ["s4", "s5"]]),
                    edit("rename", anchor="s7", text=" Logs rotated ")], IDX)
    assert c.must_link == [[1, 2], [4, 5]]  # the scenarios split off stay together
    assert c.cannot_link == [([3], [4, 5])]
    assert c.renames == {7: "Logs rotated"}


def test_a_later_split_takes_only_its_moved_scenarios_out_of_a_merge():
    # merge 5 scenarios, then split one off: the other 4 stay merged (dropping the whole merge
    # undid it: 377 clusters again instead of 281 + 1 after splitting 1 of 105 scenarios)
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "s3", "s4", "s5"]),
                    edit("split", groups=[["s1", "s2", "s3", "s4"], ["s5"]])], IDX)
    assert c.must_link == [[1, 2, 3, 4]] and c.cannot_link == [([1, 2, 3, 4], [5])]


def test_scenarios_split_off_together_form_one_cluster():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "s3", "s4"]),
                    edit("split", groups=[["s1", "s2"], ["s3", "s4"]])], IDX)
    assert sorted(c.must_link) == [[1, 2], [3, 4]] and c.cannot_link == [([1, 2], [3, 4])]


def test_a_split_leaves_merges_that_hold_one_side_only():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2"]), edit("merge", scenario_ids=["s6", "s7"]),
                    edit("split", groups=[["s1", "s2"], ["s3"]])], IDX)
    assert c.must_link == [[1, 2], [6, 7]] and c.cannot_link == [([1, 2], [3])]


def test_a_merge_after_a_split_rejoins_and_a_chain_of_merges_wins_over_a_stale_split():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "s3"]), edit("split", groups=[["s1", "s2"], ["s3"]]),
                    edit("merge", scenario_ids=["s1", "s2", "s3"])], IDX)
    assert c.cannot_link == [] and [1, 2, 3] in c.must_link
    # no single merge holds both sides of the split, but a chain of two does (s1-s4, s4-s3)
    stale = from_edits([edit("split", groups=[["s1"], ["s3"]]), edit("merge", scenario_ids=["s1", "s4"]),
                        edit("merge", scenario_ids=["s4", "s3"])], IDX)
    assert stale.cannot_link == [] and stale.must_link == [[1, 4], [3, 4]]


def test_a_later_merge_drops_the_split_it_contradicts():
    c = from_edits([edit("split", groups=[["s1"], ["s2"]]), edit("merge", scenario_ids=["s1", "s2"])], IDX)
    assert c.cannot_link == [] and c.must_link == [[1, 2]]


def test_edits_naming_only_unknown_scenarios_are_ignored():
    c = from_edits([edit("merge", scenario_ids=["x", "y"]), edit("rename", anchor="x", text="t")], IDX)
    assert c.must_link == [] and c.renames == {}


def test_a_rename_stays_with_the_side_that_stays_when_its_anchor_is_split_off():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "s3"]), edit("rename", anchor="s3", text="Merged"),
                    edit("split", groups=[["s1", "s2"], ["s3"]])], IDX)
    assert c.renames == {1: "Merged"}
    # a rename anchored on the staying side is kept; the later of two renames comes last (it wins)
    c = from_edits([edit("rename", anchor="s1", text="Old"), edit("rename", anchor="s3", text="New"),
                    edit("split", groups=[["s1", "s2"], ["s3"]])], IDX)
    assert list(c.renames.items()) == [(1, "New")]
    c = from_edits([edit("rename", anchor="s3", text="Old"), edit("rename", anchor="s1", text="New"),
                    edit("split", groups=[["s1", "s2"], ["s3"]])], IDX)
    assert list(c.renames.items()) == [(1, "New")]
    c = from_edits([edit("rename", anchor="s1", text="First"), edit("rename", anchor="s2", text="Second"),
                    edit("rename", anchor="s1", text="Third")], IDX)
    assert list(c.renames.items()) == [(2, "Second"), (1, "Third")]


def test_scenarios_split_off_are_a_cluster_of_their_own_until_a_merge_joins_them():
    c = from_edits([edit("split", groups=[["s1", "s2"], ["s3"]])], IDX)
    assert c.isolated == [[3]]
    assert c.cannot_link_all(5) == [([1, 2], [3]), ([3], [0, 1, 2, 4])]
    c = from_edits([edit("split", groups=[["s1", "s2"], ["s3"]]), edit("merge", scenario_ids=["s3", "s6"])], IDX)
    assert c.isolated == [] and c.cannot_link == [([1, 2], [3])]
