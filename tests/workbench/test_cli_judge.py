"""`workbench judge-trajectories` end to end: the scripted judge (--replay, a test double) on
unsolved tasks in the store; no endpoint and no --replay is a clear error."""
from __future__ import annotations

import json

from tests.helpers import cli
from tests.pipeline.judge.unsolved_fixture import make_unsolved
from workbench.store import tasks as task_store
from workbench.store import trajectory_judgements as judgements


def test_replay_judges_the_unsolved_tasks_and_withdraws_the_flawed_one(workspace):
    ws = make_unsolved(workspace)
    r = cli("judge-trajectories", "--replay", "--json", "--workspace", str(ws.root))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert "TEST DOUBLE" in report["note"]
    assert {j["task_id"]: j["verdict"] for j in report["judged"]} == {"flawed": "design_flaw", "hard": "too_hard"}
    assert report["summary"].startswith("trajectory judge: 3 unsolved task(s); judged 2 (1 design flaw(s), "
                                        "1 withdrawn, 1 too hard); 1 not sent")
    assert "flawed" not in set(task_store.accepted_tasks(ws.db)["task_id"])
    assert set(judgements.judgements(ws.db)["model"]) == {"scripted-trajectory-judge"}
    # the text report names the verdicts and where to undo
    again = cli("judge-trajectories", "--replay", "--run", "rollrun-judge", "--workspace", str(ws.root))
    assert again.returncode == 0, again.stderr
    assert "Note: the trajectory judge is a TEST DOUBLE" in again.stdout
    assert "judged before over the same 3 rollouts" in again.stdout


def test_without_an_endpoint_it_says_what_to_set(workspace):
    r = cli("judge-trajectories", "--workspace", str(workspace.root))
    assert r.returncode == 2
    assert "needs an LLM endpoint: set WORKBENCH_LLM_BASE_URL" in r.stderr and "--replay" in r.stderr


def test_an_unknown_run_or_no_rollouts_needed_is_refused(workspace):
    ws = make_unsolved(workspace)
    r = cli("judge-trajectories", "--replay", "--run", "rollrun-nope", "--workspace", str(ws.root))
    assert r.returncode == 2 and "no rollout run 'rollrun-nope' in this workspace" in r.stderr, r.stdout
    r = cli("judge-trajectories", "--replay", "--min-rollouts", "0", "--workspace", str(ws.root))
    assert r.returncode == 2 and "--min-rollouts must be at least 1, got 0" in r.stderr, r.stdout
    assert judgements.judgements(ws.db).empty                 # nothing judged, nothing withdrawn
