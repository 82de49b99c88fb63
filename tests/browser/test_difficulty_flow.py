"""The Difficulty page in a real headless Chromium over the rollouts fixture: pick agents (their long
labels read whole in their chips), open every tab, see each figure drawn and the export, with no
exception shown."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from pipeline.agents.protocol import AGENT_LABELS
from tests.browser.streamlit_page import assert_text_not_cut, load_page, open_tab, wait_idle
from tests.pages.rollouts_fixture import make_rollouts_fixture

pytestmark = pytest.mark.browser


def test_read_difficulty_by_agent_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    make_rollouts_fixture(ws)
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 1600})
    load_page(page, url + "/difficulty", "nop, oracle and ablation are scripted probes")
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Agent")
    for agent in ("ablation", "terminus-2"):
        wait_idle(page)
        box.locator("input").click()
        page.get_by_role("option", name=AGENT_LABELS[agent], exact=True).click()
        page.keyboard.press("Escape")
    wait_idle(page)
    assert_text_not_cut(box.locator('[data-tag] > span[title]'))   # "… a verifier probe, not a model" whole
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "difficulty-bands.png"), full_page=True)
    open_tab(page, "Distributions", page.get_by_text("Break down by"))
    page.get_by_test_id("stRadioGroup").get_by_text("recipe family", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("A task counts once under each recipe family")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "difficulty-families.png"), full_page=True)
    open_tab(page, "Checks vs tasks", page.get_by_text("FACET's teacher rollouts"))
    page.screenshot(path=str(tmp_path / "difficulty-checks.png"), full_page=True)
    open_tab(page, "Task table", page.get_by_text("Roll them out again with"))
    expect(page.get_by_text("workbench rollout --tasks ")).to_be_visible()
    for label in ("CSV", "JSON", "Task ids (one a line)"):
        expect(page.get_by_test_id("stDownloadButton").filter(has_text=label)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "difficulty.png"), full_page=True)
