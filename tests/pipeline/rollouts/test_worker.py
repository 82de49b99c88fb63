"""The worker's outcome of a trial (pure: no Docker) and the driver's commit of it: hostile
verifier file names never leave the rollout's folder, failures always have a class, and a
crashed worker is a stored rollout with its error. With real Docker: what travels to a Ray
worker (a pickled context, an item carrying its task's files) runs with no workspace, and a
worker builds the task image its engine lacks."""
import functools
import json
import pickle
import shutil
import threading

import pytest

from pipeline.agents.protocol import AgentResult
from pipeline.rollouts.commit import commit_outcome
from pipeline.rollouts.models import AgentSpec, RolloutItem
from pipeline.rollouts.selection import make_items, select_tasks
from pipeline.rollouts.worker import (FILE_CAP_BYTES, RolloutError, WorkerContext, crashed_outcome, ensure_image,
                                      outcome_of, run_rollout)
from pipeline.trials.models import TrialResult
from workbench.sandbox.task_toml import parse as parse_task_toml
from workbench.store import rollouts as store
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws, touch_environment  # noqa: F401


def _item(sample=0, agent="oracle"):
    return RolloutItem(task_id="t1", bundle_dir="tasks/t1", bundle_hash="b" * 64, image="workbench/env:x",
                       agent=agent, agent_key=f"{agent}@1", model=None, sample=sample)


def _trial(reward, tests, failure_class=None, verifier_files=None, details=None, **agent):
    return TrialResult(agent=AgentResult(status="completed", trajectory={"schema_version": "ATIF-v1.6"},
                                         log="$ bash /solution/solve.sh\nok", turns=1, agent_s=2.0, **agent),
                       reward=reward, tests=tests, problem=None, failure_class=failure_class, log="tests ran",
                       verifier_files=verifier_files or {}, details=details or {}, timings={"agent_s": 2.0, "verifier_s": 1.0, "total_s": 4.0})


def test_a_passing_trial_becomes_a_record_and_its_folder_files():
    tests = [{"name": "test_a", "outcome": "passed", "message": ""}]
    out = outcome_of(_item(), _trial(1.0, tests, verifier_files={"reward.txt": b"1", "junit.xml": b"<x/>"},
                                     details={"tests": tests, "exit_code": 0}),
                     run_id="r1", label="oracle (the task's own solution)")
    rec = out.record
    assert rec.passed and rec.failure_class is None and rec.reward == 1.0 and rec.n_tests == 1 and rec.n_failed == 0
    assert rec.folder == f"runs/r1/rollouts/{_item().key}" and rec.rollout_id == _item().key
    assert rec.overhead_ms_per_turn == 2000.0 and rec.details["agent_status"] == "completed"
    assert "tests" not in rec.details and rec.details["timings"]["verifier_s"] == 1.0   # tests live in rollout_tests
    assert set(out.files) == {"trajectory.json", "agent.log", "verifier/reward.txt", "verifier/junit.xml", "result.json"}
    assert json.loads(out.files["result.json"])["rollout_id"] == rec.rollout_id
    assert b"solve.sh" in out.files["agent.log"] and b"tests ran" in out.files["agent.log"]


def test_failed_tests_without_a_class_are_a_test_assertion_and_no_tests_a_verifier_error():
    failing = [{"name": "test_a", "outcome": "passed"}, {"name": "test_b", "outcome": "failed", "message": "x"}]
    rec = outcome_of(_item(), _trial(0.0, failing), run_id="r1", label="l").record
    assert not rec.passed and rec.failure_class == "test_assertion" and rec.n_failed == 1
    rec = outcome_of(_item(), _trial(None, []), run_id="r1", label="l").record
    assert not rec.passed and rec.failure_class == "verifier_error"
    rec = outcome_of(_item(), _trial(0.0, failing, failure_class="timeout"), run_id="r1", label="l").record
    assert rec.failure_class == "timeout"                     # the trial's own class wins


def test_hostile_verifier_file_names_are_dropped_and_big_files_cut(workspace):
    files = {"../../escape.txt": b"x", "/etc/passwd": b"x", "ok/ctrf.json": b"{}",
             "big.log": b"y" * (FILE_CAP_BYTES + 10)}
    out = outcome_of(_item(), _trial(1.0, [{"name": "t", "outcome": "passed"}], verifier_files=files),
                     run_id="r1", label="l")
    assert "verifier/ok/ctrf.json" in out.files and len(out.files["verifier/big.log"]) == FILE_CAP_BYTES
    assert not any("escape" in p or "passwd" in p for p in out.files)
    dropped = out.record.details["verifier_files_dropped"]
    assert len(dropped) == 3 and any("'..' is not allowed" in d for d in dropped)
    dest = commit_outcome(workspace, out)
    assert dest == workspace.root / out.record.folder and (dest / "verifier/ok/ctrf.json").exists()
    assert not (workspace.root.parent / "escape.txt").exists()
    assert store.get_rollout(workspace.db, out.record.rollout_id)["passed"]


def test_a_crashed_worker_is_stored_with_its_error_and_traceback(workspace):
    try:
        raise RuntimeError("the engine went away")
    except RuntimeError as exc:
        out = crashed_outcome(_item(agent="ablation"), exc, run_id="r2")
    dest = commit_outcome(workspace, out)
    row = store.get_rollout(workspace.db, out.record.rollout_id)
    assert row["failure_class"] == "crashed" and not row["passed"]
    assert row["error"] == "RuntimeError: the engine went away"
    assert "verifier probe" in row["agent_label"]             # ablation says it is a probe, crashed or not
    assert "Traceback" in (dest / "agent.log").read_text()
    assert json.loads((dest / "result.json").read_text())["failure_class"] == "crashed"


def test_a_commit_replaces_an_older_copy_of_the_folder_whole(workspace):
    first = outcome_of(_item(), _trial(1.0, [{"name": "t", "outcome": "passed"}],
                                       verifier_files={"stale.txt": b"old"}), run_id="r1", label="l")
    commit_outcome(workspace, first)
    again = outcome_of(_item(), _trial(1.0, [{"name": "t", "outcome": "passed"}]), run_id="r1", label="l")
    dest = commit_outcome(workspace, again)
    assert not (dest / "verifier/stale.txt").exists()
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]   # no temporary folder left beside it


# ---------------------------------------------------------------- travelling to a Ray worker (real Docker)

@pytest.mark.docker
def test_a_pickled_context_runs_an_item_that_carries_its_files_with_no_workspace(tasks_ws, engine):
    """What a Ray worker gets: the context's plain data (no engine, caller or the driver's stop
    event: they do not pickle) and an item carrying its task's files; it runs with no workspace."""
    ws, ids = tasks_ws
    target = select_tasks(ws, ids[:1])[0]
    spec = AgentSpec("oracle")
    [item] = make_items([target], agent="oracle", agent_key=spec.make().config_key(), model=None, k=1,
                        temperature=0.0, carry_bundles=True)
    stop = threading.Event()
    stop.set()                      # the driver's own event: not the worker's business
    wc = WorkerContext(root=ws.root, agent=spec, run_id="r1", engine=engine, caller=object(), stop=stop)
    process = pickle.loads(pickle.dumps(functools.partial(run_rollout, wc=wc)))
    there = process.keywords["wc"]
    assert there.engine is None and there.caller is None and not there.stop.is_set() and there.agent == spec
    there.root = None               # no shared disk
    shutil.rmtree(ws.root / target.bundle_dir)
    out = process(item)
    assert out.record.passed and out.record.reward == 1.0 and out.record.rollout_id == item.key
    assert {"result.json", "agent.log", "trajectory.json"} <= set(out.files)
    assert any(p.startswith("verifier/") for p in out.files)


@pytest.mark.docker
def test_a_carried_bundle_that_is_not_the_planned_content_is_refused(tasks_ws):
    ws, ids = tasks_ws
    target = select_tasks(ws, ids[:1])[0]
    [item] = make_items([target], agent="oracle", agent_key="oracle@1", model=None, k=1, temperature=0.0,
                        carry_bundles=True)
    item.bundle.files["instruction.md"] = b"something else"
    with pytest.raises(RolloutError, match="its files as the item carried them are not the content planned"):
        run_rollout(item, WorkerContext(root=None, agent=AgentSpec("oracle"), run_id="r1"))


@pytest.mark.docker
def test_a_worker_whose_engine_lacks_the_task_image_builds_it_once(tasks_ws, engine):
    ws, ids = tasks_ws
    touch_environment(ws, ids[0])
    target = select_tasks(ws, ids[:1])[0]
    assert not engine.image_exists(target.image)
    [item] = make_items([target], agent="oracle", agent_key="oracle@1", model=None, k=1, temperature=0.0)
    try:
        out = run_rollout(item, WorkerContext(root=ws.root, agent=AgentSpec("oracle"), run_id="r1", engine=engine))
        assert out.record.passed and engine.image_exists(target.image)
        cfg = parse_task_toml(target.bundle.text("task.toml"))
        built = []
        engine_build = engine.build
        engine.build = lambda *a, **kw: built.append(a) or engine_build(*a, **kw)
        try:
            assert ensure_image(engine, item, target.bundle, cfg.build_timeout_sec) == target.image
        finally:
            del engine.build
        assert built == []          # present: not built again
    finally:
        engine.remove_image(target.image)    # ours alone: a unique environment
