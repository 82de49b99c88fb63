"""Every page a user opens after issue 15, walked in a real headless Chromium over the planted evolve
run (tests/pages/evolution_fixture.py: tasks, noisy-oracle rollouts, lineage): each page loads, each
of its tabs opens, and no exception is shown anywhere; the noisy-oracle reads as simulated."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import wait_idle
from tests.pages.evolution_fixture import make_evolution_fixture

pytestmark = pytest.mark.browser

PAGES = ("", "tasks", "synthesis", "rollouts", "difficulty", "failures", "evolution", "llm_costs", "settings")


def _no_exception(page, where: str) -> None:
    shown = page.locator('[data-testid="stException"]')
    assert shown.count() == 0, f"{where}: {shown.first.inner_text()[:500]}"


def test_walk_every_page_and_tab(workspace, dashboard, chromium, tmp_path):
    make_evolution_fixture(workspace)
    url = dashboard(workspace)
    for name in PAGES:
        for old in chromium.contexts:   # a fresh tab per page (see test_rollout_pages_walk._open)
            old.close()
        page = chromium.new_page(viewport={"width": 1500, "height": 2000})
        page.goto(f"{url}/{name}")
        expect(page.locator('[data-testid="stApp"]')).to_be_visible(timeout=90_000)
        page.wait_for_load_state("networkidle")
        wait_idle(page, 90_000)
        _no_exception(page, name or "overview")
        for tab in page.get_by_role("tab").all_inner_texts():
            page.get_by_role("tab", name=tab).first.click()
            wait_idle(page)
            _no_exception(page, f"{name} / {tab}")
        if name == "evolution":
            expect(page.get_by_text("simulated, not a model").first).to_be_visible()
        page.screenshot(path=str(tmp_path / f"{name or 'overview'}.png"), full_page=True)
