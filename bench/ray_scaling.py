"""Ray scaling: the same offline synth + verify batch on the local executor and on a local
Ray cluster with 1 and 2 worker nodes; Ray's overhead per task; a model for 10 real nodes.

Each side gets a fresh copy of one workspace template (demo corpus, offline scenarios,
graph) and runs `run_synth(ws, n_paths=N, seed=S, executor=<object>)` with the same seed, so
every side samples the same paths and makes the same tasks; the environment images the
previous side built are removed first, so each side builds every image (the base image
stays). Slots are equal on every side (c): local = LocalExecutor(c); ray1 = one worker node
with `docker: c`; ray2 = two worker nodes with `docker: c/2` each (the head offers no
`docker`, so it only holds the GCS; all nodes share this machine's Docker engine).

Ray's overhead per task = (ray1 wall - local wall) / tasks. For the 10-node model the bench
also measures, with no-op items (RayExecutor(resources={}, base_image=None)), the per-item
dispatch + object-store round trip, the driver's commit time per task (timed around the
batch's `commit` callback) and each task's own work time (timed around `process` locally).

Last line: ``RESULT local_tpm=… ray1_tpm=… ray2_tpm=… overhead_ms=… ray1_vs_local=…
ray2_vs_local=… noop_dispatch_ms=… commit_ms=… task_s=… est10_tpm=… est10_limit=… n_tasks=… slots=…``
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_synth import build_template, task_images  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402


def log(msg: str) -> None:
    print(msg, flush=True)


@dataclass
class Side:
    name: str
    wall_s: float = 0.0
    accepted: int = 0
    made: int = 0                     # tasks committed (accepted + rejected)
    failed: int = 0
    load: float = float("nan")
    commit_s: list[float] = field(default_factory=list)
    process_s: list[float] = field(default_factory=list)
    images: set[str] = field(default_factory=set)

    @property
    def tpm(self) -> float:
        return self.made / self.wall_s * 60 if self.wall_s else 0.0


class _TimedProcess:
    """`process` with its wall time recorded (local side only: the list stays in this process)."""

    def __init__(self, process, sink: list[float]):
        self.process, self.sink = process, sink

    def __call__(self, item):
        t0 = time.monotonic()
        try:
            return self.process(item)
        finally:
            self.sink.append(time.monotonic() - t0)


class TimedExecutor:
    """Wraps an executor: times the driver's commit of each outcome (and, when `time_process`,
    each item's `process`) without changing what runs where."""

    def __init__(self, inner, side: Side, *, time_process: bool):
        self.inner, self.side, self.time_process = inner, side, time_process
        self.concurrency = getattr(inner, "concurrency", None)

    def run(self, items, process, *, finished=(), commit, on_error=None, stop=None):
        def timed_commit(item, outcome):
            t0 = time.monotonic()
            try:
                commit(item, outcome)
            finally:
                self.side.commit_s.append(time.monotonic() - t0)
        if self.time_process:
            process = _TimedProcess(process, self.side.process_s)
        return self.inner.run(items, process, finished=finished, commit=timed_commit, on_error=on_error, stop=stop)


def run_side(name: str, template: Path, work: Path, executor, *, n_paths: int, seed: int,
             remove: set[str], time_process: bool) -> Side:
    from pipeline.synth.batch import run_synth
    from workbench.sandbox.engine import Engine
    engine = Engine()
    for tag in sorted(remove):
        engine.remove_image(tag)
    root = work / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(template, root)
    ws = Workspace.open(root)
    side = Side(name)
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    rep = run_synth(ws, n_paths=n_paths, seed=seed, engine=engine,
                    executor=TimedExecutor(executor, side, time_process=time_process))
    side.wall_s = time.monotonic() - t0
    side.load = (load0 + os.getloadavg()[0]) / 2
    side.accepted, side.failed = rep.accepted, rep.failed
    side.made = rep.accepted + rep.rejected
    side.images = task_images(ws)
    log(f"{name:6s}: {side.wall_s:6.1f} s, {side.made} tasks ({side.accepted} accepted, {side.failed} failed), "
        f"{side.tpm:.2f} tasks/min, load {side.load:.1f}")
    return side


def _noop(item):
    return item.key


@dataclass(frozen=True)
class NoopItem:
    key: str


def noop_dispatch_ms(executor, n: int) -> float:
    """Per-item cost of a batch of no-op items (after one warm-up batch that starts workers)."""
    items = [NoopItem(f"w{i}") for i in range(4)]
    executor.run(items, _noop, commit=lambda i, o: None)
    items = [NoopItem(f"n{i}") for i in range(n)]
    t0 = time.monotonic()
    executor.run(items, _noop, commit=lambda i, o: None)
    return (time.monotonic() - t0) / n * 1000


def start_cluster(nodes: int, slots_each: int):
    from ray.cluster_utils import Cluster
    store = 100 * 1024 * 1024
    cluster = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=1, resources={"docker": 0}, object_store_memory=store, include_dashboard=False))
    for _ in range(nodes):
        cluster.add_node(num_cpus=1, resources={"docker": slots_each}, object_store_memory=store)
    cluster.wait_for_nodes()
    return cluster


def ray_side(name: str, nodes: int, slots: int, template: Path, work: Path, *, n_paths: int, seed: int,
             remove: set[str], noop_n: int) -> tuple[Side, float]:
    import ray
    from workbench.executors.ray_executor import RayExecutor
    cluster = start_cluster(nodes, max(1, slots // nodes))
    try:
        ex = RayExecutor(cluster.address, concurrency=slots)
        noop = noop_dispatch_ms(RayExecutor(cluster.address, concurrency=slots, resources={}, base_image=None), noop_n)
        log(f"{name:6s}: no-op dispatch {noop:.1f} ms/item over {noop_n} items")
        side = run_side(name, template, work, ex, n_paths=n_paths, seed=seed, remove=remove, time_process=False)
    finally:
        ray.shutdown()
        cluster.shutdown()
    return side, noop


def model_nodes(nodes: int, slots_per_node: int, task_s: float, commit_s: float, dispatch_s: float) -> tuple[float, str]:
    """Tasks/min of `nodes` real nodes, each `slots_per_node` containers at `task_s` a task, vs
    the driver, which commits and dispatches every task in one thread (serial)."""
    nodes_tpm = nodes * slots_per_node / task_s * 60
    driver_tpm = 60 / (commit_s + dispatch_s)
    return (nodes_tpm, "nodes") if nodes_tpm < driver_tpm else (driver_tpm, "driver_commit")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paths", type=int, default=40)
    ap.add_argument("--slots", "-c", type=int, default=2, help="containers at once on every side (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noop", type=int, default=200, help="no-op items for the dispatch cost (default 200)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 paths, 20 no-op items")
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args(argv)
    if args.quick:
        args.paths, args.noop = 2, 20
    import docker
    from workbench.executors.local import LocalExecutor
    from workbench.sandbox.base_image import bootstrap
    bootstrap(docker.from_env(), log=log)
    work = args.keep or Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        template = build_template(work / "template")
        c = args.slots
        local_noop = noop_dispatch_ms(LocalExecutor(c), args.noop)
        local = run_side("local", template, work, LocalExecutor(c), n_paths=args.paths, seed=args.seed,
                         remove=set(), time_process=True)
        ray1, noop1 = ray_side("ray1", 1, c, template, work, n_paths=args.paths, seed=args.seed,
                               remove=local.images, noop_n=args.noop)
        ray2, noop2 = ray_side("ray2", 2, c, template, work, n_paths=args.paths, seed=args.seed,
                               remove=ray1.images, noop_n=args.noop)
        n = max(local.made, 1)
        overhead_ms = (ray1.wall_s - local.wall_s) / n * 1000
        commit_ms = sum(local.commit_s) / max(len(local.commit_s), 1) * 1000
        task_s = sum(local.process_s) / max(len(local.process_s), 1)
        # A real node runs its c containers on its own cores; here c shared two. The per-task
        # time measured at c on this machine is the pessimistic stand-in.
        est_tpm, limit = model_nodes(10, c, task_s, commit_ms / 1000, noop1 / 1000)
        driver_tpm = 60 / (commit_ms / 1000 + noop1 / 1000)
        log(f"local no-op {local_noop:.2f} ms/item; ray no-op {noop1:.1f} (1 node) / {noop2:.1f} (2 nodes) ms/item")
        log(f"driver commit {commit_ms:.1f} ms/task; task work {task_s:.1f} s at c={c}")
        log(f"10 nodes x {c} slots: nodes give {10 * c / task_s * 60:.0f} tasks/min, the driver can take "
            f"{driver_tpm:.0f} tasks/min -> ~{est_tpm:.0f} tasks/min, limit: {limit}")
        figures = dict(
            local_tpm=round(local.tpm, 2), ray1_tpm=round(ray1.tpm, 2), ray2_tpm=round(ray2.tpm, 2),
            overhead_ms=round(overhead_ms, 1), ray1_vs_local=round(ray1.tpm / local.tpm, 3) if local.tpm else "nan",
            ray2_vs_local=round(ray2.tpm / local.tpm, 3) if local.tpm else "nan",
            noop_dispatch_ms=round(noop1, 1), local_noop_ms=round(local_noop, 2), commit_ms=round(commit_ms, 1),
            task_s=round(task_s, 2), est10_tpm=round(est_tpm), est10_limit=limit, n_tasks=local.made, slots=c,
            load=round((local.load + ray1.load + ray2.load) / 3, 1))
        from workbench.sandbox.engine import Engine
        engine = Engine()
        for tag in sorted(ray2.images):
            engine.remove_image(tag)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("RESULT " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
