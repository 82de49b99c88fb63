"""`workbench app` in Chromium: the access gate, and the demo built behind a dashboard that
answers at once and redraws itself as stages finish."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import load_page, wait_idle
from tests.workbench.test_app_server import apps  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser
TOKEN = "browser-gate-token-0123456789"


def test_the_gate_keeps_a_browser_out_until_it_gives_the_token(apps, chromium, tmp_path):  # noqa: F811
    app = apps("--workspace", str(tmp_path / "ws"), "app", "--auth-token", TOKEN)
    app.wait_answering()
    url = f"http://127.0.0.1:{app.port}"
    page = chromium.new_page()
    load_page(page, url + "/settings", "Access token")
    expect(page.get_by_text("Pipeline")).to_have_count(0)
    page.get_by_label(re.compile("Access token")).fill("not-" + TOKEN)
    page.get_by_role("button", name="Enter").click()
    expect(page.get_by_text("Wrong access token")).to_be_visible(timeout=30_000)
    load_page(page, f"{url}/?token={TOKEN}", "Pipeline")
    wait_idle(page)
    assert "token" not in page.url


def test_the_demo_overview_follows_the_build_without_a_reload(apps, chromium, tmp_path):  # noqa: F811
    # no Docker engine answers: the build ends after the graph and samples, and says so
    app = apps("--workspace", str(tmp_path / "ws"), "app", "--demo",
               env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    app.wait_answering(limit_s=60)
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    load_page(page, f"http://127.0.0.1:{app.port}", "being built")
    expect(page.get_by_text(re.compile("The demo workspace was built in"))).to_be_visible(timeout=300_000)
    expect(page.get_by_text(re.compile("No Docker engine or base image")).first).to_be_visible(timeout=30_000)
    skills = page.get_by_test_id("stMetricValue").first
    expect(skills).not_to_have_text("0", timeout=30_000)
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
