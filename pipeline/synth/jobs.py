"""Synthesis batches started from the dashboard: a detached `workbench synth` process
(workbench/detached.py: it outlives the tab, logs to runs/<run_id>/synth.log, and SIGTERM to
its process group is a clean stop — containers removed, finished tasks kept).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from pipeline.synth.limits import DEFAULT_CONCURRENCY
from workbench import detached
from workbench.store import tasks as store
from workbench.workspace import Workspace


@dataclass(frozen=True)
class SynthParams:
    n_paths: int = 20
    sampler: str = "inverse-frequency"
    provider: str = "offline"
    concurrency: int = DEFAULT_CONCURRENCY
    seed: int = 0
    budget_usd: float | None = None    # the LLM spending cap of the batch (None: the workspace's, if any)
    executor: str = "local"            # or "ray" (offline provider only)
    ray_address: str | None = None     # with "ray": the cluster (None: start or attach a local one)
    ship_skills: bool = True           # the claimed skills' packages travel with the tasks (offline)


def new_run_id() -> str:
    return "synth-" + uuid.uuid4().hex[:10]


def launch(ws: Workspace, params: SynthParams) -> str:
    """Start a batch in the background and return its run id at once."""
    run_id = new_run_id()
    args = ["synth", "--workspace", str(ws.root),
            "--paths", str(params.n_paths), "--sampler", params.sampler, "--provider", params.provider,
            "--concurrency", str(params.concurrency), "--seed", str(params.seed), "--run-id", run_id,
            "--no-progress"]
    if params.budget_usd is not None:
        args += ["--budget-usd", repr(float(params.budget_usd))]
    if params.executor != "local":
        args += ["--executor", params.executor]
    if params.ray_address:
        args += ["--ray-address", params.ray_address]
    if not params.ship_skills:
        args.append("--no-skill-packages")
    store.create_run(ws.db, run_id, params.sampler, params.n_paths, params.seed, params.provider,
                     params.concurrency, None)
    pid = _JOBS.spawn(ws, run_id, args)
    store.set_run_status(ws.db, run_id, "running", pid=pid)
    return run_id


_JOBS = detached.JobKind("synth.log", store.get_run, store.set_run_status)
is_alive = detached.is_alive
cancel = _JOBS.cancel          # (ws, run_id) -> bool: SIGTERM to a running batch's process group
log_tail = _JOBS.log_tail      # (ws, run_id, chars=4000) -> the end of its log, or None
