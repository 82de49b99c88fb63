"""`workbench synth`: sample paths → synthesize a task per path → verify it in Docker.

Resumable by construction: the run's paths are stored before any work starts, each task's
id is a hash of what it is made from, and every finished task is committed on its own.
A crashed or killed run continues with `--resume`; finished tasks are skipped, and a task
whose verification was cut short by a stop is simply verified again.
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from pipeline.graph.sample_run import sample
from pipeline.synth.compose import SYNTH_VERSION, PathStep, synthesize_task
from pipeline.verify.decontam import BenchmarkIndex
from pipeline.verify.run import verify_bundle
from workbench.models import TaskRecord
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.sandbox.engine import Engine, SandboxError
from workbench.store import tasks as store
from workbench.workspace import Workspace

Progress = Callable[[dict], None]
MAX_STEPS = 5


@dataclass
class SynthReport:
    run_id: str
    status: str = "running"
    sampled: int = 0
    synthesized: int = 0
    verified: int = 0
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    reused: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def task_id_for(steps: list[PathStep], seed: int, base_image: str) -> str:
    key = "|".join([SYNTH_VERSION, str(seed), base_image] + [f"{s.src_anchor}>{s.skill_id}>{s.dst_anchor}" for s in steps])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _steps_by_path(frame: pd.DataFrame) -> dict[str, list[PathStep]]:
    out: dict[str, list[PathStep]] = {}
    for row in frame.itertuples(index=False):
        out.setdefault(row.path_id, []).append(PathStep(
            skill_id=row.skill_id, skill_name=row.name, category=row.category, description=row.description,
            src_anchor=row.src_anchor, dst_anchor=row.dst_anchor))
    return {k: v[:MAX_STEPS] for k, v in out.items()}


class SynthBatch:
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
        except Exception as exc:  # a recipe bug must not sink the batch; it is recorded
            store.set_path_stage(self.ws.db, self.run_id, path_id, "failed",
                                 error=f"synthesis failed: {exc.__class__.__name__}: {exc}")
            self._tick(failed=1)
            return
        task_id = task_id_for(steps, self.seed, self.base_image)
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
            provider="offline", bundle_dir=rel, bundle_hash=bundle_hash))
        store.set_path_stage(self.ws.db, self.run_id, path_id, "synthesized", task_id=task_id)
        self._tick(synthesized=1)
        if self.stop.is_set():
            return
        try:
            checks = verify_bundle(bundle, engine=self.engine, benchmark=self.benchmark)
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


def run_synth(ws: Workspace, *, n_paths: int = 20, sampler: str = "inverse-frequency", seed: int = 0,
              concurrency: int = 2, provider: str = "offline", run_id: str | None = None, resume: bool = False,
              benchmark_dir: Path | None = None, progress: Progress | None = None,
              stop: threading.Event | None = None, engine: Engine | None = None) -> SynthReport:
    """Run (or resume) a batch; returns its report. Raises ValueError / SandboxError with advice."""
    if provider != "offline":
        raise ValueError(f"provider {provider!r}: only the offline synthesizer exists so far; use --provider offline")
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
        run_id = run_id or new_run_id()
        run = store.get_run(ws.db, run_id)
        if run is None:
            store.create_run(ws.db, run_id, sampler, n_paths, seed, provider, concurrency, os.getpid())
        else:
            store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
        run = store.get_run(ws.db, run_id)
    if not run.get("batch_id"):
        try:
            sampled = sample(ws, run["sampler"], int(run["n_paths"]), int(run["seed"]), min_len=2, max_len=MAX_STEPS)
        except Exception as exc:
            store.set_run_status(ws.db, run_id, "failed", f"sampling failed: {exc}")
            raise ValueError(f"sampling failed: {exc} (build the graph first: `workbench graph build`)") from exc
        from workbench.store import graph as graph_store
        store.attach_paths(ws.db, run_id, sampled.batch_id, graph_store.batch_path_ids(ws.db, sampled.batch_id))
    path_ids = store.run_path_ids(ws.db, run_id)
    work = _steps_by_path(store.path_steps_with_skills(ws.db, path_ids))
    batch = SynthBatch(ws, run_id, seed, concurrency, engine, benchmark, progress, stop)
    batch.report.sampled = int(run["n_paths"])
    try:
        report = batch.run(work)
    except BaseException as exc:
        engine.kill_all()
        store.set_run_status(ws.db, run_id, "failed" if not isinstance(exc, KeyboardInterrupt) else "cancelled",
                             f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__)
        raise
    status = "cancelled" if stop.is_set() else "finished"
    report.status = status
    store.set_run_status(ws.db, run_id, status,
                         f"{report.accepted} accepted, {report.rejected} rejected, {report.failed} failed"
                         + (" (stopped; resume to finish)" if stop.is_set() else ""))
    return report
