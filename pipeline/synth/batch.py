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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from pipeline.graph.sample_run import sample
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.limits import DEFAULT_CONCURRENCY, MAX_STEPS, MIN_LEN
from pipeline.synth.skill_fit import NoRecipeError, SkillParts, parts_from_skill
from pipeline.verify.decontam import BenchmarkIndex
from pipeline.verify.run import verify_bundle
from workbench.config import workspace_allows_network
from workbench.models import TaskRecord
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.sandbox.engine import Engine, SandboxError
from workbench.store import tasks as store
from workbench.workspace import Workspace

Progress = Callable[[dict], None]
NO_RECIPE = "no offline recipe"   # how a path failed by a skill the library cannot honour is recorded


@dataclass
class SynthReport:
    """A run's outcome. The counts cover the whole run, every resumed part included
    (`reused` and `seconds` are this process's); `near_duplicates` lists the run's tasks
    that repeat another of its tasks (same recipe chain and step text)."""
    run_id: str
    status: str = "running"
    concurrency: int = DEFAULT_CONCURRENCY
    sampled: int = 0
    synthesized: int = 0
    verified: int = 0
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    reused: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
    near_duplicates: list[dict] = field(default_factory=list)   # task_id, name, duplicate_of
    failures: list[dict] = field(default_factory=list)          # path_id, error: paths that gave no task
    notes: list[str] = field(default_factory=list)              # e.g. fewer distinct paths than asked

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                for k, v in self.__dict__.items()}

    def take_counts(self, summary: dict) -> None:
        """Counts of the whole run from `store.run_summary`."""
        for k in ("sampled", "synthesized", "verified", "accepted", "rejected", "failed"):
            setattr(self, k, summary[k])
        self.reasons = dict(summary["reasons"])


def _steps_by_path(frame: pd.DataFrame) -> dict[str, list[PathStep]]:
    """Each path's steps with its skills' parts (tools, state kinds, steps, body), each skill read once."""
    out: dict[str, list[PathStep]] = {}
    parts: dict[str, SkillParts] = {}
    for row in frame.itertuples(index=False):
        if row.skill_id not in parts:
            parts[row.skill_id] = parts_from_skill(row.raw_text, bins=_listed(row.bins), tools=_listed(row.tools),
                                                   inputs=_listed(row.inputs), outputs=_listed(row.outputs),
                                                   steps=_listed(row.steps))
        out.setdefault(row.path_id, []).append(PathStep(
            skill_id=row.skill_id, skill_name=row.name, category=row.category, description=row.description,
            src_anchor=row.src_anchor, dst_anchor=row.dst_anchor, parts=parts[row.skill_id]))
    return {k: v[:MAX_STEPS] for k, v in out.items()}


def _listed(value) -> list[str]:
    """A stored VARCHAR[] as DuckDB hands it to pandas (a list or an array; None for none)."""
    return [str(x) for x in value] if value is not None and not isinstance(value, str) else []


class SynthBatch:
    allow_network = False   # the user's network opt-in, set by run_synth
    def __init__(self, ws: Workspace, run_id: str, seed: int, concurrency: int, engine: Engine,
                 benchmark: BenchmarkIndex | None, progress: Progress | None, stop: threading.Event):
        self.ws, self.run_id, self.seed = ws, run_id, seed
        self.concurrency = max(1, concurrency)
        self.engine, self.benchmark = engine, benchmark
        self.progress, self.stop = progress, stop
        self.base_image = base_image_name()
        self.report = SynthReport(run_id)
        self._lock = threading.Lock()
        self._task_locks: dict[str, threading.Lock] = {}

    def _tick(self, **delta: int) -> None:
        with self._lock:
            for k, v in delta.items():
                setattr(self.report, k, getattr(self.report, k) + v)
            snapshot = self.report.as_dict()
        if self.progress:
            self.progress(snapshot)

    def process(self, path_id: str, steps: list[PathStep]) -> None:
        if self.stop.is_set():
            return
        try:
            task = synthesize_task(steps, self.seed, self.base_image, path_id=path_id)
        except NoRecipeError as exc:   # a skill no offline family honours: reported, never substituted
            store.set_path_stage(self.ws.db, self.run_id, path_id, "failed", error=str(exc))   # starts with NO_RECIPE
            self._tick(failed=1)
            return
        except Exception as exc:  # a recipe bug must not sink the batch; it is recorded
            store.set_path_stage(self.ws.db, self.run_id, path_id, "failed",
                                 error=f"synthesis failed: {exc.__class__.__name__}: {exc}")
            self._tick(failed=1)
            return
        task_id = task.task_id
        with self._lock:
            lock = self._task_locks.setdefault(task_id, threading.Lock())
        with lock:
            self._synthesize_and_verify(path_id, steps, task, task_id)

    def _synthesize_and_verify(self, path_id, steps, task, task_id) -> None:
        bundle: TaskBundle = task.bundle
        bundle_hash = bundle.content_hash()
        rel = f"tasks/{task_id}"
        verdict = store.task_verdict(self.ws.db, task_id)
        if verdict in ("accepted", "rejected") and (self.ws.root / rel / "task.toml").exists():
            store.set_path_stage(self.ws.db, self.run_id, path_id, "verified", task_id=task_id)
            self._tick(synthesized=1, verified=1, reused=1, **{verdict: 1})
            return
        write_bundle(bundle, self.ws.root / rel)
        store.save_task(self.ws.db, TaskRecord(
            task_id=task_id, name=task.name, path_id=path_id, category=task.category, difficulty=task.difficulty,
            n_steps=len(task.recipes), recipes=task.recipes, skill_ids=[s.skill_id for s in steps],
            scenario_ids=list(dict.fromkeys(a for s in steps for a in (s.src_anchor, s.dst_anchor))),
            provider="offline", bundle_dir=rel, bundle_hash=bundle_hash), near_dup_key=task.near_dup_key,
            skill_fidelity=[f.as_dict() for f in task.fidelity])
        store.set_path_stage(self.ws.db, self.run_id, path_id, "synthesized", task_id=task_id)
        self._tick(synthesized=1)
        if self.stop.is_set():
            return
        try:
            checks = verify_bundle(bundle, engine=self.engine, benchmark=self.benchmark,
                                   allow_network=self.allow_network)
        except Exception as exc:  # an engine hiccup on one task must not sink the batch
            if not self.stop.is_set():
                store.set_path_stage(self.ws.db, self.run_id, path_id, "failed", task_id=task_id,
                                     error=f"verification crashed: {exc.__class__.__name__}: {exc}"[:2000])
                self._tick(failed=1)
            return
        if self.stop.is_set():
            return   # checks cut short by the stop prove nothing; resume verifies again
        image = next((c.details.get("image") for c in checks if c.name == "build" and c.passed), None)
        verdict = store.save_verification(self.ws.db, task_id, checks, image, self.run_id, path_id)
        failed = next((c for c in checks if not c.passed), None)
        if failed:
            with self._lock:
                self.report.reasons[failed.name] = self.report.reasons.get(failed.name, 0) + 1
        self._tick(verified=1, **{verdict: 1})

    def run(self, work: dict[str, list[PathStep]]) -> SynthReport:
        t0 = time.monotonic()
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="synth")
        try:
            futures = [pool.submit(self.process, pid, steps) for pid, steps in work.items()]
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
              allow_network: bool = False) -> SynthReport:
    """Run (or resume) a batch; returns its report. Raises ValueError / SandboxError with advice.
    `concurrency` None: the run's stored value on resume, else DEFAULT_CONCURRENCY.
    `allow_network`: the user's opt-in (`--allow-network`, or the workspace setting) for tasks
    that ask for the network; without it they run without."""
    if provider != "offline":
        raise ValueError(f"provider {provider!r}: only the offline synthesizer exists so far; use --provider offline")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}")
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
    notes: list[str] = []
    if not run.get("batch_id"):
        lo, hi = _stored_len(run.get("min_len"), MIN_LEN), _stored_len(run.get("max_len"), MAX_STEPS)
        try:
            sampled = sample(ws, run["sampler"], int(run["n_paths"]), int(run["seed"]), min_len=lo, max_len=hi)
        except Exception as exc:
            store.set_run_status(ws.db, run_id, "failed", f"sampling failed: {exc}")
            raise ValueError(f"sampling failed: {exc} (build the graph first: `workbench graph build`)") from exc
        if sampled.note:
            notes.append(sampled.note)
        from workbench.store import graph as graph_store
        store.attach_paths(ws.db, run_id, sampled.batch_id, graph_store.batch_path_ids(ws.db, sampled.batch_id))
    path_ids = store.run_path_ids(ws.db, run_id)
    work = _steps_by_path(store.path_steps_with_skills(ws.db, path_ids))
    batch = SynthBatch(ws, run_id, seed, concurrency, engine, benchmark, progress, stop)
    batch.allow_network = allow_network
    batch.report.concurrency, batch.report.notes = batch.concurrency, notes
    _start_from_finished(batch.report, store.run_summary(ws.db, run_id))
    try:
        report = batch.run(work)
    except BaseException as exc:
        engine.kill_all()
        store.set_run_status(ws.db, run_id, "failed" if not isinstance(exc, KeyboardInterrupt) else "cancelled",
                             f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__)
        raise
    status = "cancelled" if stop.is_set() else "finished"
    report.status = status
    report.take_counts(store.run_summary(ws.db, run_id))
    report.near_duplicates = store.near_duplicates(ws.db, run_id)[["task_id", "name", "duplicate_of"]].to_dict("records")
    failures = store.run_failures(ws.db, run_id)
    report.failures = failures[["path_id", "error"]].to_dict("records")
    no_recipe = int(failures["error"].fillna("").str.startswith(NO_RECIPE).sum())
    store.set_run_status(ws.db, run_id, status,
                         f"{report.accepted} accepted, {report.rejected} rejected, {report.failed} failed"
                         + (f", {len(report.near_duplicates)} near-duplicate" if report.near_duplicates else "")
                         + (f", {no_recipe} with a skill no offline recipe honours" if no_recipe else "")
                         + (" (stopped; resume to finish)" if stop.is_set() else "")
                         + "".join(f"; {n}" for n in notes))
    return report


def _stored_len(value, default: int) -> int:
    """A run's stored path length; runs made before lengths were stored have none."""
    return default if value is None or pd.isna(value) else int(value)


def _start_from_finished(report: SynthReport, summary: dict) -> None:
    """A resumed run's progress starts from the paths already finished (paths cut short
    before are done again, so only final outcomes are carried over)."""
    report.sampled = summary["sampled"]
    for k in ("verified", "accepted", "rejected", "failed"):
        setattr(report, k, summary[k])
    report.synthesized = summary["verified"]
