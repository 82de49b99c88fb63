"""The demo workspace: the bundled corpus ingested, scenarios inferred offline, the graph
built, two sample batches drawn and (with Docker) a first batch of verified tasks, then a
small batch of the LLM synthesizer against an in-process scripted replay server (no API key;
faults on purpose so repairs show), rollouts of them, and one round of difficulty evolution
on noisy-oracle rollouts, so that every page has something to show. `workbench
demo` runs it in the foreground; `workbench app --demo` runs it as a background process
behind the dashboard. Either way it writes its progress to the workspace's status file
(workbench/demo_status.py)."""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

from workbench import demo_evolve, demo_rollouts
from workbench.config import DEMO_CORPUS, REPO_ROOT
from workbench.console import err
from workbench.console import progress_bar as _progress
from workbench.demo_status import LOG_FILE, DemoStatus, new_status, read_status, write_status
from workbench.process_owner import die_with_parent
from workbench.store.graph import last_build
from workbench.store.status import workspace_status
from workbench.workspace import Workspace

DEMO_TASKS = 12
DEMO_LLM_TASKS = 6
# Faults on the first paths of the demo's LLM batch, so the Tasks page has repairs of every
# artifact to show and one task rejected after its repairs; the rest are built right at once.
# The one that exhausts its repairs (six verifications) goes first: it is the batch's longest.
DEMO_LLM_FAULTS = ("exhaust", "broken_dockerfile", "crashing_solution", "test_bug", "leaking_instruction")
SETUP_DOCKER = REPO_ROOT / "scripts" / "setup-docker.sh"
DOCKER_LOG = "demo-docker-setup.log"   # under the workspace's runs/
_WRITE_EVERY_S = 0.5                   # progress callbacks come per item; the file needs far fewer


def demo_todo(ws: Workspace) -> list[str]:
    """The stages the demo workspace still lacks (cheap: counts only, and the last status file,
    whose unfinished ingest is run again since a killed ingest leaves some skills behind)."""
    s = workspace_status(ws.db)
    llm = _llm_run(ws)
    prev = read_status(ws.root)
    ingest_cut = prev is not None and prev.interrupted and any(
        st.key == "ingest" and st.state != "done" for st in prev.stages)
    todo = [key for key, missing in (
        ("ingest", s["skills"]["total"] == 0 or ingest_cut),
        ("scenarios", s["scenarios"]["skills_with_scenarios"] == 0),
        ("graph", last_build(ws.db) is None),
        ("sample", s["paths"]["total"] == 0),
        ("tasks", s["tasks"]["total"] == 0),
        ("llm_tasks", llm is None or llm["status"] != "finished")) if missing]
    tasks_missing = bool({"tasks", "llm_tasks"} & set(todo))
    if demo_rollouts.rollouts_missing(ws, tasks_missing=tasks_missing):
        todo.append("rollouts")
    if demo_evolve.evolution_missing(ws, tasks_missing=tasks_missing):
        todo.append("evolution")
    return todo


def _llm_run(ws: Workspace) -> dict | None:
    """The latest synthesis run of the LLM provider (the demo's LLM batch), if any."""
    from workbench.store import tasks as task_store
    runs = task_store.runs(ws.db)
    runs = runs[runs["provider"] == "llm"]
    return None if runs.empty else runs.iloc[0].to_dict()


class _Tracker:
    """The status file kept current: stage starts and ends at once, progress at most every
    half second."""

    def __init__(self, ws: Workspace, status: DemoStatus):
        self.ws, self.status, self._last = ws, status, 0.0

    def start(self, key: str, detail: str = "") -> None:
        st = self.status.stage(key)
        st.state, st.detail = "running", detail
        write_status(self.ws.root, self.status)

    def progress(self, key: str, done: int, total: int, detail: str = "") -> None:
        st = self.status.stage(key)
        st.done, st.total, st.detail = done, total or 0, detail or st.detail
        if time.monotonic() - self._last >= _WRITE_EVERY_S:
            self._last = time.monotonic()
            write_status(self.ws.root, self.status)

    def finish(self, key: str, state: str = "done", detail: str = "") -> None:
        st = self.status.stage(key)
        st.state, st.detail = state, detail or st.detail
        if state == "done" and st.total:
            st.done = st.total
        write_status(self.ws.root, self.status)


class _DockerSetup:
    """scripts/setup-docker.sh in the background from the start of the build (it mostly waits
    on apt and debootstrap, so it overlaps the CPU-bound stages); the tasks stage waits for it."""

    def __init__(self, ws: Workspace, script: Path):
        self.log = ws.runs_dir / DOCKER_LOG
        with open(self.log, "wb") as fh:
            self.proc = subprocess.Popen(["bash", str(script)], stdout=fh, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=REPO_ROOT, preexec_fn=die_with_parent)

    def wait(self) -> str:
        """'' when Docker is set up, else the reason with the end of its log."""
        rc = self.proc.wait()
        if rc == 0:
            return ""
        tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
        return f"Docker set-up failed (exit {rc}; log {self.log}): " + " / ".join(tail)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()


def ensure_demo(workspace: str | None, *, docker_setup: Path | None = None) -> Workspace:
    """Build what the demo workspace lacks; each part runs only when it is missing.
    `docker_setup`: a script that sets Docker up (SETUP_DOCKER), run alongside when tasks are
    still to be made."""
    ws = Workspace.open(workspace)
    prev = read_status(ws.root)
    if prev is not None and prev.running:
        err.print(f"The demo workspace in {ws.root} is being built by process {prev.pid}; not starting another build.")
        return ws
    todo = demo_todo(ws)
    if not todo:
        return ws
    synth = [k for k in todo if k in _NEEDS_DOCKER]
    keys = todo if not docker_setup or not synth else [k for k in todo if k not in synth] + ["docker", *synth]
    tracker = _Tracker(ws, new_status(keys, ws.runs_dir / LOG_FILE))
    write_status(ws.root, tracker.status)
    docker = _DockerSetup(ws, docker_setup) if "docker" in keys else None
    if docker:
        tracker.start("docker", f"log: {docker.log}")
    stop, previous = _stop_on_sigterm()
    try:
        for key in todo:
            _STAGES[key](ws, tracker, docker, stop)
        tracker.status.state = "done"
    except BaseException as exc:
        for st in tracker.status.stages:
            if st.state == "running":
                st.state = "failed"
        # The SIGTERM handler raises SystemExit, but raised inside a DuckDB query it comes out as
        # duckdb's "Query interrupted": the stop event says what happened (a clean-clone CI run
        # read such a build as failed, not stopped).
        stopped = stop.is_set() or isinstance(exc, (KeyboardInterrupt, SystemExit))
        tracker.status.state = "stopped" if stopped else "failed"
        tracker.status.error = "stopped by a signal" if stopped else f"{exc.__class__.__name__}: {exc}"
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)   # the caller's own handling, e.g. a test runner
        if docker:
            docker.stop()
        write_status(ws.root, tracker.status)
    return ws


def _stop_on_sigterm():
    """SIGTERM (the app stopping its build) ends the build like Ctrl-C; during synthesis it
    first asks the batch to stop cleanly so its containers are removed. Returns the stop
    event and the handler it replaced (None off the main thread, where none is installed)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return stop, None

    def handler(signum, frame):
        if not stop.is_set():
            stop.set()
            if _in_synthesis.is_set():
                return
        raise SystemExit(128 + signum)
    previous = signal.signal(signal.SIGTERM, handler)
    return stop, signal.SIG_DFL if previous is None else previous   # None: installed from C


_in_synthesis = threading.Event()


def _ingest(ws, tracker, docker, stop) -> None:
    from pipeline.ingest.run import ingest
    err.print(f"Building the demo workspace in {ws.root} from {DEMO_CORPUS} …")
    tracker.start("ingest", str(DEMO_CORPUS))
    progress, update = _progress("Ingesting demo corpus", err.is_terminal)

    def both(done, total, what):
        update(done, total, what)
        tracker.progress("ingest", done, total, f"{Path(what).name}")
    with progress:
        report = ingest(ws, [DEMO_CORPUS], on_progress=both)
    msg = (f"{len(report.new)} skills ingested, {len(report.problems)} packages reported broken "
           "(the corpus carries some on purpose)")
    err.print(msg + ".")
    tracker.finish("ingest", detail=msg)


def _scenarios(ws, tracker, docker, stop) -> None:
    from pipeline.scenarios.run import infer_offline
    err.print("Inferring scenarios with the offline provider …")
    tracker.start("scenarios")
    report = infer_offline(ws, on_progress=lambda d, t, what: tracker.progress("scenarios", d, t, what))
    tracker.finish("scenarios", detail=f"{report.inferred} skills have scenarios")


def _graph(ws, tracker, docker, stop) -> None:
    from pipeline.graph.build import build_graph
    err.print("Building the scenario graph (embeddings, dedup, bridges, map; about a minute the first time) …")
    tracker.start("graph", "about a minute the first time")
    report = build_graph(ws, on_progress=lambda stage, d, t: tracker.progress("graph", d, t or 0, stage))
    tracker.finish("graph", detail=f"{report.scenarios} scenarios in {report.clusters} clusters, "
                                   f"{report.verified} bridges")


def _sample(ws, tracker, docker, stop) -> None:
    from pipeline.graph.sample_run import sample
    tracker.start("sample")
    for i, sampler in enumerate(("inverse-frequency", "random-walk")):
        tracker.progress("sample", i, 2, sampler)
        sample(ws, sampler, 200, seed=1)
    err.print("Sampled 200 inverse-frequency and 200 random-walk paths.")
    tracker.finish("sample", detail="400 paths")


def _engine_or_skip(ws, tracker, key: str, docker):
    """The Docker engine when it and the base image are at hand (waiting for the Docker set-up
    first, if it runs); else None, with the stage skipped and what is missing said once."""
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine, SandboxError
    if docker and tracker.status.stage("docker").state == "running":
        failed = docker.wait()
        tracker.finish("docker", "failed" if failed else "done", failed or "Docker engine and base image ready")
    try:
        engine = Engine()
        ready = engine.image_exists(base_image_name())
        why = "" if ready else f"the base image {base_image_name()} is missing (`workbench images bootstrap`)"
    except SandboxError as exc:
        ready, why = False, str(exc)
    if ready:
        return engine
    if not tracker.status.missing:
        advice = ("No Docker engine or base image: the demo has no synthesized tasks yet. "
                  "`workbench doctor` says what is missing; then launch a batch on the Synthesis page.")
        err.print(advice)
        tracker.status.missing.append(f"{advice} ({why})")
    tracker.finish(key, "skipped", why)
    return None


# What a Docker stage says when it starts: on the terminal, and as its detail in the status file.
_ANNOUNCE = {
    "tasks": (f"Synthesizing and verifying {DEMO_TASKS} tasks in Docker (about half a minute) …", ""),
    "llm_tasks": (f"Synthesizing {DEMO_LLM_TASKS} tasks with the LLM synthesizer against a scripted replay server "
                  "(no API key; some replies broken on purpose, so repairs show; a minute or two) …",
                  "scripted replay server, faults on purpose"),
    "rollouts": (f"Rolling out oracle, nop and ablation (k = {demo_rollouts.K}) on the accepted tasks, and terminus-2 "
                 "against a scripted replay model (a test double, no API key) on a few …",
                 "oracle, nop, ablation; terminus-2 against a scripted test model"),
    "evolution": (f"Evolving the tasks one round: noisy-oracle rollouts (k = {demo_evolve.K}, p = {demo_evolve.KEEP_P:g}; "
                  "simulated, not a model), then harder / context-switch / easier variants, verified and rolled "
                  "out (LLM-built ones against a scripted replay model) …",
                  f"noisy-oracle p = {demo_evolve.KEEP_P:g} (simulated); LLM operator against a scripted test model"),
}


def _docker_stage(ws, tracker, key: str, docker):
    """Start a stage that needs Docker: the engine (the stage announced and running), or None
    with the stage skipped (`_engine_or_skip`)."""
    engine = _engine_or_skip(ws, tracker, key, docker)
    if engine is not None:
        announce, detail = _ANNOUNCE[key]
        err.print(announce)
        tracker.start(key, detail)
    return engine


def _tracked(tracker, key: str, stop, run, label: str) -> object:
    """`run(both)` with its progress (`both(done, total, what)`) on the terminal and in the status
    file; a stop (SIGTERM) lets the batch end cleanly, then ends the build."""
    progress, update = _progress(label, err.is_terminal)

    def both(done, total, what):
        update(done, total, what)
        tracker.progress(key, done, total, what)
    _in_synthesis.set()
    try:
        with progress:
            result = run(both)
    finally:
        _in_synthesis.clear()
    if stop.is_set():
        raise SystemExit(143)
    return result


def _synthesize(tracker, key: str, total: int, stop, run) -> object:
    """One synthesis batch, its progress tracked (`_tracked`) as verified or failed paths."""
    def per_report(both):
        return run(lambda r: both(r["verified"] + r["failed"], total, f"{r['accepted']} accepted"))
    return _tracked(tracker, key, stop, per_report, "Synthesis")


def _tasks(ws, tracker, docker, stop) -> None:
    """A first synthesis batch, when a Docker engine and the base image are at hand; without
    them the demo still serves every other page and says how to get there."""
    from pipeline.synth.batch import run_synth
    engine = _docker_stage(ws, tracker, "tasks", docker)
    if engine is None:
        return
    report = _synthesize(tracker, "tasks", DEMO_TASKS, stop, lambda both: run_synth(
        ws, n_paths=DEMO_TASKS, seed=1, concurrency=2, engine=engine, progress=both, stop=stop))
    msg = f"{report.accepted} of {report.sampled} tasks accepted"
    err.print(msg + ".")
    tracker.finish("tasks", detail=msg)


def _llm_tasks(ws, tracker, docker, stop) -> None:
    """A small batch of the LLM synthesizer (planner, constructor, routed repair, judge) whose
    replies come from an in-process scripted replay server: LLM-built tasks with repair
    history and synthesis costs (at a made-up price of a model named as the replay it is)
    without an API key. A batch cut short before is resumed."""
    from pipeline.synth.batch import run_synth
    from pipeline.synth.jobs import new_run_id
    from pipeline.synth.llm.calls import LLMCaller
    from pipeline.synth.llm.scripted_faults import DEMO_PRICE, DEMO_REPLAY_MODEL, scripted_replies
    from pipeline.synth.llm.synthesizer import LLMSynthesizer
    from workbench.llm.replay_server import ReplayServer, Script
    from workbench.llm.runtime import open_client
    from workbench.llm.settings import LLMSettings
    from workbench.store import repairs
    engine = _docker_stage(ws, tracker, "llm_tasks", docker)
    if engine is None:
        return
    prev = _llm_run(ws)
    run_id = prev["run_id"] if prev is not None else new_run_id()
    scripted, _ = scripted_replies(ws, DEMO_LLM_FAULTS)
    with ReplayServer(Script([scripted.rule()])) as srv:
        settings = LLMSettings(base_url=srv.base_url, model=DEMO_REPLAY_MODEL, concurrency=4,
                               prices={DEMO_REPLAY_MODEL: DEMO_PRICE})
        caller = LLMCaller(open_client(ws, settings, batch_id=run_id))
        try:
            synthesizer = LLMSynthesizer(caller, model=settings.model)
            report = _synthesize(tracker, "llm_tasks", DEMO_LLM_TASKS, stop, lambda both: run_synth(
                ws, n_paths=DEMO_LLM_TASKS, seed=2, concurrency=3, engine=engine, progress=both, stop=stop,
                run_id=run_id, resume=prev is not None, synthesizer=synthesizer))
        finally:
            caller.close()                      # flushes the call log: the tasks' costs can be read now
            repairs.refresh_costs(ws.db, run_id)
    cost = float(caller.client.budget.total.cost_usd)
    msg = (f"{report.accepted} of {report.sampled} LLM-built tasks accepted, {report.rejected} rejected; "
           f"${cost:.4f} at the replay model's demo price")
    err.print(msg + ".")
    tracker.finish("llm_tasks", detail=msg)


def _run_on_engine(ws, tracker, docker, stop, key: str, label: str, run) -> None:
    """A stage that is one call `run(ws, engine, stop=, progress=)` returning its one-line summary."""
    engine = _docker_stage(ws, tracker, key, docker)
    if engine is None:
        return
    msg = _tracked(tracker, key, stop, lambda both: run(ws, engine, stop=stop, progress=both), label)
    err.print(msg + ".")
    tracker.finish(key, detail=msg)


def _rollouts(ws, tracker, docker, stop) -> None:
    """Oracle, nop and ablation rollouts on the accepted tasks, terminus-2 against the scripted
    replay model on a few, the scripted trajectory judge after (workbench/demo_rollouts.py)."""
    _run_on_engine(ws, tracker, docker, stop, "rollouts", "Rollouts", demo_rollouts.run_demo_rollouts)


def _evolution(ws, tracker, docker, stop) -> None:
    """One round of evolution on noisy-oracle rollouts of the probe tasks (workbench/demo_evolve.py)."""
    _run_on_engine(ws, tracker, docker, stop, "evolution", "Evolution", demo_evolve.run_demo_evolution)


_STAGES = {"ingest": _ingest, "scenarios": _scenarios, "graph": _graph, "sample": _sample, "tasks": _tasks,
           "llm_tasks": _llm_tasks, "rollouts": _rollouts, "evolution": _evolution}
_NEEDS_DOCKER = ("tasks", "llm_tasks", "rollouts", "evolution")
