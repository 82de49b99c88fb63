"""The main curation flow in a real headless Chromium: open, filter, reject, save."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import load_page, wait_idle
from workbench.store import skills as skill_store

pytestmark = pytest.mark.browser


def test_filter_and_save_a_rejection_in_chromium(demo_workspace, dashboard, chromium, tmp_path):
    ws = demo_workspace
    url = dashboard(ws)
    table = skill_store.skills_table(ws.db)
    target = table[(table["status"] == "accepted") & table["name"].str.contains("bisect")].iloc[0]
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    load_page(page, url + "/skills", f"{len(table)} of {len(table)} skills")
    search = page.get_by_role("textbox", name="Search")
    search.fill(target["name"])
    search.press("Enter")
    expect(page.get_by_text(f"1 of {len(table)} skills")).to_be_visible(timeout=30_000)
    # The detail pane's heading, not a grid cell: glide-data-grid keeps its cells in a
    # hidden accessibility table, so which text match comes first is not stable.
    expect(page.get_by_role("heading", name=target["name"])).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.get_by_role("button", name="Reject", exact=True).click()
    expect(page.get_by_text("No staged changes.")).to_have_count(0, timeout=30_000)
    page.get_by_role("button", name="Save 1 change(s)").click()
    expect(page.get_by_text("Saved batch")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "skills.png"), full_page=True)
    after = skill_store.skill_detail(ws.db, target["id"])
    assert after["status"] == "rejected"
