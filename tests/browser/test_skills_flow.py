"""The main curation flow in a real headless Chromium: open, filter, reject (staged, shown
next to the buttons), save (the picker's label follows), and what a rejected skill's
Scenarios tab says."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import assert_text_not_cut, load_page, open_tab, wait_idle
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
    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Skill").locator("input")
    expect(picker).to_have_value(re.compile(r" · accepted$"))
    # every status filter reads whole, chosen or not
    status = page.locator('[data-testid="stButtonGroup"]').filter(has_text="rejected")
    assert_text_not_cut(status.get_by_role("button"))
    wait_idle(page)
    page.get_by_role("button", name="Reject", exact=True).click()
    # the staged change shows next to the buttons, before the save
    expect(page.get_by_text("Staged, not saved yet: status → rejected.")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("No staged changes.")).to_have_count(0, timeout=30_000)
    wait_idle(page)
    page.get_by_role("button", name="Save 1 change(s)").click()
    expect(page.get_by_text("Saved batch")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("1 skill(s) no longer accepted: the graph keeps them until")).to_be_visible()
    expect(page.get_by_text("Nothing staged for this skill.")).to_be_visible()
    # the picker's label follows the saved status (it kept " · accepted")
    expect(picker).to_have_value(re.compile(r" · rejected$"), timeout=30_000)
    # a rejected skill's Scenarios tab says that inference covers accepted skills only
    open_tab(page, "Scenarios", page.get_by_text("inference covers accepted skills only", exact=False))
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "skills.png"), full_page=True)
    after = skill_store.skill_detail(ws.db, target["id"])
    assert after["status"] == "rejected"


def test_filter_by_the_reason_a_skill_is_not_accepted_in_chromium(demo_workspace, dashboard, chromium, tmp_path):
    """The reason (the skills export's) is a column and a filter whose chips read whole."""
    from workbench.cli_export import current_skill_rows
    ws = demo_workspace
    url = dashboard(ws)
    reasons = [r.reason for r in current_skill_rows(ws)]
    total = len(reasons)
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    load_page(page, url + "/skills", f"{total} of {total} skills")
    picked = sorted({r for r in reasons if r}, key=len, reverse=True)[:2]   # the longest names
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Reason (not accepted because)")
    for reason in picked:
        wait_idle(page)
        box.locator("input").click()
        page.get_by_role("option", name=reason, exact=True).click()
        page.keyboard.press("Escape")
    n = sum(r in picked for r in reasons)
    expect(page.get_by_text(f"{n} of {total} skills")).to_be_visible(timeout=30_000)
    assert_text_not_cut(box.locator('[data-tag] > span[title]'))
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "skills-reason.png"), full_page=True)
