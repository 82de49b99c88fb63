"""Browser tests: the dashboard served from a workspace, and Debian's headless Chromium."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dashboard(tmp_path):
    """``dashboard(ws)`` serves ``workbench app`` on ``ws`` (author "browser-test") on a free
    port and returns its URL; the server is stopped after the test."""
    procs: list[subprocess.Popen] = []

    def start(ws) -> str:
        port = _free_port()
        log = open(tmp_path / "app.log", "w")
        # start_new_session: `workbench app` runs Streamlit as a child; stop the whole group after
        proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--workspace", str(ws.root),
                                 "app", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "WORKBENCH_AUTHOR": "browser-test"}, start_new_session=True)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            os.killpg(proc.pid, 9)
            raise RuntimeError("dashboard did not come up: " + Path(tmp_path / "app.log").read_text())
        return url

    yield start
    for proc in procs:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)


@pytest.fixture
def chromium():
    """A headless Chromium (Debian's, not a downloaded one), closed after the test."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: scripts/setup-system.sh installs it"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, chromium_sandbox=False, headless=True)
        yield browser
        browser.close()
