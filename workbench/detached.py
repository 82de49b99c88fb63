"""Batches the dashboard starts: a `workbench …` process that outlives the browser tab.

The process runs in its own session (so a closed tab or a restarted app does not take it
down) with its output in a log file under the run's folder; cancelling sends SIGTERM to its
process group, which the batch turns into a clean stop. Used by the synthesis and the
rollout jobs alike; each keeps its own run rows.
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config import REPO_ROOT
from workbench.sandbox.engine import pid_alive

GONE = "the batch process is gone (killed or crashed); resume it"


def spawn(args: list[str], log_path: Path) -> int:
    """Start `workbench <args>` detached, appending to `log_path` (its first line the command,
    for the user and the page); returns its pid at once."""
    cmd = [sys.executable, "-m", "workbench.cli", *args]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"$ workbench {shlex.join(args)}\n".encode())
        log.flush()
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return proc.pid


def is_alive(pid: int | None) -> bool:
    return pid_alive(pid)


def cancel(run: Mapping | None, mark_gone: Callable[[str], None]) -> bool:
    """Ask a running batch (its run row: status, pid) to stop; False when it was not running.
    A run whose process is gone is marked so through `mark_gone(message)`."""
    if not run or run["status"] != "running":
        return False
    pid = run.get("pid")
    if not is_alive(pid):
        mark_gone(GONE)
        return False
    try:
        os.killpg(int(pid), signal.SIGTERM)
    except ProcessLookupError:     # ended between the look and the signal
        return False
    return True


def tail(path: Path, chars: int = 4000) -> str | None:
    """The end of a log file; None when there is none."""
    if not path.exists():
        return None
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - chars))
        return fh.read().decode("utf-8", errors="replace")


@dataclass(frozen=True)
class JobKind:
    """One kind of launched batch: its log's name in the run's folder and its run rows'
    reader and status writer (each kind keeps its own table)."""
    log_name: str
    get_run: Callable[[Any, str], Mapping | None]           # (db, run_id) -> row
    set_run_status: Callable[..., None]                     # (db, run_id, status, message)

    def log_path(self, ws, run_id: str) -> Path:
        return ws.runs_dir / run_id / self.log_name

    def spawn(self, ws, run_id: str, args: list[str]) -> int:
        return spawn(args, self.log_path(ws, run_id))

    def cancel(self, ws, run_id: str) -> bool:
        """Ask a running batch to stop; returns False when it was not running."""
        return cancel(self.get_run(ws.db, run_id), lambda why: self.set_run_status(ws.db, run_id, "failed", why))

    def log_tail(self, ws, run_id: str, chars: int = 4000) -> str | None:
        """The end of a launched run's log; None when the run keeps none (it ran in-process: the
        CLI printed to its terminal, the demo build logs to runs/demo-build.log)."""
        return tail(self.log_path(ws, run_id), chars)
