"""The lasso → merge dialog → rebuild flow of the Scenarios page in a real headless Chromium.

AppTest cannot draw a lasso and runs dialogs differently from a browser (DESIGN §8), so this
drives the real thing: draw a lasso on the plotly map with the mouse, open the dialog from
the "Merge N clusters" button, confirm inside it, and check the store.
"""
from __future__ import annotations

import math

import pytest
from playwright.sync_api import expect

from workbench.store import graph as store

pytestmark = pytest.mark.browser


def test_lasso_merge_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    url = dashboard(ws)
    before = len(store.clusters_table(ws.db))
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
    page.goto(url + "/scenarios")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .point", timeout=90_000)
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    # a lasso (an ellipse of 24 segments) over the middle of the map
    cx, cy = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.45
    rx, ry = box["width"] * 0.15, box["height"] * 0.18
    pts = [(cx + rx * math.cos(2 * math.pi * i / 24), cy + ry * math.sin(2 * math.pi * i / 24))
           for i in range(25)]
    page.mouse.move(*pts[0])
    page.mouse.down()
    for x, y in pts[1:]:
        page.mouse.move(x, y, steps=3)
    page.mouse.up()
    opener = page.get_by_role("button", name="Merge").first
    expect(opener).to_be_visible(timeout=60_000)
    n = int(opener.inner_text().split()[1])
    assert n >= 2
    opener.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible(timeout=30_000)
    expect(dialog.get_by_text(f"These {n} clusters")).to_be_visible()
    dialog.get_by_role("button", name=f"Merge {n} clusters").click()
    expect(page.get_by_text(f"Merged {n} clusters: done.")).to_be_visible(timeout=180_000)
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)
    page.screenshot(path=str(tmp_path / "scenarios-merged.png"), full_page=True)
    assert len(store.clusters_table(ws.db)) == before - n + 1
    hist = store.edit_history(ws.db)
    assert hist.iloc[0]["kind"] == "merge" and hist.iloc[0]["author"] == "browser-test"
