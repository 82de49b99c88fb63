"""Synthesis batches started from the dashboard: a detached `workbench synth` process.

The process outlives the browser tab (its own session, output to the run's log file) and
reports progress through the store; cancelling sends SIGTERM to its process group, which
the batch turns into a clean stop (containers removed, finished tasks kept).
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass

from pipeline.synth.limits import DEFAULT_CONCURRENCY
from workbench.config import REPO_ROOT
from workbench.sandbox.engine import pid_alive
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


def new_run_id() -> str:
    return "synth-" + uuid.uuid4().hex[:10]


def launch(ws: Workspace, params: SynthParams) -> str:
    """Start a batch in the background and return its run id at once."""
    run_id = new_run_id()
    log_dir = ws.runs_dir / run_id
    log_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "workbench.cli", "synth", "--workspace", str(ws.root),
           "--paths", str(params.n_paths), "--sampler", params.sampler, "--provider", params.provider,
           "--concurrency", str(params.concurrency), "--seed", str(params.seed), "--run-id", run_id,
           "--no-progress"]
    if params.budget_usd is not None:
        cmd += ["--budget-usd", repr(float(params.budget_usd))]
    store.create_run(ws.db, run_id, params.sampler, params.n_paths, params.seed, params.provider,
                     params.concurrency, None)
    with open(log_dir / "synth.log", "ab") as log:
        log.write(f"$ workbench {shlex.join(cmd[3:])}\n".encode())   # what ran, for the user and the page
        log.flush()
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    store.set_run_status(ws.db, run_id, "running", pid=proc.pid)
    return run_id


def is_alive(pid: int | None) -> bool:
    return pid_alive(pid)


def cancel(ws: Workspace, run_id: str) -> bool:
    """Ask a running batch to stop; returns False when it was not running."""
    run = store.get_run(ws.db, run_id)
    if not run or run["status"] != "running":
        return False
    pid = run.get("pid")
    if not is_alive(pid):
        store.set_run_status(ws.db, run_id, "failed", "the batch process is gone (killed or crashed); resume it")
        return False
    os.killpg(int(pid), signal.SIGTERM)
    return True


def log_tail(ws: Workspace, run_id: str, chars: int = 4000) -> str | None:
    """The end of a launched run's log; None when the run keeps none (it ran in-process: the
    CLI printed to its terminal, the demo build logs to runs/demo-build.log)."""
    path = ws.runs_dir / run_id / "synth.log"
    if not path.exists():
        return None
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - chars))
        return fh.read().decode("utf-8", errors="replace")
