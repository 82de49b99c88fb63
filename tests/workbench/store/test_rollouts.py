"""Rollout rows in a real DuckDB file: a rollout replaced whole with its tests, malformed records
refused with nothing written, run status checked, content keys."""
import dataclasses

import pytest

from pipeline.rollouts.models import RolloutItem, RolloutRecord, rollout_key
from workbench.store import rollouts as store


def _record(rid="ro-1", **kw) -> dict:
    base = RolloutRecord(rollout_id=rid, run_id="run-1", task_id="t1", agent="ablation",
                         agent_label="ablation (probe)", model=None, sample=0, temperature=0.0, source="workbench",
                         reward=0.0, passed=False, failure_class="test_assertion", n_tests=2, n_failed=1, turns=1,
                         parse_errors=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, agent_s=1.0,
                         verifier_s=1.0, total_s=2.5, overhead_ms_per_turn=None, folder="runs/run-1/rollouts/ro-1",
                         details={"left_out": 2})
    return {**dataclasses.asdict(base), **kw}


def test_save_replaces_a_rollout_with_its_tests(workspace):
    db = workspace.db
    store.create_run(db, "run-1", agent="ablation", model=None, k=1, concurrency=1, n_tasks=1, params={"k": 1})
    store.save_rollout(db, _record(), [{"name": "test_a", "outcome": "passed"},
                                       {"name": "test_b", "outcome": "failed", "message": "assert 1 == 2"}])
    store.save_rollout(db, _record(), [{"name": "test_a", "outcome": "failed"}])
    with db.read() as con:
        assert con.execute("SELECT count(*) FROM rollouts").fetchone()[0] == 1
        assert con.execute("SELECT test_name, outcome FROM rollout_tests").fetchall() == [("test_a", "failed")]
    assert store.get_rollout(db, "ro-1")["details"] == {"left_out": 2}
    assert store.finished_keys(db) == {"ro-1"} and store.finished_keys(db, ["ro-2"]) == set()
    run = store.runs(db).iloc[0]
    assert (run["n_done"], run["n_passed"]) == (1, 0)


@pytest.mark.parametrize("bad, message", [
    ({"passed": True}, "passed, yet failure class"),
    ({"failure_class": None}, "failed without a failure class"),
    ({"folder": ""}, "missing folder"),
])
def test_a_malformed_record_is_refused_and_nothing_is_written(workspace, bad, message):
    with pytest.raises(store.RolloutRecordError, match=message):
        store.save_rollout(workspace.db, _record(**bad), [])
    assert store.finished_keys(workspace.db) == set()


def test_an_unknown_test_outcome_is_refused(workspace):
    with pytest.raises(store.RolloutRecordError, match="test 'x' has outcome 'weird'"):
        store.save_rollout(workspace.db, _record(), [{"name": "x", "outcome": "weird"}])
    assert store.finished_keys(workspace.db) == set()


def test_run_status_is_checked_and_finishing_stamps_the_time(workspace):
    db = workspace.db
    store.create_run(db, "run-1", agent="nop", model=None, k=3, concurrency=2, n_tasks=4, params={})
    with pytest.raises(ValueError, match="run status 'finished'"):
        store.set_run_status(db, "run-1", "finished")
    store.set_run_status(db, "run-1", "running", pid=123)
    store.set_run_status(db, "run-1", "done", "12 rollouts")
    run = store.get_run(db, "run-1")
    assert (run["status"], run["pid"], run["message"]) == ("done", 123, "12 rollouts") and run["finished_at"]


def test_the_content_key_changes_with_content_agent_and_sample():
    item = RolloutItem(task_id="t", bundle_dir="tasks/t", bundle_hash="h", image=None, agent="oracle",
                       agent_key="oracle-v1", model=None, sample=0)
    assert item.key == rollout_key("h", "oracle-v1", 0)
    assert len({item.key, rollout_key("h2", "oracle-v1", 0), rollout_key("h", "nop-v1", 0),
                rollout_key("h", "oracle-v1", 1)}) == 4
