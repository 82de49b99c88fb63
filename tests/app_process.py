"""`workbench app` started as a user would, for the tests and the benchmark that time it:
free ports on 127.0.0.1 only, and a process of its own session so that whatever it leaves
behind can be found and is cleaned up."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    """The server is up and serves the page's HTML."""
    try:
        return all(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).status == 200
                   for path in ("/_stcore/health", "/"))
    except OSError:
        return False


class App:
    def __init__(self, log_dir: Path, *args: str, env: dict | None = None):
        self.port = free_port()
        self.log = Path(log_dir) / f"app-{self.port}.log"
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", *args, "--port", str(self.port)],
                                     stdout=open(self.log, "w"), stderr=subprocess.STDOUT, start_new_session=True,
                                     env={**os.environ, **(env or {})})

    def wait_answering(self, limit_s: float = 90) -> float:
        """Seconds from the start until the first answer."""
        while time.monotonic() - self.started < limit_s:
            if answers(self.port):
                return time.monotonic() - self.started
            assert self.proc.poll() is None, "workbench app exited: " + self.log.read_text()
            time.sleep(0.1)
        raise AssertionError(f"no answer on port {self.port} after {limit_s} s: " + self.log.read_text())

    def cleanup(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
