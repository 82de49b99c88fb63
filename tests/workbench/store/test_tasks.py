"""The task store is handed the verdict (pipeline.verify.failures writes the rule once) and
lists the checks in CHECK_NAMES order: per-check columns, a task's checks, the funnel."""
import pandas as pd
import pytest

from pipeline.verify.failures import CHECK_NAMES, first_failed, verdict
from workbench.models import CheckResult, TaskRecord
from workbench.store import tasks as store

RUN = "run-f1"


def _task(ws, task_id: str, path_id: str, provider: str = "offline") -> None:
    store.save_task(ws.db, TaskRecord(task_id=task_id, name=f"workbench/{task_id}", path_id=path_id,
                                      category="text-processing", difficulty="easy", n_steps=1, recipes=[],
                                      skill_ids=[], scenario_ids=[], provider=provider,
                                      bundle_dir=f"tasks/{task_id}", bundle_hash="h"))
    store.set_path_stage(ws.db, RUN, path_id, "synthesized", task_id)


OFFLINE = ("build", "noop", "oracle", "rubric", "decontam")   # the red-team probe turned off, no judge


def _checks(failing: tuple[str, ...] = (), names: tuple[str, ...] = OFFLINE) -> list[CheckResult]:
    return [CheckResult(name=n, passed=n not in failing, reason=f"{n} {'failed' if n in failing else 'ok'}")
            for n in names]


def _save(ws, task_id: str, checks: list[CheckResult]) -> str:
    return store.save_verification(ws.db, task_id, checks, None, RUN, f"p-{task_id}",
                                   verdict=verdict(checks), failed_check=first_failed(checks))


@pytest.fixture
def run_ws(workspace):
    store.create_run(workspace.db, RUN, "random-walk", 6, 1, "llm", 2, None)
    store.attach_paths(workspace.db, RUN, "batch-1", [f"p-t{i}" for i in range(6)])
    for i in range(6):
        _task(workspace, f"t{i}", f"p-t{i}", provider="offline" if i == 0 else "llm")
    return workspace


def test_the_store_keeps_the_verdict_and_failed_check_it_is_handed(run_ws):
    # Listed out of verification order (a judge appended by its caller, a rubric before the oracle):
    # the failed check stored is the first in CHECK_NAMES order, as pipeline.verify.failures decides.
    checks = [CheckResult(name="build", passed=True), CheckResult(name="rubric", passed=False, reason="leak"),
              CheckResult(name="noop", passed=False, reason="tests pass untouched")]
    assert _save(run_ws, "t1", checks) == "rejected"
    row = store.tasks_frame(run_ws.db).set_index("task_id").loc["t1"]
    assert (row["failed_check"], row["reason"]) == ("noop", "tests pass untouched")


def test_a_verdict_that_does_not_fit_is_refused_with_what_was_wrong(run_ws):
    checks = _checks(("oracle",))
    with pytest.raises(ValueError, match="task t1: verdict 'maybe' is not one of accepted, rejected"):
        store.save_verification(run_ws.db, "t1", checks, None, verdict="maybe", failed_check=None)
    with pytest.raises(ValueError, match="task t1: an accepted verdict needs checks and no failed check .*'oracle'"):
        store.save_verification(run_ws.db, "t1", checks, None, verdict="accepted", failed_check=checks[2])
    with pytest.raises(ValueError, match="an accepted verdict needs checks"):
        store.save_verification(run_ws.db, "t1", [], None, verdict="accepted", failed_check=None)
    assert store.task_verdict(run_ws.db, "t1") == "pending"            # nothing was written


def test_every_check_has_a_column_and_a_place_in_the_order(run_ws):
    judged = _checks(names=CHECK_NAMES)
    assert _save(run_ws, "t1", judged[::-1]) == "accepted"             # stored in reverse
    frame = store.tasks_frame(run_ws.db).set_index("task_id")
    assert all(f"{n}_ok" in frame for n in CHECK_NAMES)
    assert bool(frame.loc["t1", "judge_ok"]) and pd.isna(frame.loc["t2", "judge_ok"])   # t2: not verified
    assert store.checks_for(run_ws.db, "t1")["check_name"].tolist() == list(CHECK_NAMES)


def test_the_funnel_has_a_stage_per_check_and_a_check_not_run_narrows_nothing(run_ws):
    _save(run_ws, "t0", _checks())                                     # offline: never judged, accepted
    _save(run_ws, "t1", _checks(names=CHECK_NAMES))                    # judged, accepted
    _save(run_ws, "t2", _checks(("judge",), names=CHECK_NAMES))        # the judge failed it
    _save(run_ws, "t3", _checks(("decontam",)))                        # a benchmark n-gram
    _save(run_ws, "t4", _checks(("oracle",)))
    _save(run_ws, "t5", _checks(("redteam",), names=("build", "noop", "oracle", "redteam", "rubric", "decontam")))
    funnel = store.funnel_counts(run_ws.db, RUN)
    assert list(funnel) == list(store.FUNNEL) == ["sampled", "synthesized", "built", "noop", "oracle", "redteam",
                                                  "rubric", "decontam", "judge", "accepted"]
    assert funnel == {"sampled": 6, "synthesized": 6, "built": 6, "noop": 6, "oracle": 5, "redteam": 4, "rubric": 4,
                      "decontam": 3, "judge": 2, "accepted": 2}
    assert store.FUNNEL_LABELS["judge"] == "judge ok" and store.FUNNEL_LABELS["noop"] == "no-op ok"
    assert store.FUNNEL_LABELS["redteam"] == "red-team ok"
