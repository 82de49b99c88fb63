"""The test phase of a check, out of the solution's reach.

Once solve.sh (later an agent) is done, nothing it left may run on or write into the
verifier's output. In this order, each step from the daemon side or on the read-only
toolchain (workbench/sandbox/toolchain.py), never on the container's own binaries:
1. stop every process but PID 1, then confirm from outside (the container's cgroup) that no
   process but the kept ones is alive;
2. empty /tests and /logs/verifier and neutralise /etc/ld.so.preload (as Harbor empties the
   verifier folder: a planted reward.json or junit.xml must not be read) — before the tests,
   1 and 2 run as one exec (stop_strays_and_prepare), 2 only when 1 left nothing running, and
   the outside check still comes before 3;
3. copy the tests in and run tests/test.sh on the toolchain's bash with a clean environment;
4. stop every process again (a test may have started the solution's code), then read the
   reward and the per-test outcomes.
"""
from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from pipeline.verify import trace_scan
from workbench.sandbox import toolchain

VERIFIER_DIR = "/logs/verifier"
STRAY_WAIT_S = 3.0

# Kills every process but PID 1 (and Docker's init's first child) with the toolchain's own
# module (workbench/sandbox/toolchain_strays.py).
STOP_STRAYS = "import wb_strays; wb_strays.report()"

# Empties what the tests read and write; every path is removed whatever the solution made of
# it (a file, a folder, a link to elsewhere), since nothing of the solution runs any more.
PREPARE = r"""
import os, shutil, stat
def wipe(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
for p in ('/tests', '/logs/verifier', '/etc/ld.so.preload'):
    wipe(p)
if os.path.islink('/logs') or (os.path.exists('/logs') and not os.path.isdir('/logs')):
    wipe('/logs')
os.makedirs('/logs/verifier', mode=0o777)
os.chmod('/logs/verifier', 0o777)
if os.path.isdir('/etc') and not os.path.islink('/etc'):
    open('/etc/ld.so.preload', 'w').close()
print('READY')
"""

# Runs argv[2:] with exactly the environment given as JSON in argv[1].
LAUNCH = "import json, os, sys; os.execve(sys.argv[2], sys.argv[2:], json.loads(sys.argv[1]))"

# Where tests may write without it being a trace other tests could read: scratch, caches,
# pseudo file systems, the verifier's own folders, and where a hand-written test.sh installs
# its tools before the tests (pip, uv, apt).
SCRATCH_PREFIXES = ("/tmp/", "/var/tmp/", "/logs/", "/tests/", "/root/.cache/", "/dev/", "/proc/", "/sys/", "/run/",
                    toolchain.ROOT + "/", "/etc/ld.so.preload", "/root/.local/", "/usr/local/lib/python",
                    "/usr/local/bin/", "/var/cache/", "/var/lib/apt/", "/var/lib/dpkg/", "/var/log/apt/",
                    "/var/log/dpkg.log")
# Files that reading commands rewrite on their own: bytecode caches, and git's index, which
# `git status` refreshes (stat data only) in a repository it merely inspects.
SELF_WRITTEN = ("__pycache__", "/.git/index")
_SKIP = json.dumps({"prefixes": SCRATCH_PREFIXES, "parts": SELF_WRITTEN})
_SCAN_SOURCE = Path(trace_scan.__file__).read_text()


class PhaseError(RuntimeError):
    """A step of the test phase could not be done; the message says which and why."""


def _tool(box, code: str, *args: str, timeout_s: float = 30.0):
    res = box.run(toolchain.python_argv(code, *args), timeout_s, workdir="/", environment=toolchain.LOADER_ENV)
    if res.exit_code != 0:
        raise PhaseError(f"exit code {res.exit_code}: {res.output.strip()[-300:]}")
    return res.output


def pid_count(box) -> int | None:
    """The container's processes alive, from outside: its cgroup's task list (zombies left out:
    a killed process is done once it is one, however long PID 1 takes to reap it; that wait was
    up to a second per stop), else its pid count (Box.process_count: the cgroup, else the
    daemon). None of them can be faked from inside."""
    live = box.live_process_count()
    return live if live is not None else box.process_count()


# Steps 1 and 2 in one exec (a docker exec is 0.1-0.8 s on a loaded daemon): the killer, then
# the wiping only when it left nothing running. The pid count is confirmed from outside right
# after, before anything is copied in or run, so a survivor still fails the phase; one that
# wrote after the wipe would have to be alive then, and every process left was a zombie
# (wb_strays counts any other state as left).
STOP_STRAYS_AND_PREPARE = """
import contextlib, io, sys, wb_strays
with contextlib.redirect_stdout(io.StringIO()) as said:
    wb_strays.report()
print(said.getvalue(), end='', flush=True)
if ' LEFT 0 ' not in said.getvalue():
    sys.exit(0)
""" + PREPARE


def stop_strays(box) -> int:
    """Kill every process the solution (or a test) left, and confirm the count from outside;
    returns how many were killed (a fork bomb's respawning children count each time)."""
    return _confirm_stopped(box, _tool(box, STOP_STRAYS))


def stop_strays_and_prepare(box) -> int:
    """stop_strays then prepare, as one exec; the same checks, the pid count confirmed from
    outside before this returns."""
    out = _tool(box, STOP_STRAYS_AND_PREPARE)
    killed = _confirm_stopped(box, out)
    if not out.rstrip().endswith("READY"):
        raise PhaseError(f"the verifier folders could not be prepared: {out.strip()[-200:]!r}")
    return killed


def _confirm_stopped(box, out: str) -> int:
    """The killer's answer checked, then the pid count from outside; how many were killed."""
    m = re.search(r"KILLED (\d+) LEFT (\d+) KEPT (\d+)", out)
    if not m:
        raise PhaseError(f"the stray killer answered {out.strip()[-200:]!r}")
    if int(m.group(2)):
        raise PhaseError(f"{m.group(2)} processes could not be stopped")
    killed, kept = int(m.group(1)), 1 + int(m.group(3))
    deadline = time.monotonic() + STRAY_WAIT_S
    while True:   # the count includes the killer's exec and zombies until they are reaped
        count = pid_count(box)
        if count is None or count <= kept or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if count is not None and count > kept:
        raise PhaseError(f"{count - kept} processes still alive after they were all killed")
    return killed


def prepare(box) -> None:
    _tool(box, PREPARE)


def snapshot(box) -> str:
    """Record, inside the container, every file outside scratch as it is now; returns the record's path."""
    path = f"/tmp/.wb-before-{uuid.uuid4().hex}.json"
    _tool(box, _SCAN_SOURCE, "save", path, _SKIP)
    return path


def traces(box, saved: str) -> list[str]:
    """Files the tests created, changed or removed outside scratch since `snapshot`."""
    return json.loads(_tool(box, _SCAN_SOURCE, "compare", saved, _SKIP).strip().splitlines()[-1])


def run_test_sh(box, timeout_s: float):
    """Copy nothing, just run /tests/test.sh on the toolchain's bash with a clean environment."""
    image_env = box.engine.client.api.inspect_container(box.container.id)["Config"].get("Env") or []
    env = toolchain.clean_env(image_env)
    argv = toolchain.python_argv(LAUNCH, json.dumps(env), toolchain.BASH, "/tests/test.sh")
    return box.run(argv, timeout_s, environment=toolchain.LOADER_ENV)
