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
    assert c.must_link == [[1, 2]]
    assert c.cannot_link == [([3], [4, 5])]
    assert c.renames == {7: "Logs rotated"}


def test_a_later_split_drops_the_merge_it_contradicts():
    c = from_edits([edit("merge", scenario_ids=["s1", "s2", "s3"]), edit("split", groups=[["s1"], ["s2", "s3"]])], IDX)
    assert c.must_link == [] and c.cannot_link == [([1], [2, 3])]


def test_a_later_merge_drops_the_split_it_contradicts():
    c = from_edits([edit("split", groups=[["s1"], ["s2"]]), edit("merge", scenario_ids=["s1", "s2"])], IDX)
    assert c.cannot_link == [] and c.must_link == [[1, 2]]


def test_edits_naming_only_unknown_scenarios_are_ignored():
    c = from_edits([edit("merge", scenario_ids=["x", "y"]), edit("rename", anchor="x", text="t")], IDX)
    assert c.must_link == [] and c.renames == {}
