"""`graph build` end to end on the demo workspace: incremental, edits survive, sampling stores paths."""
from __future__ import annotations

import numpy as np

from pipeline.graph import edits
from pipeline.graph.assemble import assemble, graph_stats
from pipeline.graph.build import BuildOptions, build_graph
from pipeline.graph.sample_run import sample
from workbench.store import graph as store
from workbench.store.status import workspace_status


def test_built_graph_is_complete_and_consistent(graph_workspace):
    status = workspace_status(graph_workspace.db)
    sc = status["scenarios"]
    assert sc["raw"] == 2 * sc["skills_with_scenarios"] > 400
    assert 0 < sc["clusters"] <= sc["raw"]
    assert status["bridges"]["candidates"] >= status["bridges"]["verified"] > 0
    members = store.members_table(graph_workspace.db)
    assert len(members) == sc["raw"] and members["x"].notna().all() and members["topic"].notna().all()
    clusters = store.clusters_table(graph_workspace.db)
    assert clusters["size"].sum() == sc["raw"]
    g = assemble(graph_workspace.db)
    stats = graph_stats(g)
    assert stats["nodes"] == sc["clusters"] and stats["transitions"] >= stats["skill_edges"] > 0
    assert status["paths"]["total"] == 400


def test_second_build_recomputes_nothing(graph_workspace):
    report = build_graph(graph_workspace, BuildOptions())
    assert report.dedup_reused and report.embedded == 0
    assert report.verdicts_reused == report.candidates
    assert "projection_s" not in report.timings


def test_merge_survives_rebuild_and_can_be_undone(graph_workspace):
    before = store.clusters_table(graph_workspace.db)
    a, b = before.iloc[0]["cluster_id"], before.iloc[1]["cluster_id"]
    ids_a = set(store.members_table(graph_workspace.db).query("cluster_id == @a")["scenario_id"])
    ids_b = set(store.members_table(graph_workspace.db).query("cluster_id == @b")["scenario_id"])
    edits.merge(graph_workspace, [int(a), int(b)], author="tester")
    after = store.members_table(graph_workspace.db).set_index("scenario_id")["cluster_id"]
    assert after.loc[list(ids_a | ids_b)].nunique() == 1
    assert len(store.clusters_table(graph_workspace.db)) == len(before) - 1
    build_graph(graph_workspace, BuildOptions(force=True))  # a full re-run of dedup keeps the merge
    again = store.members_table(graph_workspace.db).set_index("scenario_id")["cluster_id"]
    assert again.loc[list(ids_a | ids_b)].nunique() == 1
    assert edits.undo(graph_workspace)
    restored = store.members_table(graph_workspace.db).set_index("scenario_id")["cluster_id"]
    assert restored.loc[list(ids_a)].nunique() == 1 and restored.loc[list(ids_b)].nunique() == 1
    assert restored.loc[next(iter(ids_a))] != restored.loc[next(iter(ids_b))]


def test_rename_and_split(graph_workspace):
    clusters = store.clusters_table(graph_workspace.db)
    big = clusters[clusters["size"] >= 2].iloc[0]
    edits.rename(graph_workspace, int(big["cluster_id"]), "A renamed state", author="t")
    renamed = store.clusters_table(graph_workspace.db).set_index("anchor").loc[big["anchor"]]
    assert renamed["canonical"] == "A renamed state" and renamed["renamed"]
    members = store.members_table(graph_workspace.db)
    cid = int(renamed["cluster_id"])
    mine = members[members["cluster_id"] == cid]["scenario_id"].tolist()
    edits.split(graph_workspace, cid, mine[:1], author="t")
    after = store.members_table(graph_workspace.db).set_index("scenario_id")["cluster_id"]
    assert after.loc[mine[0]] != after.loc[mine[1]]


def test_sampling_is_reproducible_and_counts_persist(graph_workspace):
    r1 = sample(graph_workspace, "random-walk", 50, seed=3)
    r2 = sample(graph_workspace, "random-walk", 50, seed=3)
    steps = store.path_steps(graph_workspace.db)
    s1 = steps[steps["batch_id"] == r1.batch_id][["idx", "step", "src_anchor", "skill_id", "dst_anchor"]]
    s2 = steps[steps["batch_id"] == r2.batch_id][["idx", "step", "src_anchor", "skill_id", "dst_anchor"]]
    assert np.array_equal(s1.to_numpy(), s2.to_numpy())
    nodes_before, skills_before = store.visit_counts(graph_workspace.db)
    sample(graph_workspace, "inverse-frequency", 30, seed=9)
    nodes_after, skills_after = store.visit_counts(graph_workspace.db)
    assert sum(skills_after.values()) > sum(skills_before.values())
    assert sum(nodes_after.values()) > sum(nodes_before.values())
