"""pytest plugin shipped in the verifier's toolchain as `wb_seal` (loaded with `-p wb_seal`).

Tests may run the solution's code, and that code may leave a process behind that rewrites
junit.xml or reward.txt once pytest has written them. So when the session finishes, before
any report is written (tryfirst: ahead of junitxml), every process in the container is
killed except PID 1 (and Docker's init's first child, which keeps the container alive),
pytest itself and its ancestors (test.sh's bash). Standard library only."""
import os
import signal

import pytest


def _stat(pid):
    with open(f"/proc/{pid}/stat") as fh:
        rest = fh.read().rsplit(")", 1)[1].split()
    return rest[0], int(rest[1]), int(rest[19])     # state, ppid, start time


def _protected():
    keep, pid = {1}, os.getpid()
    while pid > 1:                                  # pytest and the shells that started it
        keep.add(pid)
        try:
            pid = _stat(pid)[1]
        except (OSError, IndexError, ValueError):
            break
    try:
        init = open("/proc/1/comm").read().strip()
    except OSError:
        init = ""
    if init in ("docker-init", "tini"):
        kids = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    state, ppid, start = _stat(p)
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == 1:
                    kids.append((start, int(p)))
        if kids:
            keep.add(min(kids)[1])
    return keep


def stop_others():
    keep = _protected()
    for _ in range(100):
        live = []
        for p in os.listdir("/proc"):
            if p.isdigit() and int(p) not in keep:
                try:
                    if _stat(p)[0] != "Z":
                        live.append(int(p))
                except (OSError, IndexError, ValueError):
                    continue
        if not live:
            return
        for p in live:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    stop_others()
