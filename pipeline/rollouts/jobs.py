"""Rollout batches started from the dashboard: a detached `workbench rollout` process
(workbench/detached.py: it outlives the tab, logs to runs/<run_id>/rollout.log, and SIGTERM to
its process group stops it cleanly — no new rollout starts, containers removed, stored
rollouts kept, the run `cancelled` with how to resume). Progress is in the store
(rollout_runs.params["counts"], read by `counts`)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.rollouts.batch import check_args, new_run_id
from pipeline.rollouts.models import DEFAULT_CONCURRENCY, DEFAULT_K
from workbench import detached
from workbench.store import rollouts as store
from workbench.workspace import Workspace

LOG_NAME = "rollout.log"


@dataclass(frozen=True)
class RolloutParams:
    """`task_ids` empty: the accepted set. `replay`: terminus-2 against the scripted test model
    (a behaviour of pipeline.agents.terminus2.scripted)."""
    agent: str
    task_ids: tuple[str, ...] = ()
    k: int = DEFAULT_K
    model: str | None = None
    temperature: float = 0.0
    concurrency: int = DEFAULT_CONCURRENCY
    replay: str | None = None
    budget_usd: float | None = None
    keep_p: float | None = None          # noisy-oracle's p
    executor: str = "local"              # workbench.executors.protocol.EXECUTORS
    ray_address: str | None = None

    def cli_args(self, ws: Workspace, run_id: str) -> list[str]:
        args = ["rollout", "--workspace", str(ws.root), "--agent", self.agent]
        args += ["--tasks", *self.task_ids] if self.task_ids else ["--accepted"]
        args += ["-k", str(self.k), "--concurrency", str(self.concurrency), "--run-id", run_id, "--no-progress"]
        if self.temperature:
            args += ["--temperature", repr(float(self.temperature))]
        if self.model:
            args += ["--model", self.model]
        if self.replay:
            args += ["--replay", self.replay]
        if self.budget_usd is not None:
            args += ["--budget-usd", repr(float(self.budget_usd))]
        if self.keep_p is not None:
            args += ["--p", repr(float(self.keep_p))]
        args += ["--executor", self.executor]
        if self.ray_address:
            args += ["--ray-address", self.ray_address]
        return args


def launch(ws: Workspace, params: RolloutParams) -> str:
    """Start a batch in the background and return its run id at once. Bad parameters raise
    ValueError here, before anything is started."""
    check_args(agent=params.agent, k=params.k, concurrency=params.concurrency, temperature=params.temperature,
               budget_usd=params.budget_usd, max_turns=None, replay=params.replay, model=params.model,
               keep_p=params.keep_p, executor=params.executor, ray_address=params.ray_address)
    run_id = new_run_id()
    # The row exists before the process does, so the page lists the run at once; the batch
    # fills in its tasks and counts when it starts.
    store.create_run(ws.db, run_id, agent=params.agent, model=params.model, k=params.k,
                     concurrency=params.concurrency, n_tasks=len(params.task_ids),
                     params={"task_ids": list(params.task_ids), "launched": True})
    pid = _JOBS.spawn(ws, run_id, params.cli_args(ws, run_id))
    store.set_run_status(ws.db, run_id, "running", pid=pid)
    return run_id


_JOBS = detached.JobKind(LOG_NAME, store.get_run, store.set_run_status)
is_alive = detached.is_alive
cancel = _JOBS.cancel          # (ws, run_id) -> bool: SIGTERM to a running batch's process group
log_tail = _JOBS.log_tail      # (ws, run_id, chars=4000) -> the end of its log, or None


def counts(run: Mapping | None) -> dict[str, int]:
    """A run's live counts (total, done, ran, skipped, passed, failed, not_run) as its batch keeps
    them on the run's row; zeros before the batch has started."""
    keys = ("total", "done", "ran", "skipped", "passed", "failed", "not_run")
    params = (run or {}).get("params") or {}
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            params = {}
    got = params.get("counts") or {}
    return {k: int(got.get(k) or 0) for k in keys}
