"""Evolve runs started from the dashboard: a detached `workbench evolve` process (workbench/
detached.py: it outlives the tab, logs to runs/<run_id>/evolve.log, and SIGTERM to its process
group stops it cleanly — no new variant or rollout starts, what was made is kept, the run
`cancelled` with how to resume). Progress is in the store (evolve_runs.params["progress"])."""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.evolve.models import DEFAULT_AGENT, DEFAULT_K
from pipeline.evolve.run import check_evolve_args, new_run_id, select_parents
from workbench import detached
from workbench.store import lineage as store
from workbench.workspace import Workspace

LOG_NAME = "evolve.log"


@dataclass(frozen=True)
class EvolveParams:
    """`task_ids` empty: the accepted original tasks."""
    task_ids: tuple[str, ...] = ()
    rounds: int = 1
    agent: str = DEFAULT_AGENT
    k: int = DEFAULT_K
    keep_p: float | None = None          # noisy-oracle's p
    concurrency: int | None = None
    executor: str = "local"              # workbench.executors.protocol.EXECUTORS
    ray_address: str | None = None

    def cli_args(self, ws: Workspace, run_id: str) -> list[str]:
        args = ["evolve", "--workspace", str(ws.root)]
        args += ["--tasks", *self.task_ids] if self.task_ids else ["--accepted"]
        args += ["--rounds", str(self.rounds), "--agent", self.agent, "-k", str(self.k), "--run-id", run_id,
                 "--no-progress", "--executor", self.executor]
        if self.keep_p is not None:
            args += ["--p", repr(float(self.keep_p))]
        if self.concurrency is not None:
            args += ["--concurrency", str(self.concurrency)]
        if self.ray_address:
            args += ["--ray-address", self.ray_address]
        return args


def launch(ws: Workspace, params: EvolveParams) -> str:
    """Start a run in the background and return its run id at once. Bad parameters (and unknown
    or unaccepted tasks) raise ValueError here, before anything is started."""
    check_evolve_args(rounds=params.rounds, agent=params.agent, model=None, k=params.k, keep_p=params.keep_p,
                      concurrency=params.concurrency, executor=params.executor, ray_address=params.ray_address)
    select_parents(ws, list(params.task_ids) or None)
    run_id = new_run_id()
    # The row exists before the process does, so the page lists the run (and can cancel it) at
    # once; the process takes the pending row over when it starts.
    store.create_run(ws.db, run_id, rounds=params.rounds, agent=params.agent, model=None, k=params.k,
                     params={"task_ids": list(params.task_ids), "launched": True})
    store.set_run_pid(ws.db, run_id, _JOBS.spawn(ws, run_id, params.cli_args(ws, run_id)))
    return run_id


_JOBS = detached.JobKind(LOG_NAME, store.get_run, store.set_run_status)
is_alive = detached.is_alive
cancel = _JOBS.cancel          # (ws, run_id) -> bool: SIGTERM to a running run's process group
log_tail = _JOBS.log_tail      # (ws, run_id, chars=4000) -> the end of its log, or None
