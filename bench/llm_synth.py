"""LLM synthesis throughput: demo paths through the LLM synthesizer at several concurrencies.

`run_synth(ws, provider="llm")` (planner → environment → build → state → instruction →
solution → tests → verification, with routed repair) against the in-process replay server
answering with the scripted replies of `pipeline.synth.llm.scripted.ScriptedSynthesis`
after a realistic delay (default 1.5 s per call), at concurrency 1, 4 and 8.

Every level starts cold and does the same work: the same paths (same seed), its own fresh
copy of one workspace template (demo corpus ingested, offline scenarios, graph built; made
once at the start), hence an empty response cache and an empty call log, a fresh replay
server, and none of the environment images of these tasks on the engine (those the previous
level built are removed before the next one starts; the table says how many of a level's
images were already there when it started). The baseline is concurrency 1, measured in the
same run. Each level's run and paths are sampled and stored first (as `run_synth` would;
timed with the level), so that the test double's own work (an offline task per path) is done
before the clock starts: a real endpoint does not spend our two cores.

Per level: accepted tasks per minute of wall time (the whole `run_synth` call: sampling,
path contexts, every task), the share of the tasks' summed time spent waiting on the LLM,
on Docker and in our own code (`report.timings`: llm_s, docker_s, total_s summed over the
tasks; own = total - llm - docker), and LLM calls per accepted task (the replay server's
count, checked against the `llm_calls` table). That last figure is the scripted double's, not a
model's: the double answers every stage right the first time, so it counts the synthesizer's
stages (6 when no repair is routed), never a model's retries or repairs; it is printed and
reported as `double_calls_per_task`. Also: `busy` = the tasks' summed time over
c × wall (the rest is sampling, path contexts and idle workers at the tail) and the mean
1-minute load average while the level ran (the machine is shared: a level measured under
someone else's test run says so).
Targets (issue 13): at concurrency 8 own code ≤ 10 % of the time; throughput at 8 ≥ 4× at 1.

Last line:
``RESULT tasks_per_min_c8=… speedup_c8_vs_c1=… own_share=… double_calls_per_task=… llm=scripted-double``
(own_share and double_calls_per_task of the highest level; the names keep "c8" when --levels ends
elsewhere, and the ratio is highest level over lowest).

    .venv/bin/python bench/llm_synth.py                                  # 20 paths, 1.5 s, levels 1,4,8
    .venv/bin/python bench/llm_synth.py --paths 4 --levels 1,4 --latency 0.3   # shorter
    .venv/bin/python bench/llm_synth.py --quick          # smoke run: 2 paths, levels 1,2, 0.1 s per call
    .venv/bin/python bench/llm_synth.py --profile /tmp/prof              # cProfile of every thread, top level
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.workspace import Workspace  # noqa: E402

TIMING_KEYS = ("llm_s", "docker_s", "total_s")


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------- the workspace template
def build_template(root: Path) -> Path:
    """The demo corpus as `workbench ingest data/skills`, offline scenarios and a graph
    (as tests/conftest.py graph_workspace_template; `run_synth` samples its own paths)."""
    from pipeline.graph.build import BuildOptions, build_graph
    from pipeline.ingest.run import ingest
    from pipeline.scenarios.run import infer_offline
    from workbench.config import DEMO_CORPUS
    ws = Workspace.open(root)
    ingest(ws, [DEMO_CORPUS])
    infer_offline(ws)
    build_graph(ws, BuildOptions())
    return root


# ---------------------------------------------------------------- one level
@dataclass
class Level:
    concurrency: int
    wall_s: float = 0.0
    cpu_s: float = 0.0                 # this process's CPU (ours + the replay server's scripted replies)
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    sampled: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    server_calls: int = 0
    logged_calls: int = 0
    cache_hits: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)
    images: set[str] = field(default_factory=set)
    images_there: int = 0              # of this level's images, already on the engine when it began
    max_in_flight: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    load: float = float("nan")         # mean 1-minute load average while the level ran (shared machine)
    unscripted: dict[str, str] = field(default_factory=dict)   # path -> why the scripted replies had no task

    @property
    def tasks_per_min(self) -> float:
        return self.accepted / self.wall_s * 60 if self.wall_s else 0.0

    def share(self, key: str) -> float:
        total = self.timings.get("total_s", 0.0)
        if total <= 0:
            return float("nan")
        if key == "own":
            return max(0.0, total - self.timings.get("llm_s", 0.0) - self.timings.get("docker_s", 0.0)) / total
        return self.timings.get(key, 0.0) / total

    @property
    def busy(self) -> float:
        """Share of the c workers' wall time spent inside `synthesize` (the rest: sampling,
        path contexts, storing outcomes, idle workers at the tail)."""
        return self.timings.get("total_s", 0.0) / (self.wall_s * self.concurrency) if self.wall_s else float("nan")

    @property
    def calls_per_task(self) -> float:
        return self.server_calls / self.accepted if self.accepted else float("nan")


def env_images(engine) -> set[str]:
    from workbench.sandbox.engine import ENV_REPOSITORY
    return {t for img in engine.client.images.list(name=ENV_REPOSITORY) for t in img.tags}


def task_images(ws: Workspace) -> set[str]:
    """The environment image of every task bundle the level wrote."""
    from pipeline.verify.run import image_for
    from workbench.sandbox.bundle import read_bundle
    tasks = ws.root / "tasks"
    return {image_for(read_bundle(d)) for d in sorted(tasks.iterdir()) if (d / "task.toml").exists()} \
        if tasks.is_dir() else set()


def scripted_images(scripted, paths: list[str], base_image: str) -> set[str]:
    """The image the synthesizer builds from each served path's scripted manifest (as the
    constructor tags it), so paths that gave no task leave no image behind either."""
    from pipeline.synth.llm import render
    from workbench.sandbox.bundle import tree_hash
    from workbench.sandbox.engine import ENV_REPOSITORY
    out = set()
    for path in paths:
        t = scripted.task(path)
        if not isinstance(t, str):
            out.add(f"{ENV_REPOSITORY}:{tree_hash(render.environment_files(t.manifest, base_image))[:20]}")
    return out


def call_counts(ws: Workspace, run_id: str) -> tuple[int, int, dict[str, int]]:
    """(calls, cache hits, calls per stage) of the run's batch in the `llm_calls` table."""
    with ws.db.read() as con:
        rows = con.execute("SELECT stage, count(*), sum(CASE WHEN cache_hit THEN 1 ELSE 0 END) "
                           "FROM llm_calls WHERE batch_id = ? GROUP BY stage ORDER BY stage", [run_id]).fetchall()
    return sum(r[1] for r in rows), sum(int(r[2] or 0) for r in rows), {r[0]: r[1] for r in rows}


class LoadSampler:
    """The machine's 1-minute load average every few seconds while a level runs: the machine
    is shared, and a level measured under someone else's test run says so in the table."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.samples = every_s, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="load-sampler", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples)


class ThreadProfiles:
    """cProfile in every thread started while it is on (the batch's workers, the LLM loop,
    the replay server), merged into one report."""

    def __init__(self) -> None:
        self._profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _start_in_thread(self, *_args) -> None:
        prof = cProfile.Profile()
        with self._lock:
            self._profiles.append(prof)
        prof.enable()   # replaces this hook in this thread

    def __enter__(self) -> "ThreadProfiles":
        threading.setprofile(self._start_in_thread)
        self._main = cProfile.Profile()
        self._main.enable()
        return self

    def __exit__(self, *exc) -> None:
        self._main.disable()
        threading.setprofile(None)

    def dump(self, out: Path, label: str, top: int = 40) -> None:
        out.mkdir(parents=True, exist_ok=True)
        stats = pstats.Stats(self._main)
        for p in self._profiles:
            p.create_stats()
            stats.add(p)
        path = out / f"{label}.pstats"
        stats.dump_stats(str(path))
        log(f"profile of every thread: {path} (top {top} by own time below)")
        stats.sort_stats("tottime").print_stats(top)


SAMPLER = "inverse-frequency"


def prepare_run(ws: Workspace, n_paths: int, seed: int, provider: str, c: int) -> tuple[str, list[str]]:
    """The run and its sampled paths, stored as `run_synth` stores them before it synthesizes
    (it then takes the attached paths), so the scripted replies can be made before the clock
    for the synthesis starts; the sampling is timed with the level."""
    from pipeline.graph.sample_run import sample
    from pipeline.synth.jobs import new_run_id
    from pipeline.synth.limits import MAX_STEPS, MIN_LEN
    from workbench.store import graph as graph_store
    from workbench.store import tasks as store
    sampled = sample(ws, SAMPLER, n_paths, seed, min_len=MIN_LEN, max_len=MAX_STEPS)
    run_id = new_run_id()
    store.create_run(ws.db, run_id, SAMPLER, n_paths, seed, provider, c, os.getpid(), min_len=MIN_LEN, max_len=MAX_STEPS)
    path_ids = graph_store.batch_path_ids(ws.db, sampled.batch_id)
    store.attach_paths(ws.db, run_id, sampled.batch_id, path_ids)
    return run_id, path_ids


def run_level(template: Path, work: Path, c: int, *, n_paths: int, latency: float, seed: int,
              remove: set[str], profile_dir: Path | None, provider: str = "llm") -> Level:
    from pipeline.synth.batch import run_synth
    from workbench.llm.replay_server import ReplayServer, Script
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine

    engine = Engine()
    for tag in sorted(remove):            # the previous level's images: this level builds its own
        engine.remove_image(tag)
    there = env_images(engine)
    root = work / f"c{c}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(template, root)
    ws = Workspace.open(root)
    if any(ws.cache_dir.glob("llm_responses*")):
        raise SystemExit(f"{ws.cache_dir} has a response cache: the template must have none")
    if provider == "llm":
        from pipeline.synth.llm.scripted import ScriptedSynthesis
    level = Level(c)
    t0 = time.monotonic()
    run_id, path_ids = prepare_run(ws, n_paths, seed, provider, c)
    sampling_s = time.monotonic() - t0
    scripted = ScriptedSynthesis(ws, seed=seed) if provider == "llm" else None
    if scripted:
        # The test double's own work (an offline task per path, ~0.3 s of CPU each) is made
        # now, off the clock: a real endpoint spends its time elsewhere, not on our two cores.
        for p in path_ids:
            scripted.task(p)
    rules = [scripted.rule()] if scripted else []
    with ReplayServer(Script(rules), latency_s=latency) as srv:
        env = {"WORKBENCH_LLM_BASE_URL": srv.base_url, "WORKBENCH_LLM_MODEL": "replay",
               "OPENAI_API_KEY": "bench", "WORKBENCH_LLM_CONCURRENCY": str(max(c, 1))}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        profiles = ThreadProfiles() if profile_dir else contextlib.nullcontext()
        try:
            with LoadSampler() as load, profiles:
                cpu0, t0 = time.process_time(), time.monotonic()
                report = run_synth(ws, n_paths=n_paths, seed=seed, concurrency=c, provider=provider, run_id=run_id)
                level.wall_s, level.cpu_s = sampling_s + time.monotonic() - t0, time.process_time() - cpu0
            level.load = load.mean
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        level.server_calls = srv.stats.chat_requests
        level.max_in_flight = srv.stats.max_in_flight
    if profile_dir:
        profiles.dump(profile_dir, f"c{c}")
    level.accepted, level.rejected, level.failed = report.accepted, report.rejected, report.failed
    level.sampled = report.sampled
    level.timings = {k: float((getattr(report, "timings", None) or {}).get(k, 0.0)) for k in TIMING_KEYS}
    level.reasons, level.failures = dict(report.reasons), list(report.failures)
    level.logged_calls, level.cache_hits, level.by_stage = call_counts(ws, report.run_id)
    served: list[str] = []
    if scripted is not None:
        served = sorted(set(path_ids) | {p for p, _ in scripted.calls})
        level.unscripted = {p: t for p in served if isinstance(t := scripted.task(p), str)}
    level.images = task_images(ws) | (scripted_images(scripted, served, base_image_name()) if scripted else set())
    level.images_there = len(level.images & there)
    return level


# ---------------------------------------------------------------- main
def print_table(levels: list[Level]) -> None:
    log("")
    log(f"{'c':>3} {'wall s':>7} {'cpu s':>6} {'accepted':>9} {'tasks/min':>9} {'x c1':>5} {'busy %':>6} "
        f"{'llm %':>6} {'docker %':>8} {'own %':>6} {'double calls/task':>17} {'in flight':>9} {'imgs there':>10} {'load':>5}")
    base = levels[0].tasks_per_min or float("nan")
    for lv in levels:
        log(f"{lv.concurrency:>3} {lv.wall_s:>7.1f} {lv.cpu_s:>6.1f} {lv.accepted:>4}/{lv.sampled:<4} "
            f"{lv.tasks_per_min:>9.2f} {lv.tasks_per_min / base:>5.2f} {100 * lv.busy:>6.1f} {100 * lv.share('llm_s'):>6.1f} "
            f"{100 * lv.share('docker_s'):>8.1f} {100 * lv.share('own'):>6.1f} {lv.calls_per_task:>17.1f} "
            f"{lv.max_in_flight:>9} {lv.images_there:>10} {lv.load:>5.1f}")
    log("double calls/task: calls per accepted task of the scripted double, which is right the first time at "
        "every stage (the synthesizer's stage count), not a model's figure")
    log("")
    for lv in levels:
        t = lv.timings
        log(f"c={lv.concurrency}: summed over tasks llm {t['llm_s']:.1f} s, docker {t['docker_s']:.1f} s, "
            f"total {t['total_s']:.1f} s; calls: server {lv.server_calls}, llm_calls table {lv.logged_calls} "
            f"({lv.cache_hits} cache hits); per stage {lv.by_stage}")
        if lv.reasons or lv.failures:
            log(f"      rejected by {lv.reasons}; no task: "
                + "; ".join(f"{f['path_id']}: {str(f['error'])[:400]}" for f in lv.failures[:5]))
        for path, why in lv.unscripted.items():
            log(f"      the scripted replies had no task for {path}: {why[:400]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paths", type=int, default=20, help="demo paths per level (default 20)")
    ap.add_argument("--latency", type=float, default=1.5, help="replay server seconds per call (default 1.5)")
    ap.add_argument("--levels", default="1,4,8", help="concurrency levels (default 1,4,8)")
    ap.add_argument("--seed", type=int, default=0, help="sampling and synthesis seed, the same at every level")
    ap.add_argument("--keep", type=Path, help="keep the template and the levels' workspaces here")
    ap.add_argument("--profile", type=Path, help="cProfile every thread of the highest level into this folder")
    ap.add_argument("--provider", default="llm", choices=("llm", "offline"),
                    help="offline: the recipe synthesizer instead (no LLM; checks the harness, Docker alone)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 paths, levels 1,2, 0.1 s per call")
    args = ap.parse_args(argv)
    if args.quick:
        args.paths, args.levels, args.latency = 2, "1,2", 0.1
    levels_c = sorted({int(x) for x in args.levels.split(",") if x.strip()})
    if not levels_c or levels_c[0] < 1:
        raise SystemExit(f"--levels: concurrency levels of at least 1, got {args.levels!r}")

    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine
    engine = Engine()
    if not engine.image_exists(base_image_name()):
        raise SystemExit(f"base image {base_image_name()} is missing: run `workbench images bootstrap`")
    work = args.keep or Path(tempfile.mkdtemp(prefix="llm-synth-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    built: set[str] = set()
    try:
        t0 = time.monotonic()
        template = build_template(work / "template")
        log(f"workspace template (demo corpus, offline scenarios, graph) in {time.monotonic() - t0:.1f} s: {template}")
        log(f"{args.paths} paths per level, replay latency {args.latency} s, levels {levels_c}, seed {args.seed}")
        levels: list[Level] = []
        for c in levels_c:
            lv = run_level(template, work, c, n_paths=args.paths, latency=args.latency, seed=args.seed,
                           remove=built, profile_dir=args.profile if c == levels_c[-1] else None,
                           provider=args.provider)
            built |= lv.images
            levels.append(lv)
            log(f"c={c}: {lv.wall_s:.1f} s wall, {lv.accepted}/{lv.sampled} accepted, "
                f"{lv.tasks_per_min:.2f} tasks/min, own {100 * lv.share('own'):.1f} % of task time")
        print_table(levels)
    finally:
        for tag in sorted(built):        # leave the engine as found
            engine.remove_image(tag)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    top, low = levels[-1], levels[0]
    speedup = top.tasks_per_min / low.tasks_per_min if low.tasks_per_min else float("nan")
    log(f"throughput c={top.concurrency} vs c={low.concurrency}: {speedup:.2f}x (target >= 4x at 8 vs 1); "
        f"own code at c={top.concurrency}: {100 * top.share('own'):.1f} % of task time (target <= 10 %)")
    log(f"RESULT tasks_per_min_c8={top.tasks_per_min:.2f} speedup_c8_vs_c1={speedup:.2f} "
        f"own_share={top.share('own'):.3f} double_calls_per_task={top.calls_per_task:.2f} "
        f"llm={'scripted-double' if args.provider == 'llm' else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
