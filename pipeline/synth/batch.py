"""`workbench synth`: sample paths → synthesize a task per path → verify it in Docker.

Resumable by construction: the run's paths are stored before any work starts, each task's
id is a hash of what it is made from, and every finished task is committed on its own.
A crashed or killed run continues with `--resume`; finished tasks are skipped, and a task
whose verification was cut short by a stop is simply verified again.

The executor contract (DESIGN §9): each path is a PathItem for the pure worker
(pipeline/synth/worker.py: synthesize + verify, nothing written), run on a local or a Ray
executor; only this driver writes — bundles and rows, via pipeline/synth/commit.py — one
outcome at a time in the caller's thread.
"""
from __future__ import annotations

import functools
import os
import threading
import time
from pathlib import Path
from typing import Callable

from pipeline.synth.context import path_contexts
from pipeline.synth.run_record import TIMINGS, SynthReport, attach_sampled, finish, start_from_finished
from pipeline.synth.limits import DEFAULT_CONCURRENCY, MAX_STEPS, MIN_LEN
from pipeline.synth import commit
from pipeline.synth.protocol import PathContext, Synthesizer
from pipeline.synth.providers import OpenSynthesizer, check_provider, open_synthesizer
from pipeline.synth.worker import PathItem, PathOutcome, WorkerContext, synthesize_path
from pipeline.verify.decontam import BenchmarkIndex
from pipeline.verify.run import VerifyContext
from workbench.config import workspace_allows_network
from workbench.executors.factory import check_choice, make_executor
from workbench.executors.local import LocalExecutor
from workbench.executors.protocol import Executor
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine, SandboxError
from workbench.store import repairs as repair_store
from workbench.store import tasks as store
from workbench.workspace import Workspace

Progress = Callable[[dict], None]
RAY_NEEDS_OFFLINE = ("--executor ray runs the offline synthesizer only: the LLM provider's client (its call log, "
                     "cache and budget) lives in the driver and does not travel to Ray workers yet; "
                     "use --executor local with --provider llm")


class SynthBatch:
    """The driver of one run over its paths: it asks the synthesizer for each path's task id
    (finished tasks are reused before any LLM call or build), hands the rest to an executor as
    PathItems for the pure worker (pipeline/synth/worker.py), and commits each outcome in the
    caller's thread (pipeline/synth/commit.py), keeping the counts and the progress."""

    def __init__(self, ws: Workspace, run_id: str, seed: int, concurrency: int, engine: Engine | None,
                 benchmark: BenchmarkIndex | None, progress: Progress | None, stop: threading.Event,
                 *, synthesizer: Synthesizer, allow_network: bool = False, executor: Executor | None = None,
                 red_team: bool | None = None):
        self.ws, self.run_id, self.seed = ws, run_id, seed
        self.concurrency = max(1, concurrency)
        self.engine, self.progress, self.stop = engine, progress, stop
        self.synthesizer = synthesizer
        self.executor = executor or LocalExecutor(self.concurrency)
        self.context = WorkerContext(synthesizer=synthesizer, base_image=base_image_name(), run_id=run_id,
                                     sandbox=VerifyContext(benchmark=benchmark, allow_network=allow_network,
                                                           red_team=red_team,
                                                           engine=engine, stop=stop))
        # Why the batch halted (the budget is spent: take no more paths, but let running ones
        # finish and keep what they make, unlike `stop`, which kills containers; or the LLM
        # endpoint failed); None while it goes on.
        self.halted: str | None = None
        self.no_more = threading.Event()    # the executor's stop: set by a halt or by `stop`
        self.report = SynthReport(run_id, provider=synthesizer.provider)
        self._same_steps: dict[str, list[str]] = {}   # task id -> the other paths of the same steps

    def _tick(self, **delta: int) -> None:
        for k, v in delta.items():
            setattr(self.report, k, getattr(self.report, k) + v)
        if self.progress:
            self.progress(self.report.as_dict())

    def halt(self, why: str) -> bool:
        """Take no more paths, for `why` ("budget" or what failed); True for the first halt."""
        first, self.halted = self.halted is None, self.halted or why
        self.no_more.set()
        return first

    def _fail(self, path_id: str, error: str, task_id: str | None = None) -> None:
        commit.fail_path(self.ws, self.run_id, path_id, error, task_id)
        self._tick(failed=1)

    def _add_timings(self, timings: dict[str, float]) -> None:
        for k in TIMINGS:
            self.report.timings[k] = self.report.timings.get(k, 0.0) + float(timings.get(k, 0.0))

    def _reuse(self, path_id: str, task_id: str) -> bool:
        verdict = commit.reuse_task(self.ws, self.run_id, path_id, task_id)
        if verdict:
            self._tick(synthesized=1, verified=1, reused=1, **{verdict: 1})
        return verdict is not None

    def plan(self, work: dict[str, PathContext]) -> list[PathItem]:
        """One item per task still to make; paths whose task is finished are verified with it now."""
        items: dict[str, PathItem] = {}
        for path in work.values():
            try:
                task_id = self.synthesizer.task_id(path, self.seed)
            except Exception as exc:  # a synthesizer bug must not sink the batch; it is recorded
                self._fail(path.path_id, f"synthesis failed: {exc.__class__.__name__}: {exc}")
                continue
            if task_id in items:      # the same steps: made once, the other paths take it when it is done
                self._same_steps.setdefault(task_id, []).append(path.path_id)
            elif not self._reuse(path.path_id, task_id):
                items[task_id] = PathItem(path, self.seed, task_id)
        return list(items.values())

    # ------------------------------------------------------------ commits (the caller's thread)
    def _commit(self, item: PathItem, out: PathOutcome) -> None:
        t0 = time.monotonic()
        try:
            self._commit_outcome(out)
        finally:   # the whole of the path's time, the driver's own store and file work included
            self._add_timings({**out.timings, "total_s": out.timings.get("total_s", 0.0) + time.monotonic() - t0})
            if self.stop.is_set():
                self.no_more.set()

    def _commit_outcome(self, out: PathOutcome) -> None:
        others = self._same_steps.pop(out.task_id, [])
        if out.kind == "halt":
            if self.halt(out.halt or "halted") and out.stop_all:
                self.stop.set()        # nothing more can be asked of it: the paths in flight stop too
            return
        if out.kind == "dropped":
            return
        if out.kind == "failed":
            commit.save_failed_attempts(self.ws, out)
            for path_id in [out.path_id, *others]:
                self._fail(path_id, out.error or "synthesis gave no task and no reason")
            return
        note = commit.save_task(self.ws, self.run_id, out)
        self._tick(synthesized=1)
        if out.verify_error:
            for path_id in [out.path_id, *others]:
                self._fail(path_id, out.verify_error, task_id=out.task_id)
            return
        verdict, failed = commit.save_checks(self.ws, self.run_id, out, note)
        if failed:
            self.report.reasons[failed.name] = self.report.reasons.get(failed.name, 0) + 1
        self._tick(verified=1, **{verdict: 1})
        for path_id in others:
            self._reuse(path_id, out.task_id)

    def _on_error(self, item: PathItem, exc: BaseException) -> None:
        """The worker itself was lost or raised (it reports a path's own failures in its outcome)."""
        others = self._same_steps.pop(item.task_id, [])
        if self.stop.is_set():
            self.no_more.set()
            return                     # most likely its containers were killed by the stop
        for path_id in [item.path_id, *others]:
            self._fail(path_id, f"synthesis failed: {exc.__class__.__name__}: {exc}")

    def process(self, path: PathContext) -> None:
        """One path, here and now (tests)."""
        for item in self.plan({path.path_id: path}):
            self._commit(item, synthesize_path(item, self.context))

    def run(self, work: dict[str, PathContext]) -> SynthReport:
        t0 = time.monotonic()
        try:
            items = self.plan(work)
            if self.stop.is_set():
                self.no_more.set()
            self.executor.run(items, functools.partial(synthesize_path, ctx=self.context),
                              commit=self._commit, on_error=self._on_error, stop=self.no_more)
        except BaseException:
            # Ctrl-C or a crash: stop taking work, cut running checks short.
            self.stop.set()
            self.no_more.set()
            if self.engine is not None:
                self.engine.kill_all()
            raise
        self.report.seconds = time.monotonic() - t0
        return self.report


def check_lengths(min_len: int, max_len: int) -> None:
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= --min-len <= --max-len, got {min_len} and {max_len}")
    if max_len > MAX_STEPS:
        raise ValueError(f"--max-len {max_len}: the synthesizer composes at most {MAX_STEPS} steps")


def check_executor(kind: str, ray_address: str | None, provider: str | None) -> None:
    """Refuse an executor the batch cannot use, saying why, before anything is recorded
    (`provider` None: not known yet, as on resume before the run is read)."""
    check_choice(kind, ray_address)
    if kind == "ray" and provider == "llm":
        raise ValueError(RAY_NEEDS_OFFLINE)


def _executor(executor: str | Executor, ray_address: str | None, provider: str, concurrency: int) -> Executor:
    if not isinstance(executor, str):
        return executor
    check_executor(executor, ray_address, provider)
    return make_executor(executor, concurrency=concurrency, ray_address=ray_address)


def run_synth(ws: Workspace, *, n_paths: int = 20, sampler: str = "inverse-frequency", seed: int = 0,
              concurrency: int | None = None, provider: str = "offline", run_id: str | None = None,
              resume: bool = False, min_len: int = MIN_LEN, max_len: int = MAX_STEPS,
              benchmark_dir: Path | None = None, progress: Progress | None = None,
              stop: threading.Event | None = None, engine: Engine | None = None,
              allow_network: bool = False, budget_usd: float | None = None,
              solve_timeout_s: float | None = None, synthesizer: Synthesizer | None = None,
              executor: str | Executor = "local", ray_address: str | None = None,
              ship_skills: bool = True, red_team: bool | None = None) -> SynthReport:
    """Run (or resume) a batch; returns its report. Raises ValueError / SandboxError with advice.
    `concurrency` None: the run's stored value on resume, else DEFAULT_CONCURRENCY.
    `provider`: offline (recipes) or llm (needs an endpoint); a resumed run keeps its own.
    `budget_usd`: the LLM spending cap of this process; once spent the batch stops taking
    paths, lets running ones finish and ends "cancelled" (resume to finish).
    `solve_timeout_s`: the agent timeout of LLM-built tasks (see providers.open_synthesizer).
    `synthesizer`: an object to use instead of the provider's (tests, benchmarks).
    `allow_network`: the user's opt-in (`--allow-network`, or the workspace setting) for tasks
    that ask for the network; without it they run without.
    `executor`: "local" (threads) or "ray" (Ray tasks on the cluster at `ray_address`; offline
    provider only), or an Executor object (benchmarks pass a RayExecutor).
    `ship_skills`: the claimed skills' packages travel with each task under /skills (offline; off: none
    does, and no step runs a skill's own script); a resumed run takes the option as given again.
    `red_team`: the red-team probe in verification (None: on unless WORKBENCH_RED_TEAM=0)."""
    if synthesizer is not None:
        provider = synthesizer.provider
    elif not resume:
        check_provider(ws, provider)      # refused with advice before anything is recorded
    if isinstance(executor, str):
        check_executor(executor, ray_address, None if resume else provider)
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
        runner = _executor(executor, ray_address, provider, concurrency)
        store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
    else:
        from pipeline.synth.jobs import new_run_id
        concurrency = concurrency or DEFAULT_CONCURRENCY
        runner = _executor(executor, ray_address, provider, concurrency)   # an unreachable cluster: nothing recorded
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
                                   budget_usd=budget_usd, solve_timeout_s=solve_timeout_s,
                                   ship_skills=ship_skills))
        batch = SynthBatch(ws, run_id, seed, concurrency, engine, benchmark, progress, stop,
                           synthesizer=opened.synthesizer, allow_network=allow_network, executor=runner,
                           red_team=red_team)
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
