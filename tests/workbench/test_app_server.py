"""`workbench app` as real processes (tests/app_process.py): it owns its server (a signal to
its pid stops it), its demo build dies with it, the URL answers at once on an empty demo
workspace, and a bind the network can reach gets a warning and an access token."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.app_process import App, answers, free_port
from workbench.app_server import MIN_TOKEN_CHARS, is_loopback, plan_bind
from workbench.demo_status import read_status
from workbench.sandbox.engine import pid_alive

TARGET_FIRST_ANSWER_S = 30
TOKEN_URL = re.compile(r"^http://0\.0\.0\.0:1/\?token=[\w-]{16,}$")


def _in_session(sid: int) -> list[str]:
    """Every live process of the session the test started `workbench app` in, but the zombies."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fields[3] == str(sid) and fields[0] != "Z":
            found.append(f"{pid}: {cmd}")
    return found


@pytest.fixture
def apps(tmp_path):
    started: list[App] = []

    def start(*args, env=None) -> App:
        app = App(tmp_path, *args, env=env)
        started.append(app)
        return app
    yield start
    for app in started:
        app.cleanup()


def _wait_until(cond, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_app_pid_stops_its_server(apps, tmp_path, sig):
    app = apps("--workspace", str(tmp_path / "ws"), "app")
    app.wait_answering()
    os.kill(app.proc.pid, sig)   # to the pid, as `kill PID` does: not to its group
    assert _wait_until(lambda: not answers(app.port), 20), "the server still answers after " + sig.name
    app.proc.wait(timeout=20)
    assert _wait_until(lambda: not _in_session(app.proc.pid), 10), _in_session(app.proc.pid)


def test_the_demo_answers_at_once_and_its_build_dies_with_a_killed_app(apps, tmp_path):
    """On an empty workspace `app --demo` answers within the target while the build runs behind
    it; SIGKILL to the app (no chance to clean up) still takes the build with it."""
    ws = tmp_path / "ws"
    app = apps("--workspace", str(ws), "app", "--demo")
    first_answer = app.wait_answering(limit_s=TARGET_FIRST_ANSWER_S + 30)
    print(f"time to first answer on an empty demo workspace: {first_answer:.1f} s")
    assert first_answer <= TARGET_FIRST_ANSWER_S
    assert _wait_until(lambda: read_status(ws) is not None, 30), app.log.read_text()
    build = read_status(ws)
    assert build.state == "building" and build.pid != app.proc.pid and pid_alive(build.pid)
    os.kill(app.proc.pid, signal.SIGKILL)
    assert _wait_until(lambda: not pid_alive(build.pid), 20), "the demo build outlived its app"
    assert _wait_until(lambda: not _in_session(app.proc.pid), 20), _in_session(app.proc.pid)
    assert read_status(ws).interrupted


def test_a_network_bind_warns_and_prints_a_generated_token(apps, tmp_path):
    """`--host 0.0.0.0` without a token: a loud warning and a generated token, printed before
    the server binds. The test holds the port on 127.0.0.1, so the wildcard bind fails and the
    dashboard never reaches the network."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "workbench.cli", "--workspace", str(tmp_path / "ws"), "app",
                              "--host", "0.0.0.0", "--port", str(port)], capture_output=True, text=True, timeout=120,
                             env={k: v for k, v in os.environ.items() if k != "WORKBENCH_AUTH_TOKEN"})
    text = " ".join((out.stderr + out.stdout).split())   # rich wraps long lines
    assert out.returncode != 0, "the wildcard bind should have failed on the held port"
    assert "WARNING: serving on 0.0.0.0" in text and "Settings" in text
    token = re.search(r"Access token \(generated for this run\): (\S+)", text)
    assert token and len(token.group(1)) >= MIN_TOKEN_CHARS
    assert f"?token={token.group(1)}" in text


def test_a_short_token_is_refused_before_anything_is_served(tmp_path):
    out = subprocess.run([sys.executable, "-m", "workbench.cli", "--workspace", str(tmp_path / "ws"), "app",
                          "--host", "0.0.0.0", "--port", str(free_port()), "--auth-token", "hunter2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert f"--auth-token is 7 characters long; use at least {MIN_TOKEN_CHARS}" in " ".join(out.stderr.split())


def test_bind_plans():
    assert plan_bind("127.0.0.1", 1, None).token is None
    assert plan_bind("localhost", 1, None).token is None
    assert plan_bind("::1", 1, None).token is None
    for host in ("0.0.0.0", "", "::", "192.168.1.5", "myhost.example"):
        assert not is_loopback(host)
        plan = plan_bind(host, 1, None)
        assert plan.generated and len(plan.token) >= MIN_TOKEN_CHARS
    given = "x" * MIN_TOKEN_CHARS
    assert plan_bind("0.0.0.0", 1, given).token == given and not plan_bind("0.0.0.0", 1, given).generated
    assert plan_bind("127.0.0.1", 1, given).token == given   # asked for, so the gate is on
    with pytest.raises(ValueError, match="at least"):
        plan_bind("0.0.0.0", 1, "short")
    assert "token" not in plan_bind("0.0.0.0", 1, given).url and TOKEN_URL.search(plan_bind("0.0.0.0", 1, None).url)
