"""The batch's pure worker: one rollout item → one trial → a RolloutOutcome held in memory.

It never writes the workspace (the executor contract: only the driver commits), so the same
function can run on a Ray worker and hand its outcome back through the object store.
Everything the container handed back (verifier files, logs) is hostile: names are checked,
sizes capped, before they become paths of the rollout's folder.
"""
from __future__ import annotations

import fcntl
import json
import tempfile
import threading
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.agents.protocol import AGENT_LABELS, Agent
from pipeline.rollouts.models import AgentSpec, RolloutItem, RolloutOutcome, RolloutRecord
from pipeline.trials.models import TrialResult
from pipeline.verify.run import image_for
from workbench.sandbox.bundle import BundleError, TaskBundle, check_relpath, read_bundle
from workbench.sandbox.ceilings import grant
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import parse as parse_task_toml

FILE_CAP_BYTES = 2 * 1024 * 1024      # per file of a rollout's folder (a flooding verifier cannot fill the disk)
LOG_CAP_CHARS = 200_000
FAILING = ("failed", "error")


class RolloutError(RuntimeError):
    """The item cannot be run as it was planned (its task changed on disk meanwhile)."""


@dataclass
class WorkerContext:
    """What every worker shares: the workspace root (bundles are read from it when an item does
    not carry its own), how to make the item's agent (plain data), the batch's run id, the
    engine and the stop event. Pickled for a Ray worker it keeps only plain data: the engine,
    the stop event and terminus-2's caller are dropped, and the worker uses its node's own
    engine (`node_engine`) and a fresh event."""
    root: Path | None
    agent: AgentSpec
    run_id: str
    engine: Engine | None = None
    caller: Any = None                 # terminus-2's LLM caller: the driver's, local only
    stop: threading.Event = field(default_factory=threading.Event)
    timeout_scale: float = 1.0
    allow_network: bool = False

    def __getstate__(self) -> dict:
        return {**self.__dict__, "engine": None, "caller": None, "stop": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, stop=threading.Event())

    def new_agent(self) -> Agent:
        return self.agent.make(caller=self.caller)

    def engine_here(self) -> Engine:
        return self.engine if self.engine is not None else node_engine()


_NODE_ENGINE: Engine | None = None
_NODE_ENGINE_LOCK = threading.Lock()


def node_engine() -> Engine:
    """This process's engine on a worker node, opened once (opening sweeps what dead owners on
    this host left: a rollout whose worker died leaves no container behind)."""
    global _NODE_ENGINE
    with _NODE_ENGINE_LOCK:
        if _NODE_ENGINE is None:
            _NODE_ENGINE = Engine()
        return _NODE_ENGINE


def ensure_image(engine: Engine, item: RolloutItem, bundle: TaskBundle, build_timeout_s: float) -> str:
    """The item's task image on this engine: the driver built it on its own, but another node's
    engine may lack it, so it is built here from the bundle's environment. A file lock per image
    makes the worker processes of one node build it once (the others find it built)."""
    tag = item.image or image_for(bundle)
    if engine.image_exists(tag):
        return tag
    lock_path = Path(tempfile.gettempdir()) / f"workbench-build-{tag.replace('/', '_').replace(':', '_')}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            res = engine.build(bundle.under("environment"), bundle.environment_hash(), build_timeout_s)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if not res.ok:
        raise RolloutError(f"task {item.task_id}: its image could not be built on this node: {res.reason}")
    return res.image or tag


def folder_of(run_id: str, rollout_id: str) -> str:
    """A rollout's folder, relative to the workspace."""
    return f"runs/{run_id}/rollouts/{rollout_id}"


def bundle_of(item: RolloutItem, root: Path | None) -> TaskBundle:
    """The item's own files when it carries them (Ray), else its bundle as it is on disk now;
    either way it must be the content the batch planned."""
    if item.bundle is not None:
        bundle, changed = item.bundle, "its files as the item carried them are not the content planned"
    else:
        if root is None:
            raise RolloutError(f"task {item.task_id}: the item carries no files and this worker has no workspace")
        try:
            bundle = read_bundle(root / item.bundle_dir)
        except BundleError as exc:
            raise RolloutError(f"task {item.task_id}: its bundle at {item.bundle_dir} cannot be read: {exc}") from None
        changed = "changed on disk after the batch started"
    if bundle.content_hash() != item.bundle_hash:
        raise RolloutError(f"task {item.task_id} {changed} (bundle hash {bundle.content_hash()[:12]}, planned "
                           f"{item.bundle_hash[:12]}); run the batch again")
    return bundle


def run_rollout(item: RolloutItem, wc: WorkerContext) -> RolloutOutcome:
    from pipeline.trials.trial import run_trial   # helper C's trial path; loaded when a rollout runs
    bundle = bundle_of(item, wc.root)
    cfg = grant(parse_task_toml(bundle.text("task.toml")), allow_network=wc.allow_network).task
    engine = wc.engine_here()
    image = ensure_image(engine, item, bundle, cfg.build_timeout_sec)
    agent = wc.new_agent()
    trial = run_trial(engine, image, bundle, cfg, agent, trial_id=item.key, task_id=item.task_id,
                      timeout_scale=wc.timeout_scale, seed=item.sample, run_id=wc.run_id, stop=wc.stop)
    return outcome_of(item, trial, run_id=wc.run_id, label=agent.label)


def outcome_of(item: RolloutItem, trial: TrialResult, *, run_id: str, label: str) -> RolloutOutcome:
    a = trial.agent
    tests = [dict(t) for t in trial.tests]
    n_failed = sum(1 for t in tests if t.get("outcome") in FAILING)
    passed = trial.passed
    failure = None if passed else (trial.failure_class or ("test_assertion" if n_failed else "verifier_error"))
    timings = dict(trial.timings)
    agent_s = float(timings.get("agent_s", a.agent_s))
    record = RolloutRecord(
        rollout_id=item.key, run_id=run_id, task_id=item.task_id, agent=item.agent, agent_label=label,
        model=item.model, sample=item.sample, temperature=item.temperature, source="workbench",
        reward=trial.reward, passed=passed, failure_class=failure, n_tests=len(tests), n_failed=n_failed,
        turns=a.turns, parse_errors=a.parse_errors, prompt_tokens=a.prompt_tokens,
        completion_tokens=a.completion_tokens, cost_usd=a.cost_usd, agent_s=agent_s,
        verifier_s=float(timings.get("verifier_s", 0.0)), total_s=float(timings.get("total_s", 0.0)),
        overhead_ms_per_turn=(a.overhead_s * 1000.0 / a.turns) if a.turns else None,
        folder=folder_of(run_id, item.key), error=(a.error or trial.problem or None),
        # The tests themselves go to rollout_tests, not again into details.
        details={**a.details, **{k: v for k, v in trial.details.items() if k != "tests"},
                 "agent_status": a.status, "problem": trial.problem,
                 "agent_exit_code": a.exit_code, "llm_s": a.llm_s, "timings": timings})
    files: dict[str, bytes] = {}
    if a.trajectory is not None:
        files["trajectory.json"] = json.dumps(a.trajectory, indent=2, default=str).encode()
    if a.recording:
        files["recording.cast"] = a.recording.encode()
    files["agent.log"] = _cap_text("\n".join(filter(None, [a.log, trial.log]))).encode()
    dropped = _add_verifier_files(files, trial.verifier_files)
    if dropped:
        record.details["verifier_files_dropped"] = dropped
    files["result.json"] = result_json(record)
    return RolloutOutcome(record=record, tests=tests, files=files)


def crashed_outcome(item: RolloutItem, exc: BaseException, *, run_id: str) -> RolloutOutcome:
    """A worker that raised: stored as a rollout of failure class `crashed` with the error, so
    nothing is silently lost (its traceback in agent.log)."""
    error = f"{type(exc).__name__}: {exc}"
    record = RolloutRecord(
        rollout_id=item.key, run_id=run_id, task_id=item.task_id, agent=item.agent,
        agent_label=AGENT_LABELS.get(item.agent, item.agent) + (f" · {item.model}" if item.model else ""),
        model=item.model, sample=item.sample, temperature=item.temperature, source="workbench", reward=None,
        passed=False, failure_class="crashed", n_tests=0, n_failed=0, turns=0, parse_errors=0, prompt_tokens=0,
        completion_tokens=0, cost_usd=0.0, agent_s=0.0, verifier_s=0.0, total_s=0.0, overhead_ms_per_turn=None,
        folder=folder_of(run_id, item.key), error=error[:2000], details={"worker_exception": type(exc).__name__})
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    files = {"agent.log": _cap_text(f"the rollout's worker raised; nothing of the trial was kept\n\n{tb}").encode(),
             "result.json": result_json(record)}
    return RolloutOutcome(record=record, tests=[], files=files)


def result_json(record: RolloutRecord) -> bytes:
    return json.dumps(asdict(record), indent=2, default=str).encode()


def _add_verifier_files(files: dict[str, bytes], verifier_files: dict[str, bytes]) -> list[str]:
    """Copy the verifier's files under verifier/, refusing names that would leave the folder and
    capping sizes; returns what was dropped or cut, and why."""
    dropped = []
    for name, data in sorted(verifier_files.items()):
        try:
            rel = check_relpath(str(name))
        except BundleError as exc:
            dropped.append(f"{str(name)[:80]!r}: {exc}")
            continue
        data = bytes(data)
        if len(data) > FILE_CAP_BYTES:
            dropped.append(f"{rel}: {len(data)} bytes cut to {FILE_CAP_BYTES}")
            data = data[:FILE_CAP_BYTES]
        files[f"verifier/{rel}"] = data
    return dropped


def _cap_text(text: str) -> str:
    if len(text) <= LOG_CAP_CHARS:
        return text
    half = LOG_CAP_CHARS // 2
    return f"{text[:half]}\n… [{len(text) - LOG_CAP_CHARS} characters left out] …\n{text[-half:]}"
