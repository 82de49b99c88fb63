"""The main curation flow in a real headless Chromium: open, filter, reject, save."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from workbench.store import skills as skill_store

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def app_server(demo_workspace, tmp_path):
    port = _free_port()
    log = open(tmp_path / "app.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--workspace", str(demo_workspace.root),
                             "app", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "WORKBENCH_AUTHOR": "browser-test"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        raise RuntimeError("dashboard did not come up: " + Path(tmp_path / "app.log").read_text())
    yield url, demo_workspace
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_filter_and_save_a_rejection_in_chromium(app_server, tmp_path):
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: scripts/setup-system.sh installs it"
    url, ws = app_server
    table = skill_store.skills_table(ws.db)
    target = table[(table["status"] == "accepted") & table["name"].str.contains("bisect")].iloc[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS,
                                    chromium_sandbox=False, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url + "/skills")
        expect(page.get_by_text(f"{len(table)} of {len(table)} skills")).to_be_visible(timeout=60_000)
        search = page.get_by_role("textbox", name="Search")
        search.fill(target["name"])
        search.press("Enter")
        expect(page.get_by_text(f"1 of {len(table)} skills")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(f"{target['name']}", exact=False).first).to_be_visible()
        page.get_by_role("button", name="Reject", exact=True).click()
        expect(page.get_by_text("No staged changes.")).to_have_count(0, timeout=30_000)
        page.get_by_role("button", name="Save 1 change(s)").click()
        expect(page.get_by_text("Saved batch")).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "skills.png"), full_page=True)
        browser.close()
    after = skill_store.skill_detail(ws.db, target["id"])
    assert after["status"] == "rejected"
