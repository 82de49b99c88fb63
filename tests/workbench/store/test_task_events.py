"""Withdrawals and restores of accepted tasks: events on record, tasks.withdrawn in step, and
the accepted set (one rule) without withdrawn tasks wherever it is read."""
import pytest

from pipeline.verify.failures import CHECK_NAMES, first_failed, verdict
from workbench.models import CheckResult, TaskRecord
from workbench.store import status
from workbench.store import task_events as events
from workbench.store import tasks as store

RUN = "run-ev"


@pytest.fixture
def ws3(workspace):
    """Three tasks of one run: a0 and a1 accepted, r2 rejected at the oracle."""
    store.create_run(workspace.db, RUN, "random-walk", 3, 1, "offline", 1, None)
    ids = ["a0", "a1", "r2"]
    store.attach_paths(workspace.db, RUN, "b", [f"p-{t}" for t in ids])
    for t in ids:
        store.save_task(workspace.db, TaskRecord(task_id=t, name=f"workbench/{t}", path_id=f"p-{t}",
                                                 category="text-processing", difficulty="easy", n_steps=1,
                                                 recipes=[], skill_ids=[], scenario_ids=[], provider="offline",
                                                 bundle_dir=f"tasks/{t}", bundle_hash="h"))
        checks = [CheckResult(name=n, passed=not (t == "r2" and n == "oracle")) for n in CHECK_NAMES[:5]]
        store.save_verification(workspace.db, t, checks, None, RUN, f"p-{t}", verdict=verdict(checks),
                                failed_check=first_failed(checks))
    return workspace


def _withdrawn_column(ws) -> dict:
    with ws.db.read() as con:
        return dict(con.execute("SELECT task_id, withdrawn FROM tasks").fetchall())


def test_withdraw_takes_a_task_out_of_every_reading_of_the_accepted_set(ws3):
    assert list(store.accepted_tasks(ws3.db)["task_id"]) == ["a0", "a1"]
    events.withdraw(ws3.db, "a1", "trajectory_judge", "test_x checks a file the instruction never names")
    assert list(store.accepted_tasks(ws3.db)["task_id"]) == ["a0"]
    assert store.funnel_counts(ws3.db, RUN)["accepted"] == 1
    assert store.funnel_counts(ws3.db)["accepted"] == 1
    assert status.workspace_status(ws3.db)["tasks"] == {"total": 3, "accepted": 1}
    assert _withdrawn_column(ws3) == {"a0": False, "a1": True, "r2": False}
    # the verification verdict itself is untouched: the run's own report still counts it
    assert store.task_verdict(ws3.db, "a1") == "accepted"
    assert store.run_summary(ws3.db, RUN)["accepted"] == 2
    w = events.withdrawal(ws3.db, "a1")
    assert (w["source"], w["reason"]) == ("trajectory_judge", "test_x checks a file the instruction never names")
    assert events.withdrawal(ws3.db, "a0") is None


def test_restore_undoes_the_withdrawal_and_both_stay_on_record(ws3):
    events.withdraw(ws3.db, "a0", "trajectory_judge", "flawed")
    events.restore(ws3.db, "a0", "user", "the test is fine")
    assert list(store.accepted_tasks(ws3.db)["task_id"]) == ["a0", "a1"]
    assert _withdrawn_column(ws3)["a0"] is False and events.withdrawal(ws3.db, "a0") is None
    # withdrawn again right away: three events, strictly ordered even within one clock tick
    events.withdraw(ws3.db, "a0", "user", "on second thought")
    h = events.history(ws3.db, "a0")
    assert list(h["event"]) == ["withdrawn", "restored", "withdrawn"]
    assert list(h["source"]) == ["trajectory_judge", "user", "user"]
    assert h["event_at"].is_monotonic_increasing and h["event_at"].is_unique
    assert events.withdrawal(ws3.db, "a0")["reason"] == "on second thought"


@pytest.mark.parametrize("call, args, message", [
    (events.withdraw, ("nope", "user", "r"), "task nope: no such task"),
    (events.withdraw, ("r2", "user", "r"), "task r2: only an accepted task can be withdrawn .*rejected"),
    (events.restore, ("a0", "user", "r"), "task a0: not withdrawn, nothing to restore"),
    (events.withdraw, ("a0", "robot", "r"), "task a0: event source 'robot' is not one of trajectory_judge, user"),
    (events.withdraw, ("a0", "user", "  "), "task a0: a withdrawn event needs a reason"),
])
def test_a_change_that_cannot_be_made_is_refused_and_writes_nothing(ws3, call, args, message):
    with pytest.raises(events.TaskEventError, match=message):
        call(ws3.db, *args)
    assert events.history(ws3.db, args[0]).empty
    assert list(store.accepted_tasks(ws3.db)["task_id"]) == ["a0", "a1"]


def test_withdrawing_twice_is_refused(ws3):
    events.withdraw(ws3.db, "a0", "user", "once")
    with pytest.raises(events.TaskEventError, match="task a0: already withdrawn"):
        events.withdraw(ws3.db, "a0", "user", "twice")
    assert len(events.history(ws3.db, "a0")) == 1


def test_the_accepted_set_rule_is_one_fragment():
    assert events.accepted_set() == "(verdict = 'accepted' AND NOT coalesce(withdrawn, false))"
    assert events.accepted_set("t") == "(t.verdict = 'accepted' AND NOT coalesce(t.withdrawn, false))"
