"""`workbench rollout`: tasks × k samples of one agent, each a trial in a fresh container.

The executor contract (DESIGN §9): items are run by the pure worker (pipeline/rollouts/worker)
on the local executor (threads) or on Ray (`executor="ray"`: each item a Ray task on a node with
the `docker` resource, carrying its task's files; the worker builds the task image where its
node lacks it); only this driver writes — each rollout's folder under
runs/<run_id>/rollouts/<rollout_id>/ and its rows — one rollout at a time as they arrive.
A rollout's id is its content key, so a resumed batch (or another batch with the same agent
config on the same task content) skips what is stored. A worker that raises is stored as a
`crashed` rollout with its error. Cancel (the stop event): nothing new starts, running agents
end at their next turn, and whatever is still running after a grace period is killed; work cut
short by the stop proves nothing and is not stored (resume does it again). On Ray a stop starts
nothing new and the running rollouts finish on their nodes (their containers are out of this
driver's reach) and are stored. terminus-2 runs locally only (its LLM client, budget and call
log live in the driver).
"""
from __future__ import annotations

import functools
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.rollouts.commit import commit_outcome
from pipeline.rollouts.endpoint import AgentEndpoint, check_endpoint, open_endpoint
from pipeline.rollouts.models import DEFAULT_CONCURRENCY, DEFAULT_K, AgentSpec, RolloutItem, RolloutOutcome
from pipeline.rollouts.params import BatchSpec, ExecutorChoice, check_args, check_executor
from pipeline.rollouts.report import RolloutReport
from pipeline.rollouts.selection import TaskTarget, make_items, select_tasks
from pipeline.rollouts.worker import WorkerContext, crashed_outcome, run_rollout
from workbench.config import workspace_allows_network
from workbench.executors.factory import make_executor
from workbench.executors.local import LocalExecutor
from workbench.executors.protocol import Executor
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.ceilings import grant
from workbench.sandbox.engine import Engine, SandboxError
from workbench.sandbox.task_toml import parse as parse_task_toml
from workbench.store import rollouts as store
from workbench.workspace import Workspace

# After a stop, how long running agents get to end at their next turn before their containers are killed.
STOP_GRACE_S = 10.0
Progress = Callable[[dict], None]


def new_run_id() -> str:
    return "rollout-" + uuid.uuid4().hex[:10]


def resume_hint(run_id: str) -> str:
    return f"resume with `workbench rollout --resume {run_id}`"


def run_rollouts(ws: Workspace, *, agent: str = "oracle", task_ids: Sequence[str] | None = None, k: int = DEFAULT_K,
                 model: str | None = None, temperature: float = 0.0, concurrency: int | None = None,
                 run_id: str | None = None, resume: bool = False, budget_usd: float | None = None,
                 max_turns: int | None = None, replay: str | None = None, progress: Progress | None = None,
                 stop: threading.Event | None = None, engine: Engine | None = None, caller=None,
                 allow_network: bool = False, stop_grace_s: float = STOP_GRACE_S, keep_p: float | None = None,
                 executor: str | Executor | None = None, ray_address: str | None = None) -> RolloutReport:
    """Run (or `resume` the run `run_id`) and return its report. `task_ids` None: the accepted set.
    `executor`: "local" (the default) or "ray" (with `ray_address`), or an Executor object (tests,
    benchmarks); None on a resume: where the run ran before.
    `caller`: an open LLM caller for terminus-2 (else one is opened from the workspace's LLM
    settings, or against the scripted model when `replay` names a behaviour). Raises ValueError
    (bad arguments, unknown tasks, no endpoint) before anything is recorded, SandboxError when
    Docker or the base image is missing."""
    stop = stop or threading.Event()
    kind = _kind_of(executor)
    if resume:
        spec, concurrency, where = _resumed_spec(ws, run_id, concurrency)
        if kind is not None or ray_address:
            where = ExecutorChoice(kind or where.kind, ray_address)
        check_executor(spec.agent, where.kind, where.ray_address)
        run_id = str(run_id)
        targets = select_tasks(ws, list(spec.task_ids))
    else:
        where = ExecutorChoice(kind or "local", ray_address)
        check_args(agent=agent, k=k, concurrency=concurrency, temperature=temperature, budget_usd=budget_usd,
                   max_turns=max_turns, replay=replay, model=model, keep_p=keep_p, executor=where.kind,
                   ray_address=where.ray_address)
        if agent == "terminus-2" and caller is None:
            check_endpoint(ws, replay)
        targets = select_tasks(ws, task_ids)
        spec = BatchSpec(agent, tuple(t.task_id for t in targets), k, model, float(temperature), max_turns, replay,
                         keep_p)
        concurrency = concurrency or DEFAULT_CONCURRENCY
        run_id = run_id or new_run_id()
        _check_new_run_id(ws, run_id)
    runner = executor if kind is not None and not isinstance(executor, str) else \
        make_executor(where.kind, concurrency=concurrency, ray_address=where.ray_address)
    engine = engine or Engine()
    endpoint: AgentEndpoint | None = None
    if spec.agent == "terminus-2" and caller is None:
        endpoint = open_endpoint(ws, run_id=run_id, concurrency=concurrency, model=spec.model, budget_usd=budget_usd,
                                 replay=spec.replay, targets=targets)
        caller = endpoint.caller
    model_used = endpoint.model if endpoint else (spec.model if spec.agent == "terminus-2" else None)
    try:
        agent_spec = AgentSpec(spec.agent, model=model_used, temperature=spec.temperature, max_turns=spec.max_turns,
                               keep_p=spec.keep_p)
        probe = agent_spec.make(caller=caller)
        # every behaviour of the scripted model goes by one model name: the key tells them apart
        agent_key = probe.config_key() + (f":replay={spec.replay}" if spec.replay else "")
        items = make_items(targets, agent=spec.agent, agent_key=agent_key, model=model_used, k=spec.k,
                           temperature=spec.temperature, carry_bundles=where.kind != "local")
        if not resume:
            store.create_run(ws.db, run_id, agent=spec.agent, model=model_used, k=spec.k, concurrency=concurrency,
                             n_tasks=len(targets), params=spec.params(budget_usd=budget_usd, executor=where.kind,
                                                                      ray_address=where.ray_address))
        store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
        batch = RolloutBatch(ws, run_id, spec, engine, stop, progress, concurrency=concurrency,
                             stop_grace_s=stop_grace_s, allow_network=allow_network or workspace_allows_network(ws.root))
        batch.report.model = model_used
        if endpoint is not None and endpoint.note:
            batch.report.notes.append(endpoint.note)
        report = batch.run(targets, items, runner, WorkerContext(
            root=ws.root, agent=agent_spec, run_id=run_id, engine=engine, caller=caller, stop=stop,
            allow_network=batch.allow_network))
    except BaseException as exc:
        engine.kill_all()
        if store.get_run(ws.db, run_id) is not None:
            cancelled = isinstance(exc, KeyboardInterrupt)
            store.set_run_status(ws.db, run_id, "cancelled" if cancelled else "failed",
                                 (f"interrupted; {resume_hint(run_id)}" if cancelled else
                                  f"{type(exc).__name__}: {exc}"[:2000]))
        raise
    finally:
        if endpoint is not None:
            endpoint.close()
    report.cost_usd = endpoint.cost_usd if endpoint is not None else _caller_cost(caller)
    store.set_run_status(ws.db, run_id, report.status, report.message)
    return report


def _kind_of(executor: str | Executor | None) -> str | None:
    """An executor object's kind: the local one, or any other (Ray, or a stand-in for it) whose
    workers have no shared disk and no driver-side LLM caller."""
    if executor is None or isinstance(executor, str):
        return executor
    return "local" if isinstance(executor, LocalExecutor) else "ray"


def _check_new_run_id(ws: Workspace, run_id: str) -> None:
    """A new batch may take a run id that is free, or the one its launcher reserved for it."""
    run = store.get_run(ws.db, run_id)
    if run is None:
        return
    params = json.loads(run["params"]) if isinstance(run["params"], str) else dict(run["params"] or {})
    if not (params.get("launched") and "counts" not in params):
        raise ValueError(f"run id {run_id!r} is taken: `workbench rollout --resume {run_id}` continues that run")


def _label(spec: BatchSpec) -> str:
    if spec.agent == "noisy-oracle":
        from pipeline.agents.noisy_oracle import noisy_label
        return noisy_label(spec.keep_p)
    return AGENT_LABELS[spec.agent]


def _caller_cost(caller) -> float:
    try:
        return float(caller.client.budget.total.cost_usd) if caller is not None else 0.0
    except AttributeError:
        return 0.0


def _resumed_spec(ws: Workspace, run_id: str | None,
                  concurrency: int | None) -> tuple[BatchSpec, int, ExecutorChoice]:
    if not run_id:
        raise ValueError("--resume needs the run id (`workbench rollout --resume RUN_ID`; the Rollouts page lists them)")
    run = store.get_run(ws.db, run_id)
    if run is None:
        raise ValueError(f"nothing to resume: no rollout run {run_id!r} in this workspace")
    if run["status"] == "running" and run.get("pid") and run["pid"] != os.getpid():
        from workbench.sandbox.engine import pid_alive
        if pid_alive(int(run["pid"])):
            raise ValueError(f"run {run_id} is still running (pid {run['pid']}); cancel it first")
    p = json.loads(run["params"]) if isinstance(run["params"], str) else dict(run["params"])
    if "k" not in p:   # a launcher's reserved row whose process never got as far as planning the batch
        raise ValueError(f"run {run_id} never started (its log under runs/{run_id}/ says why); launch it again")
    spec = BatchSpec(run["agent"], tuple(p["task_ids"]), int(run["k"]), p.get("model"), float(p.get("temperature", 0)),
                     p.get("max_turns"), p.get("replay"), p.get("keep_p"))
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}")
    # runs from before executors were recorded ran locally
    where = ExecutorChoice(p.get("executor") or "local", p.get("ray_address"))
    return spec, concurrency or int(run["concurrency"]), where


class RolloutBatch:
    """The driver of one run: image builds (once per task), the executor, commits, the stop."""

    def __init__(self, ws: Workspace, run_id: str, spec: BatchSpec, engine: Engine, stop: threading.Event,
                 progress: Progress | None, *, concurrency: int, stop_grace_s: float, allow_network: bool):
        self.ws, self.run_id, self.spec, self.engine = ws, run_id, spec, engine
        self.stop, self.progress, self.concurrency = stop, progress, concurrency
        self.stop_grace_s, self.allow_network = stop_grace_s, allow_network
        self.report = RolloutReport(run_id=run_id, agent=spec.agent, model=spec.model,
                                    agent_label=_label(spec), runs_folder=f"runs/{run_id}/rollouts")
        self.halted: str | None = None      # why the batch stopped taking work (budget, endpoint)
        self.killed = False                 # containers were killed: nothing arriving now is real
        self.dropped = 0                    # outcomes cut short by the stop, not stored

    # ------------------------------------------------------------ images
    def _build_images(self, targets: Sequence[TaskTarget]) -> dict[str, str]:
        """Build each task's image that is missing (content-hash named, as verification does);
        returns task_id -> why it could not be built."""
        missing = [t for t in targets if not self.engine.image_exists(t.image)]
        if not missing:
            return {}
        base = base_image_name()
        if not self.engine.image_exists(base):
            raise SandboxError(f"base image {base} is missing: run `workbench images bootstrap` "
                               "(or set WORKBENCH_BASE_IMAGE)")

        def build(t: TaskTarget) -> tuple[str, str | None]:
            if self.stop.is_set():
                return t.task_id, "not built: the batch was stopped"
            cfg = grant(parse_task_toml(t.bundle.text("task.toml"))).task
            res = self.engine.build(t.bundle.under("environment"), t.bundle.environment_hash(), cfg.build_timeout_sec)
            return t.task_id, None if res.ok else f"its image could not be built: {res.reason}"
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="build") as pool:
            results = list(pool.map(build, missing))
        self.report.built = [tid for tid, why in results if why is None]
        return {tid: why for tid, why in results if why}

    # ------------------------------------------------------------ counting
    def _count(self, passed: bool, failure_class: str | None) -> None:
        if passed:
            self.report.passed += 1
        else:
            fc = failure_class or "unknown"
            self.report.failure_classes[fc] = self.report.failure_classes.get(fc, 0) + 1

    def _tick(self) -> None:
        counts = self.report.counts()
        store.set_run_progress(self.ws.db, self.run_id, counts, f"running: {self.report.summary()}")
        if self.progress:
            self.progress(dict(counts))

    # ------------------------------------------------------------ commits (the caller's thread)
    def _commit(self, item: RolloutItem, outcome: RolloutOutcome) -> None:
        details = outcome.record.details
        if details.get("budget_exceeded"):
            self._halt("budget")       # the agent ended on the cap, not on its own: resume runs it again
            return
        if details.get("endpoint_fault"):
            self._halt(f"the LLM endpoint failed ({str(details['endpoint_fault'])[:300]})")
            return
        if self.killed or details.get("agent_status") == "stopped":
            self.dropped += 1          # cut short by the stop: proves nothing; resume runs it again
            return
        try:
            commit_outcome(self.ws, outcome)
        except (ValueError, OSError) as exc:   # a malformed record or an unwritable file: kept as a crash
            outcome = crashed_outcome(item, exc, run_id=self.run_id)
            commit_outcome(self.ws, outcome)
        self.report.ran += 1
        self._count(outcome.record.passed, outcome.record.failure_class)
        self._tick()

    def _on_error(self, item: RolloutItem, exc: BaseException) -> None:
        if isinstance(exc, BudgetExceeded):
            self._halt("budget")
            return
        if isinstance(exc, LLMCallError) and exc.endpoint_fault:
            self._halt(f"the LLM endpoint failed ({exc.error_class}: {str(exc)[:300]})")
            return
        if self.stop.is_set():
            self.dropped += 1          # most likely its container was killed by the stop
            return
        self._commit(item, crashed_outcome(item, exc, run_id=self.run_id))

    def _halt(self, why: str) -> None:
        self.halted = self.halted or why
        self.stop.set()
        self.dropped += 1

    def kill(self) -> None:
        self.killed = True
        self.engine.kill_all()

    def _watch_stop(self, finished: threading.Event) -> None:
        """Once stopped, give running agents `stop_grace_s` to end at their next turn, then kill."""
        while not finished.is_set():
            if self.stop.wait(0.2):
                if not finished.wait(self.stop_grace_s):
                    self.kill()
                return

    # ------------------------------------------------------------ the run
    def run(self, targets: Sequence[TaskTarget], items: list[RolloutItem], executor: Executor,
            wc: WorkerContext) -> RolloutReport:
        t0 = time.monotonic()
        r = self.report
        r.total = len(items)
        keys = [it.key for it in items]
        done = store.finished_keys(self.ws.db, keys)
        for row in store.outcomes_of(self.ws.db, list(done)).itertuples():
            self._count(bool(row.passed), row.failure_class)
        r.skipped = len(done)
        todo_tasks = {it.task_id for it in items if it.key not in done}
        unbuildable = self._build_images([t for t in targets if t.task_id in todo_tasks])
        runnable = [it for it in items if it.task_id not in unbuildable]
        for task_id, why in unbuildable.items():
            n = sum(1 for it in items if it.task_id == task_id and it.key not in done)
            r.not_run += n
            r.notes.append(f"task {task_id}: {n} rollout(s) not run, {why}")
        self._tick()
        finished = threading.Event()
        watcher = threading.Thread(target=self._watch_stop, args=(finished,), name="rollout-stop", daemon=True)
        if isinstance(executor, LocalExecutor):
            # On Ray the containers run on the workers' engines, out of this engine's reach: a stop
            # lets the running rollouts finish (they are real and stored) and starts no new one.
            watcher.start()
        try:
            # a partial, not a closure: on Ray it is pickled once, with the context's plain data only
            executor.run(runnable, functools.partial(run_rollout, wc=wc), finished=done,
                         commit=self._commit, on_error=self._on_error, stop=self.stop)
        finally:
            finished.set()
            if watcher.is_alive():
                watcher.join(5)
            if self.stop.is_set():
                self.engine.kill_all()     # nothing of the batch may outlive it
            if not isinstance(executor, LocalExecutor):
                # A Ray worker that died mid-rollout (its node killed) left its container to the
                # keeper; on this host the sweep removes it now rather than at the next batch.
                self.engine.sweep_stale()
        r.seconds = time.monotonic() - t0
        self._finish()
        return r

    def _finish(self) -> None:
        r = self.report
        left = r.total - r.stored - r.not_run
        if self.halted == "budget":
            r.status, r.message = "cancelled", f"budget spent after {r.summary()}; {resume_hint(self.run_id)}"
        elif self.halted:
            r.status = "cancelled"
            r.message = f"stopped: {self.halted}; {r.summary()}; {resume_hint(self.run_id)} once it answers"
        elif self.stop.is_set() and left > 0:
            r.status, r.message = "cancelled", f"cancelled: {r.summary()}; {resume_hint(self.run_id)}"
        elif r.not_run and not r.stored:
            # Nothing of the batch is in the store: not a result, whatever the counts say.
            r.status = "failed"
            r.message = (f"no rollout could run: {r.not_run} not run (see notes): fix the tasks and "
                         f"{resume_hint(self.run_id)}")
        else:
            r.status, r.message = "done", r.summary()
            if r.not_run:
                r.message += f"; {r.not_run} not run (see notes): fix the task and {resume_hint(self.run_id)}"
        store.set_run_progress(self.ws.db, self.run_id, r.counts())
