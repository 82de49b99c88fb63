"""Rollout batches end to end with real Docker on verified demo tasks: stored rollouts and
their folders (ATIF that Harbor's own validator accepts), resume by content key, ablation's
per-test failures, a crashed worker kept, cancel, and a missing task image built once."""
import json
import threading

import pytest

from pipeline.rollouts.batch import run_rollouts
from pipeline.trajectories.atif import validate_with_harbor
from workbench.sandbox.engine import Engine
from workbench.store import rollouts as store
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws, touch_environment  # noqa: F401

pytestmark = pytest.mark.docker


def _no_live_containers(engine):
    assert engine._live == {}
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_oracle_k2_on_two_tasks_stores_four_passing_rollouts_and_resume_runs_nothing(tasks_ws, engine):
    ws, ids = tasks_ws
    seen = []
    report = run_rollouts(ws, agent="oracle", task_ids=ids, k=2, concurrency=2, engine=engine, progress=seen.append)
    assert report.status == "done", report.as_dict()
    assert (report.total, report.ran, report.skipped, report.passed) == (4, 4, 0, 4)
    assert report.pass_at_1 == 1.0 and report.failure_classes == {}
    assert seen[-1] == {"total": 4, "done": 4, "ran": 4, "skipped": 0, "passed": 4, "failed": 0, "not_run": 0}
    frame = store.rollouts_frame(ws.db, report.run_id)
    assert len(frame) == 4 and set(frame.task_id) == set(ids) and sorted(frame["sample"]) == [0, 0, 1, 1]
    assert (frame.reward == 1.0).all() and frame.passed.all() and frame.failure_class.isna().all()
    assert (frame.agent_label == "oracle (the task's own solution)").all()
    run = store.get_run(ws.db, report.run_id)
    assert run["status"] == "done" and run["message"].startswith("4 of 4 rollouts stored")
    assert json.loads(run["params"])["counts"]["passed"] == 4 and json.loads(run["params"])["task_ids"] == ids
    trajectories = []
    for row in frame.itertuples():
        folder = ws.root / row.folder
        assert folder == ws.root / "runs" / report.run_id / "rollouts" / row.rollout_id
        result = json.loads((folder / "result.json").read_text())
        assert result["rollout_id"] == row.rollout_id and result["passed"] and result["reward"] == 1.0
        assert (folder / "agent.log").read_text().strip()
        assert list((folder / "verifier").iterdir())          # what the verifier wrote, as it wrote it
        trajectories.append(folder / "trajectory.json")
    assert validate_with_harbor(trajectories) == []          # Harbor's own validator, in its own venv
    tests = store.test_outcomes(ws.db, report.run_id)
    assert len(tests) >= 4 and set(tests.outcome) == {"passed"}
    _no_live_containers(engine)

    again = run_rollouts(ws, resume=True, run_id=report.run_id, engine=engine)
    assert again.run_id == report.run_id and again.status == "done"
    assert (again.ran, again.skipped, again.passed) == (0, 4, 4)      # nothing ran again
    other = run_rollouts(ws, agent="oracle", task_ids=ids, k=3, engine=engine)
    assert (other.skipped, other.ran) == (4, 2)                       # same key across batches: only sample 2 is new
    assert len(store.rollouts_frame(ws.db)) == 6


def test_ablation_rollouts_have_per_test_failures(tasks_ws, engine):
    ws, ids = tasks_ws
    report = run_rollouts(ws, agent="ablation", task_ids=ids[:1], k=2, engine=engine)
    assert report.status == "done" and report.ran == 2
    frame = store.rollouts_frame(ws.db, report.run_id)
    assert frame.agent_label.str.contains("verifier probe, not a model").all()
    failed = frame[~frame.passed]
    assert len(failed) >= 1 and set(failed.failure_class) == {"test_assertion"}
    for row in failed.itertuples():
        details = store.get_rollout(ws.db, row.rollout_id)["details"]
        assert details["left_out"]["label"]                            # which step it left out
        tests = store.test_outcomes(ws.db, report.run_id)
        mine = tests[tests.rollout_id == row.rollout_id]
        assert (mine.outcome == "failed").sum() == row.n_failed >= 1
    assert report.failure_classes == {"test_assertion": len(failed)}


def test_red_team_rollouts_try_one_attack_each_and_get_no_reward(tasks_ws, engine):
    from pipeline.agents.red_team.agent import ATTACK_ORDER
    ws, ids = tasks_ws
    report = run_rollouts(ws, agent="red-team", task_ids=ids[:1], k=len(ATTACK_ORDER), engine=engine)
    assert report.status == "done" and report.ran == len(ATTACK_ORDER)
    frame = store.rollouts_frame(ws.db, report.run_id)
    assert frame.agent_label.str.contains("reward hacks, never the task").all()
    assert not frame.passed.any() and (frame.reward.fillna(0) == 0).all()
    attacks = sorted(store.get_rollout(ws.db, r)["details"]["attack"] for r in frame.rollout_id)
    assert attacks == sorted(ATTACK_ORDER)          # sample k tried attack k


def test_a_worker_exception_is_stored_as_a_crashed_rollout(tasks_ws, engine):
    """The second task's bundle changes on disk once the first rollout is stored: its worker
    raises, and the rollout is kept as `crashed` with the error, not lost."""
    ws, ids = tasks_ws
    frame_before = {t: ws.root / f"tasks/{t}/instruction.md" for t in ids}

    def on_progress(c):
        if c["ran"] == 1:
            path = frame_before[ids[1]]
            path.write_text(path.read_text() + "\nchanged meanwhile\n")
    report = run_rollouts(ws, agent="nop", task_ids=ids, k=1, concurrency=1, engine=engine, progress=on_progress)
    assert report.status == "done" and report.ran == 2
    crashed = store.rollouts_frame(ws.db, report.run_id).set_index("task_id").loc[ids[1]]
    assert crashed.failure_class == "crashed" and not crashed.passed
    assert "RolloutError" in crashed.error and "changed on disk" in crashed.error
    log = (ws.root / crashed.folder / "agent.log").read_text()
    assert "Traceback" in log and "changed on disk" in log
    assert report.failure_classes["crashed"] == 1
    _no_live_containers(engine)


def test_cancel_mid_batch_leaves_the_run_cancelled_and_no_container(tasks_ws, engine):
    ws, ids = tasks_ws
    stop = threading.Event()

    def on_progress(c):
        if c["ran"] >= 1:
            stop.set()
    report = run_rollouts(ws, agent="oracle", task_ids=ids, k=3, concurrency=1, engine=engine, progress=on_progress,
                          stop=stop, stop_grace_s=2.0)
    assert report.status == "cancelled" and 1 <= report.ran < 6
    run = store.get_run(ws.db, report.run_id)
    assert run["status"] == "cancelled" and f"workbench rollout --resume {report.run_id}" in run["message"]
    assert len(store.rollouts_frame(ws.db, report.run_id)) == report.ran
    _no_live_containers(engine)
    done = run_rollouts(ws, resume=True, run_id=report.run_id, engine=engine)
    assert done.status == "done" and done.skipped == report.ran and done.stored == 6


def test_a_missing_task_image_is_built_once_before_its_rollouts(tasks_ws, engine):
    ws, ids = tasks_ws
    touch_environment(ws, ids[0])
    report = run_rollouts(ws, agent="oracle", task_ids=ids[:1], k=2, engine=engine)
    try:
        assert report.built == [ids[0]] and report.status == "done" and report.passed == 2
        image = json.loads((ws.root / store.rollouts_frame(ws.db, report.run_id).folder[0] / "result.json")
                           .read_text())
        assert image["passed"]
    finally:
        from pipeline.rollouts.selection import select_tasks
        engine.remove_image(select_tasks(ws, ids[:1])[0].image)   # ours alone: a unique environment


def test_the_accepted_set_leaves_withdrawn_tasks_out_and_unknown_ids_are_named(tasks_ws):
    from pipeline.rollouts.selection import SelectionError, select_tasks
    from workbench.store import task_events
    from workbench.store import tasks as task_store
    ws, ids = tasks_ws
    accepted = list(task_store.accepted_tasks(ws.db).task_id)
    assert [t.task_id for t in select_tasks(ws, None)] == accepted and set(ids) <= set(accepted)
    task_events.withdraw(ws.db, ids[0], "user", "a test withdrew it")
    assert ids[0] not in [t.task_id for t in select_tasks(ws, None)]
    assert [t.task_id for t in select_tasks(ws, [ids[0]])] == [ids[0]]     # named explicitly, it still runs
    with pytest.raises(SelectionError, match="unknown task id\\(s\\): nope"):
        select_tasks(ws, [ids[1], "nope"])
