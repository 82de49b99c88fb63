"""Installed in the verifier's toolchain as the module `wb_strays` (standard library only):
kill every process in the container except PID 1 (and Docker's init's first child, which
keeps the container alive), the caller and its ancestors. Used before the tests (by the
verifier, on the toolchain's Python) and when pytest's session ends (the `wb_seal` plugin)."""
import os
import signal
import time


def _stat(pid):
    with open(f"/proc/{pid}/stat") as fh:
        rest = fh.read().rsplit(")", 1)[1].split()
    return rest[0], int(rest[1]), int(rest[19])     # state, ppid, start time


def _procs():
    out = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                out[int(p)] = _stat(p)
            except (OSError, IndexError, ValueError):
                continue
    return out


def protected():
    keep, pid = {1}, os.getpid()
    while pid > 1:                                  # the caller and whoever started it
        keep.add(pid)
        try:
            pid = _stat(pid)[1]
        except (OSError, IndexError, ValueError):
            break
    try:
        with open("/proc/1/comm") as fh:
            init = fh.read().strip()
    except OSError:
        init = ""
    if init in ("docker-init", "tini"):
        kids = [(start, p) for p, (state, ppid, start) in _procs().items() if ppid == 1]
        if kids:
            keep.add(min(kids)[1])
    return keep


def stop_others(deadline_s=3.0):
    """(killed, left): rounds repeat until nothing is left, so processes forked meanwhile are
    caught; a fork bomb's respawning children count each time they are killed. SIGKILL is
    delivered asynchronously: a killed process can stay visible (not yet a zombie) for a while
    on a loaded machine, so the rounds run until a deadline, pausing when only processes
    already killed are left (200 tight rounds were too short under CI load)."""
    keep, killed, live, signalled = protected(), 0, [], set()
    end = time.monotonic() + deadline_s
    while True:
        live = [p for p, (state, _, _) in _procs().items() if state not in ("Z", "X") and p not in keep]
        if not live:
            return killed, 0
        if time.monotonic() > end:
            return killed, len(live)
        fresh = [p for p in live if p not in signalled]
        killed += len(fresh)
        for p in live:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        signalled.update(fresh)
        if not fresh:
            time.sleep(0.005)


def report():
    killed, left = stop_others()
    keep = protected() - {os.getpid()}
    print(f"KILLED {killed} LEFT {left} KEPT {len(keep) - 1}")
