"""Child processes that die with the process that started them, even when it is SIGKILLed
(Linux's PR_SET_PDEATHSIG), and that it stops as a group when it ends normally."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """A `preexec_fn`: the kernel sends SIGTERM to this child when its parent dies. Call it
    only for children started from the main thread: the signal follows the *thread* that forked."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:   # the parent died before the prctl took effect
        os._exit(1)


def start_owned(cmd: list[str], *, log_path, env: dict | None = None, cwd=None) -> subprocess.Popen:
    """Start `cmd` in its own process group (so stopping it reaches its children too), with its
    output in `log_path`, dying with this process."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd, process_group=0, preexec_fn=die_with_parent)


def stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM to the child's group, SIGKILL after `grace_s`; reaps the child."""
    if proc.poll() is not None:
        return
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
