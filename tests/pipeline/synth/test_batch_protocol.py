"""The batch calls only the Synthesizer protocol and stores what a synthesizer hands back:
its checks (no verification of its own), its repair attempts, its provider and timings; a
spent budget stops the batch cleanly and resume finishes it. The synthesizers here are real
objects implementing the protocol (no Docker build: they hand over their checks)."""
from __future__ import annotations

import hashlib
import threading
import time

import pandas as pd
import pytest

from pipeline.repair.attempts import RepairAttempt
from pipeline.synth.batch import run_synth
from pipeline.synth.compose import SynthesizedTask
from pipeline.synth.protocol import PathContext, SynthOutcome, SynthTools
from pipeline.verify.failures import CHECK_NAMES
from tests.helpers import sum_bundle
from workbench.llm.budget import BudgetExceeded
from workbench.models import CheckResult
from workbench.store import repairs as repair_store
from workbench.store import tasks as store

pytestmark = pytest.mark.docker    # run_synth asks the engine for the base image (nothing is built)

TIMINGS = {"llm_s": 1.5, "docker_s": 0.5, "total_s": 2.5}   # as reported; the batch measures total_s itself
WORK_S = 0.05


class GivenChecks:
    """Makes a small task per path and says how it verified: the paths whose id hashes odd fail
    the judge after two repair attempts; the others pass every check."""
    provider = "llm"

    def __init__(self):
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def task_id(self, path: PathContext, seed: int) -> str:
        return hashlib.sha256(f"given|{seed}|{path.path_id}".encode()).hexdigest()[:16]

    @staticmethod
    def rejects(task_id: str) -> bool:
        return int(task_id, 16) % 2 == 1

    def synthesize(self, path: PathContext, seed: int, tools: SynthTools) -> SynthOutcome:
        with self._lock:
            self.calls.append(path.path_id)
        time.sleep(WORK_S)
        tid = self.task_id(path, seed)
        name = f"workbench/given-{tid[:10]}"
        task = SynthesizedTask(bundle=sum_bundle(name=name), name=name, category="text-processing",
                               difficulty="easy", recipes=[f"llm:{s.step.skill_name}" for s in path.steps],
                               task_id=tid, near_dup_key=tid)
        bad = self.rejects(tid)
        checks = [CheckResult(name=c, passed=not (bad and c == "judge"),
                              reason="criterion unambiguous failed" if bad and c == "judge" else "",
                              log=f"given {c}", details={"image": f"img-{tid}"} if c == "build" else {})
                  for c in CHECK_NAMES]
        attempts = [RepairAttempt(n=1, artifact="tests", check="oracle", reason="assertion failed after the oracle",
                                  diff="-a\n+b", prompt_tokens=10, completion_tokens=5, cost_usd=0.001,
                                  outcome="fixed"),
                    RepairAttempt(n=2, artifact="instruction", check="judge", reason="ambiguous", outcome="exhausted",
                                  evidence=["instruction.md: 'the file'"])] if bad else []
        return SynthOutcome(task, checks=checks, attempts=attempts, timings=dict(TIMINGS),
                            error="repairs exhausted: judge (instruction)" if bad else None)


class BudgetAfter(GivenChecks):
    """Spends its budget on the (k+1)-th path: that call raises BudgetExceeded."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def synthesize(self, path, seed, tools):
        with self._lock:
            n = len(self.calls)
        if n >= self.k:
            with self._lock:
                self.calls.append(path.path_id)
            raise BudgetExceeded("budget of $0.2500 spent ($0.2600)")
        return super().synthesize(path, seed, tools)


def test_given_checks_attempts_provider_and_timings_are_stored(graph_workspace):
    ws = graph_workspace
    synth = GivenChecks()
    report = run_synth(ws, n_paths=6, seed=2, concurrency=2, synthesizer=synth)
    assert report.status == "finished" and report.provider == "llm"
    assert len(synth.calls) == report.sampled == report.verified
    frame = store.tasks_frame(ws.db).set_index("task_id")
    rejected = {t for t in frame.index if GivenChecks.rejects(t)}
    assert report.rejected == len(rejected) and report.accepted == len(frame) - len(rejected)
    assert set(frame.provider) == {"llm"} and store.get_run(ws.db, report.run_id)["provider"] == "llm"
    for task_id, row in frame.iterrows():
        checks = store.checks_for(ws.db, task_id).set_index("check_name")
        assert list(checks.index) == list(CHECK_NAMES)                 # the synthesizer's, not a verification's
        assert checks.loc["build", "log"] == "given build" and row.image == f"img-{task_id}"
        assert row.verdict == ("rejected" if task_id in rejected else "accepted")
        attempts = repair_store.attempts_for(ws.db, task_id)
        if task_id in rejected:
            assert row.failed_check == "judge"
            assert list(attempts.artifact) == ["tests", "instruction"] and attempts.evidence[1] == ["instruction.md: 'the file'"]
        else:
            assert attempts.empty
    errors = store.run_failures(ws.db, report.run_id)
    assert errors.empty                                                 # a rejected task is no failed path
    with ws.db.read() as con:
        notes = dict(con.execute("SELECT task_id, error FROM run_tasks WHERE run_id = ?", [report.run_id]).fetchall())
    assert all((notes[t] is not None) == (t in rejected) for t in frame.index)   # why it gave up is kept
    n = len(synth.calls)
    assert (report.timings["llm_s"], report.timings["docker_s"]) == pytest.approx((1.5 * n, 0.5 * n))
    assert WORK_S * n <= report.timings["total_s"] < 2.5 * n   # each path's time in the batch, store work included


def test_a_spent_budget_stops_cleanly_and_resume_finishes(graph_workspace):
    ws = graph_workspace
    first_synth = BudgetAfter(2)
    first = run_synth(ws, n_paths=6, seed=3, concurrency=1, synthesizer=first_synth, budget_usd=0.25)
    assert first.status == "cancelled" and first.verified == 2 and first.failed == 0
    assert len(first_synth.calls) == 3                     # no path taken after the one that hit the cap
    run = store.get_run(ws.db, first.run_id)
    assert run["status"] == "cancelled"
    assert run["message"].startswith("budget of $0.25 spent; resume to finish")
    assert any(n.startswith("budget of $0.25 spent") for n in first.notes)
    counts = store.stage_counts(ws.db, first.run_id)
    assert counts["verified"] == 2 and counts["failed"] == 0 and counts["sampled"] == 4   # the cut path is unfinished
    done_before = store.tasks_frame(ws.db).set_index("task_id")["verified_at"]
    again = GivenChecks()
    second = run_synth(ws, resume=True, synthesizer=again)
    assert second.run_id == first.run_id and second.status == "finished"
    assert second.verified == 6 and second.reused == 0 and len(again.calls) == 4   # finished ones skipped
    assert first_synth.calls[-1] in again.calls                                   # the cut path was done again
    after = store.tasks_frame(ws.db).set_index("task_id")["verified_at"]
    assert all(after[t] == when for t, when in done_before.items())


class Concurrent(GivenChecks):
    """Two paths at once: the second hits the cap while the first is still working."""

    def __init__(self):
        super().__init__()
        self.raised = threading.Event()

    def synthesize(self, path, seed, tools):
        with self._lock:
            n = len(self.calls)
            self.calls.append(path.path_id)
        if n == 0:
            assert self.raised.wait(30)
            self.calls.remove(path.path_id)
            return super().synthesize(path, seed, tools)
        self.raised.set()
        raise BudgetExceeded("spent")


def test_a_path_running_when_the_budget_is_spent_is_finished_and_kept(graph_workspace):
    synth = Concurrent()
    report = run_synth(graph_workspace, n_paths=6, seed=4, concurrency=2, synthesizer=synth, budget_usd=0.1)
    assert report.status == "cancelled" and report.verified == 1 and len(synth.calls) == 2
    assert store.get_run(graph_workspace.db, report.run_id)["message"].startswith("budget of $0.1 spent")


class Faulty(GivenChecks):
    """A path with no task (and why), and a task under another id than announced."""

    def synthesize(self, path, seed, tools):
        out = super().synthesize(path, seed, tools)
        if len(self.calls) == 1:
            return SynthOutcome(None, error="repairs exhausted: environment still fails build",
                                attempts=[RepairAttempt(n=k, artifact="environment", check="build",
                                                        reason="RUN apt-get exited 100", outcome="still_failing")
                                          for k in (1, 2, 3)])
        out.task.task_id = "0" * 16
        return out


def test_no_task_and_a_wrong_task_id_fail_their_paths_with_the_reason(graph_workspace):
    report = run_synth(graph_workspace, n_paths=2, seed=5, concurrency=1, synthesizer=Faulty())
    assert report.failed == 2 and report.verified == 0
    errors = sorted(store.run_failures(graph_workspace.db, report.run_id).error)
    assert errors[0] == "repairs exhausted: environment still fails build"
    assert "announced task id" in errors[1] and "but made 0000000000000000" in errors[1]
    assert store.tasks_frame(graph_workspace.db).empty            # nothing stored under an id resume cannot find
    # the repairs of a path that gave no task are kept under the id it announced
    tried = pd.concat([repair_store.attempts_for(graph_workspace.db, Faulty().task_id(PathContext(p, ()), 5))
                       for p in store.run_failures(graph_workspace.db, report.run_id).path_id])
    assert list(tried["artifact"]) == ["environment"] * 3 and list(tried["n"]) == [1, 2, 3]


class OutOfOrder(GivenChecks):
    """Hands its checks over last first, with both the oracle and the judge failing."""

    def synthesize(self, path, seed, tools):
        out = super().synthesize(path, seed, tools)
        out.checks = [c.model_copy(update={"passed": c.name not in ("oracle", "judge"), "reason": f"{c.name} failed"})
                      for c in reversed(out.checks)]
        return out


def test_a_task_is_rejected_for_its_first_failed_check_in_verification_order(graph_workspace):
    report = run_synth(graph_workspace, n_paths=2, seed=6, concurrency=1, synthesizer=OutOfOrder())
    assert report.rejected == report.verified == 2 and report.reasons == {"oracle": 2}
    frame = store.tasks_frame(graph_workspace.db)
    assert set(frame.failed_check) == {"oracle"} and set(frame.reason) == {"oracle failed"}


class CountingExecutor:
    """An Executor object handed to run_synth (as the Ray benchmark hands a RayExecutor): the
    batch runs on it, not on an executor of its own."""

    def __init__(self):
        from workbench.executors.local import LocalExecutor
        self.inner, self.items = LocalExecutor(3), []

    def run(self, items, process, **kw):
        self.items.extend(it.key for it in items)
        return self.inner.run(items, process, **kw)


def test_a_given_executor_object_runs_the_batch(graph_workspace):
    ex, synth = CountingExecutor(), GivenChecks()
    report = run_synth(graph_workspace, n_paths=4, seed=8, concurrency=1, synthesizer=synth, executor=ex)
    assert report.status == "finished" and report.verified == 4
    assert sorted(ex.items) == sorted(store.tasks_frame(graph_workspace.db).task_id)   # one item per task
