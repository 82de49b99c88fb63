"""The Evolution page in a real headless Chromium over the planted evolve run
(tests/pages/evolution_fixture.py): the lineage tree drawn with its marks and rates, another task's
tree, the before → after chart with SETA's expectation, the productive-zone bars, and a drill into
one variant from the variants tab — with no exception shown."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import load_page, open_tab, wait_idle
from tests.pages.evolution_fixture import make_evolution_fixture

pytestmark = pytest.mark.browser


def _pick(page, label: str, option: str) -> None:
    wait_idle(page)
    page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True)).locator("input") \
        .click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def test_read_the_evolution_of_a_task_in_chromium(workspace, dashboard, chromium, tmp_path):
    make_evolution_fixture(workspace)
    url = dashboard(workspace)
    page = chromium.new_page(viewport={"width": 1500, "height": 1600})
    load_page(page, url + "/evolution", "SETA-Evol evolves each task by its pass rate")
    wait_idle(page)
    tree = page.locator('[data-testid="stPlotlyChart"]').first
    expect(tree.locator("text", has_text="d1 · r=0.50")).to_be_visible(timeout=30_000)
    expect(tree.locator("text", has_text="b1 · r=0.25")).to_be_visible()
    expect(page.get_by_text("simulated, not a model").first).to_be_visible()
    page.screenshot(path=str(tmp_path / "evolution-tree.png"), full_page=True)
    _pick(page, "Task", "evo02 · skillgraph/evo02 · 2 tried")
    expect(tree.locator("text", has_text="b1 · r=—")).to_be_visible(timeout=30_000)   # the rejected variant

    open_tab(page, "Before → after", page.get_by_text("SETA-Evol's expectation: harder lowers the pass rate"))
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator("text", has_text="SETA: lowers r"))
    expect(chart.locator("text", has_text="0.88 → 0.38 (n = 2; SETA: lowers r)")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "evolution-before-after.png"), full_page=True)
    open_tab(page, "Productive zone", page.get_by_text("The productive zone is 0 < r < 1"))
    expect(page.locator('[data-testid="stPlotlyChart"]').locator("text", has_text="2/5").first).to_be_visible(
        timeout=30_000)

    open_tab(page, "Variants", page.get_by_text("Drill into a variant"))
    _pick(page, "Drill into a variant", "evo00__d1__b1")
    expect(page.get_by_text("context_switch of evo00__d1 in round 2 · accepted · r 0.50 → 0.25")).to_be_visible(
        timeout=30_000)
    expect(page.get_by_text("Change: step 2 served by sed-replace instead of jq-filter")).to_be_visible()
    drill = page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator("text", has_text="b1 · r=0.25"))
    expect(drill.last).to_be_visible(timeout=30_000)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "evolution-drill.png"), full_page=True)
