"""The pipeline stages and the demo build as the Overview shows them (pure functions)."""
from __future__ import annotations

from pathlib import Path

from analysis.pipeline_state import demo_build_view, pipeline_stages
from workbench.demo_status import new_status

EMPTY = {"skills": {"total": 0, "accepted": 0, "rejected": 0, "pending": 0},
         "scenarios": {"skills_with_scenarios": 0, "raw": 0, "clusters": 0},
         "bridges": {"candidates": 0, "verified": 0}, "paths": {"total": 0}, "tasks": {"total": 0, "accepted": 0},
         "rollouts": {"total": 0}}


def test_the_rollouts_stage_names_its_command_and_counts_rollouts():
    rollouts = _stage(pipeline_stages(EMPTY), "Rollouts")
    assert rollouts.stage == "Rollouts" and rollouts.state == "not run"
    assert rollouts.command.startswith("workbench rollout ")
    ran = _stage(pipeline_stages({**EMPTY, "rollouts": {"total": 57}}), "Rollouts")
    assert ran.state == "done" and ran.detail.startswith("57 rollouts")


def _stage(stages, name):
    return next(s for s in stages if s.stage == name)


def test_the_evolution_stage_counts_variants_and_is_not_run_without_them():
    # a status of a workspace written before evolution existed has no "evolution" key
    assert _stage(pipeline_stages(EMPTY), "Difficulty evolution").state == "not run"
    ran = _stage(pipeline_stages({**EMPTY, "evolution": {"variants": 9, "accepted": 8}}), "Difficulty evolution")
    assert ran.state == "done" and ran.detail.startswith("9 variants") and "8 accepted" in ran.detail
    assert ran.command.startswith("workbench evolve ")


def _status(keys=("ingest", "graph", "tasks")):
    status = new_status(list(keys), Path("/ws/runs/demo-build.log"))
    status.started, status.updated = 1000.0, 1000.0
    return status


def test_a_running_build_counts_its_current_stage_by_items():
    status = _status()
    status.stage("ingest").state = "done"
    graph = status.stage("graph")
    graph.state, graph.done, graph.total = "running", 3, 4
    view = demo_build_view(status, running=True, now=1042.0)
    assert view.finished == 1 and abs(view.fraction - (1 + 3 / 4) / 3) < 1e-9
    assert "1 of 3 stages done; now: build the scenario graph" in view.headline and "42 s" in view.headline
    assert [r["progress"] for r in view.rows] == ["", "3 of 4", ""]


def test_a_dead_build_says_how_to_go_on_and_a_finished_one_what_it_lacks():
    status = _status()
    status.stage("ingest").state = "running"
    stopped = demo_build_view(status, running=False)
    assert not stopped.running and "stopped before it finished (0 of 3" in stopped.headline
    assert "workbench app --demo" in stopped.headline
    for key in ("ingest", "graph"):
        status.stage(key).state = "done"
    status.stage("tasks").state = "skipped"
    status.state, status.updated = "done", 1125.0
    status.missing = ["No Docker engine or base image"]
    done = demo_build_view(status, running=False)
    assert done.fraction == 1.0 and done.finished == 3 and done.headline == "The demo workspace was built in 2 min 5 s."
    assert done.missing == ["No Docker engine or base image"]
    assert demo_build_view(status, running=False, tasks_made=3).missing == []   # a batch made them later
