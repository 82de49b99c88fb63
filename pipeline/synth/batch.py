"""`workbench synth`: sample paths → synthesize a task per path → verify it in Docker.

Resumable by construction: the run's paths are stored before any work starts, each task's
id is a hash of what it is made from, and every finished task is committed on its own.
A crashed or killed run continues with `--resume`; finished tasks are skipped, and a task
whose verification was cut short by a stop is simply verified again.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from pipeline.synth.context import path_contexts
from pipeline.synth.run_record import TIMINGS, SynthReport, attach_sampled, finish, start_from_finished
from pipeline.synth.limits import DEFAULT_CONCURRENCY, MAX_STEPS, MIN_LEN
from pipeline.synth.protocol import PathContext, Synthesizer, SynthTools
from pipeline.synth.providers import OpenSynthesizer, check_provider, open_synthesizer
from pipeline.verify import failures
from pipeline.verify.decontam import BenchmarkIndex
from pipeline.verify.run import verify_bundle
from workbench.config import workspace_allows_network
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.sandbox.engine import Engine, SandboxError
from workbench.store import repairs as repair_store
from workbench.store import tasks as store
from workbench.workspace import Workspace

Progress = Callable[[dict], None]
class SynthBatch:
    """Runs one synthesizer over a run's paths, `concurrency` at a time, and stores what it
    hands back. It only calls the `Synthesizer` protocol: `task_id` first (finished tasks are
    skipped before any LLM call or build), then `synthesize`."""

    def __init__(self, ws: Workspace, run_id: str, seed: int, concurrency: int, engine: Engine,
                 benchmark: BenchmarkIndex | None, progress: Progress | None, stop: threading.Event,
                 *, synthesizer: Synthesizer, allow_network: bool = False):
        self.ws, self.run_id, self.seed = ws, run_id, seed
        self.concurrency = max(1, concurrency)
        self.engine, self.benchmark = engine, benchmark
        self.progress, self.stop = progress, stop
        self.synthesizer = synthesizer
        self.base_image = base_image_name()
        self.tools = SynthTools(engine=engine, base_image=self.base_image, benchmark=benchmark,
                                allow_network=allow_network, stop=stop, run_id=run_id)
        # Why the batch halted (the budget is spent: take no more paths, but let running ones
        # finish and keep what they make, unlike `stop`, which kills containers; or the LLM
        # endpoint failed); None while it goes on.
        self.halted: str | None = None
        self.report = SynthReport(run_id, provider=synthesizer.provider)
        self._lock = threading.Lock()
        self._task_locks: dict[str, threading.Lock] = {}

    def _tick(self, **delta: int) -> None:
        with self._lock:
            for k, v in delta.items():
                setattr(self.report, k, getattr(self.report, k) + v)
            snapshot = self.report.as_dict()
        if self.progress:
            self.progress(snapshot)

    def halt(self, why: str) -> bool:
        """Take no more paths, for `why` ("budget" or what failed); True for the first halt."""
        with self._lock:
            first, self.halted = self.halted is None, self.halted or why
        return first

    def _fail(self, path_id: str, error: str, task_id: str | None = None) -> None:
        store.set_path_stage(self.ws.db, self.run_id, path_id, "failed", task_id=task_id, error=error[:2000])
        self._tick(failed=1)

    def _add_timings(self, timings: dict[str, float]) -> None:
        with self._lock:
            for k in TIMINGS:
                self.report.timings[k] = self.report.timings.get(k, 0.0) + float(timings.get(k, 0.0))

    def process(self, path: PathContext) -> None:
        if self.stop.is_set() or self.halted:
            return
        try:
            task_id = self.synthesizer.task_id(path, self.seed)
        except Exception as exc:  # a synthesizer bug must not sink the batch; it is recorded
            self._fail(path.path_id, f"synthesis failed: {exc.__class__.__name__}: {exc}")
            return
        with self._lock:
            lock = self._task_locks.setdefault(task_id, threading.Lock())
        t0 = time.monotonic()
        try:
            with lock:
                if not self._reuse(path.path_id, task_id):
                    self._synthesize_and_store(path, task_id)
        finally:   # the whole of the path's time, the batch's own store and file work included
            self._add_timings({"total_s": time.monotonic() - t0})

    def _reuse(self, path_id: str, task_id: str) -> bool:
        """A task finished before (this run, an earlier one, or another path of the same steps)."""
        verdict = store.task_verdict(self.ws.db, task_id)
        if verdict in ("accepted", "rejected") and (self.ws.root / "tasks" / task_id / "task.toml").exists():
            store.set_path_stage(self.ws.db, self.run_id, path_id, "verified", task_id=task_id)
            self._tick(synthesized=1, verified=1, reused=1, **{verdict: 1})
            return True
        return False

    def _synthesize_and_store(self, path: PathContext, task_id: str) -> None:
        path_id = path.path_id
        try:
            outcome = self.synthesizer.synthesize(path, self.seed, self.tools)
        except BudgetExceeded:
            self.halt("budget")        # this path stays unfinished: resume does it again (cached replies)
            return
        except LLMCallError as exc:
            if not exc.endpoint_fault:
                self._fail(path_id, f"synthesis failed: {exc.__class__.__name__}: {exc}")
            elif self.halt(f"the LLM endpoint failed ({exc.error_class}: {str(exc)[:300]})"):
                self.stop.set()        # nothing more can be asked of it: the paths in flight stop too
            return
        except Exception as exc:  # a recipe or synthesizer bug must not sink the batch; it is recorded
            if not self.stop.is_set():
                self._fail(path_id, f"synthesis failed: {exc.__class__.__name__}: {exc}")
            return
        self._add_timings({k: v for k, v in outcome.timings.items() if k != "total_s"})   # total_s: see process
        if self.stop.is_set() and (outcome.task is None or outcome.checks is not None):
            return   # made while the stop killed its containers: proves nothing; resume does it again
        task = outcome.task
        if task is None:
            if outcome.attempts:   # e.g. an environment that never built: what was tried is kept all the same
                try:
                    repair_store.save_attempts(self.ws.db, task_id, [a.model_dump() for a in outcome.attempts])
                except repair_store.AttemptError:
                    pass   # the path's failure below is the record that counts
            self._fail(path_id, outcome.error or "synthesis gave no task and no reason")   # run_record.NO_RECIPE kept as is
            return
        if task.task_id != task_id:   # resume skips by the announced id: a different one would redo it forever
            self._fail(path_id, f"synthesizer {self.synthesizer.provider!r} announced task id {task_id} "
                                f"but made {task.task_id}")
            return
        steps = path.path_steps
        rel = f"tasks/{task_id}"
        bundle: TaskBundle = task.bundle
        write_bundle(bundle, self.ws.root / rel)
        store.save_task(self.ws.db, TaskRecord(
            task_id=task_id, name=task.name, path_id=path_id, category=task.category, difficulty=task.difficulty,
            n_steps=len(task.recipes) or len(steps), recipes=task.recipes, skill_ids=[s.skill_id for s in steps],
            scenario_ids=list(dict.fromkeys(a for s in steps for a in (s.src_anchor, s.dst_anchor))),
            provider=self.synthesizer.provider, bundle_dir=rel, bundle_hash=bundle.content_hash()),
            near_dup_key=task.near_dup_key, skill_fidelity=[f.as_dict() for f in task.fidelity])
        note = outcome.error
        try:
            repair_store.save_attempts(self.ws.db, task_id, [a.model_dump() for a in outcome.attempts])
        except repair_store.AttemptError as exc:   # a synthesizer bug; the task and its checks still count
            note = "; ".join(filter(None, [note, f"repair attempts not stored: {exc}"]))
        store.set_path_stage(self.ws.db, self.run_id, path_id, "synthesized", task_id=task_id)
        self._tick(synthesized=1)
        checks = outcome.checks
        if checks is None:
            checks = self._verify(path_id, task_id, bundle)
            if checks is None:
                return
        image = next((c.details.get("image") for c in checks if c.name == "build" and c.passed), None)
        failed = failures.first_failed(checks)    # in verification order, whatever order they came in
        verdict = store.save_verification(self.ws.db, task_id, checks, image, self.run_id, path_id,
                                          verdict=failures.verdict(checks), failed_check=failed)
        if note:   # e.g. repairs exhausted: kept beside the checks that say which failed
            store.set_path_stage(self.ws.db, self.run_id, path_id, "verified", task_id=task_id, error=note[:2000])
        if failed:
            with self._lock:
                self.report.reasons[failed.name] = self.report.reasons.get(failed.name, 0) + 1
        self._tick(verified=1, **{verdict: 1})

    def _verify(self, path_id: str, task_id: str, bundle: TaskBundle) -> list[CheckResult] | None:
        """The batch's own verification of a bundle its synthesizer did not verify; None when a
        stop cut it short (resume verifies again) or the engine failed (recorded)."""
        if self.stop.is_set():
            return None
        t0 = time.monotonic()
        try:
            checks = verify_bundle(bundle, engine=self.engine, benchmark=self.benchmark,
                                   allow_network=self.tools.allow_network)
        except Exception as exc:  # an engine hiccup on one task must not sink the batch
            if not self.stop.is_set():
                self._fail(path_id, f"verification crashed: {exc.__class__.__name__}: {exc}", task_id=task_id)
            return None
        finally:
            spent = time.monotonic() - t0
            self._add_timings({"docker_s": spent})
        return None if self.stop.is_set() else checks   # checks cut short by the stop prove nothing

    def run(self, work: dict[str, PathContext]) -> SynthReport:
        t0 = time.monotonic()
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="synth")
        try:
            futures = [pool.submit(self.process, path) for path in work.values()]
            for f in futures:
                f.result()
        except BaseException:
            # Ctrl-C or a crash: stop taking work, cut running checks short, drop the queue.
            self.stop.set()
            self.engine.kill_all()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
        self.report.seconds = time.monotonic() - t0
        return self.report


def check_lengths(min_len: int, max_len: int) -> None:
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= --min-len <= --max-len, got {min_len} and {max_len}")
    if max_len > MAX_STEPS:
        raise ValueError(f"--max-len {max_len}: the synthesizer composes at most {MAX_STEPS} steps")


def run_synth(ws: Workspace, *, n_paths: int = 20, sampler: str = "inverse-frequency", seed: int = 0,
              concurrency: int | None = None, provider: str = "offline", run_id: str | None = None,
              resume: bool = False, min_len: int = MIN_LEN, max_len: int = MAX_STEPS,
              benchmark_dir: Path | None = None, progress: Progress | None = None,
              stop: threading.Event | None = None, engine: Engine | None = None,
              allow_network: bool = False, budget_usd: float | None = None,
              solve_timeout_s: float | None = None, synthesizer: Synthesizer | None = None) -> SynthReport:
    """Run (or resume) a batch; returns its report. Raises ValueError / SandboxError with advice.
    `concurrency` None: the run's stored value on resume, else DEFAULT_CONCURRENCY.
    `provider`: offline (recipes) or llm (needs an endpoint); a resumed run keeps its own.
    `budget_usd`: the LLM spending cap of this process; once spent the batch stops taking
    paths, lets running ones finish and ends "cancelled" (resume to finish).
    `solve_timeout_s`: the agent timeout of LLM-built tasks (see providers.open_synthesizer).
    `synthesizer`: an object to use instead of the provider's (tests, benchmarks).
    `allow_network`: the user's opt-in (`--allow-network`, or the workspace setting) for tasks
    that ask for the network; without it they run without."""
    if synthesizer is not None:
        provider = synthesizer.provider
    elif not resume:
        check_provider(ws, provider)      # refused with advice before anything is recorded
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}")
    if budget_usd is not None and budget_usd < 0:
        raise ValueError(f"--budget-usd must be 0 or more, got {budget_usd}")
    allow_network = allow_network or workspace_allows_network(ws.root)
    if not resume:
        check_lengths(min_len, max_len)
    stop = stop or threading.Event()
    benchmark = BenchmarkIndex.build(benchmark_dir) if benchmark_dir else None
    engine = engine or Engine()
    engine.sweep_stale()
    base = base_image_name()
    if not engine.image_exists(base):
        raise SandboxError(f"base image {base} is missing: run `workbench images bootstrap` (or set WORKBENCH_BASE_IMAGE)")
    if resume:
        run_id = run_id or store.latest_unfinished_run(ws.db)
        run = store.get_run(ws.db, run_id) if run_id else None
        if not run:
            raise ValueError("nothing to resume: no unfinished synthesis run in this workspace")
        if synthesizer is None:
            provider = run["provider"]
            check_provider(ws, provider)
        seed, concurrency = int(run["seed"]), concurrency or int(run["concurrency"])
        store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
    else:
        from pipeline.synth.jobs import new_run_id
        concurrency = concurrency or DEFAULT_CONCURRENCY
        run_id = run_id or new_run_id()
        run = store.get_run(ws.db, run_id)
        if run is None:
            store.create_run(ws.db, run_id, sampler, n_paths, seed, provider, concurrency, os.getpid(),
                             min_len=min_len, max_len=max_len)
        else:
            store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
        run = store.get_run(ws.db, run_id)
    notes = attach_sampled(ws, run_id, run)
    work = path_contexts(ws, store.run_path_ids(ws.db, run_id))
    opened: OpenSynthesizer | None = None
    try:
        opened = (OpenSynthesizer(synthesizer) if synthesizer is not None else
                  open_synthesizer(ws, provider, base_image=base, run_id=run_id, concurrency=concurrency,
                                   budget_usd=budget_usd, solve_timeout_s=solve_timeout_s))
        batch = SynthBatch(ws, run_id, seed, concurrency, engine, benchmark, progress, stop,
                           synthesizer=opened.synthesizer, allow_network=allow_network)
        batch.report.concurrency, batch.report.notes = batch.concurrency, list(notes)
        start_from_finished(batch.report, store.run_summary(ws.db, run_id))
        report = batch.run(work)
    except BaseException as exc:
        engine.kill_all()
        store.set_run_status(ws.db, run_id, "failed" if not isinstance(exc, KeyboardInterrupt) else "cancelled",
                             f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__)
        raise
    finally:
        if opened is not None:
            opened.close()    # flushes the call log: the tasks' costs can be read from it now
            repair_store.refresh_costs(ws.db, run_id)
    report.cost_usd = opened.cost_usd
    cap = budget_usd if budget_usd is not None else opened.cap_usd
    finish(ws, report, stop, batch.halted, cap, notes)
    return report
