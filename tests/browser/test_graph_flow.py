"""The Scenarios page's edit flow in a real headless Chromium: lasso → merge dialog → split
one scenario off the merged cluster → rename → undo; then the Graph page's health card.

AppTest cannot draw a lasso and runs dialogs differently from a browser (DESIGN §8), so this
drives the real thing with the mouse and checks the store after every step: the split must
leave the rest of the merge merged, and the rename must land on the cluster the page shows.
"""
from __future__ import annotations

import json
import math
import re

import pytest
from playwright.sync_api import expect

from analysis import graph_health as gh
from analysis import scenario_map as sm
from pipeline.graph.assemble import assemble
from tests.browser.streamlit_page import assert_text_not_cut, load_page, open_tab, wait_idle
from workbench.store import graph as store

pytestmark = pytest.mark.browser


def _lasso(page, scale: float = 1.0) -> None:
    """A lasso (an ellipse of 24 segments) over the middle of the map, `scale` times the base size."""
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    cx, cy = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.45
    rx, ry = box["width"] * 0.15 * scale, box["height"] * 0.18 * scale
    pts = [(cx + rx * math.cos(2 * math.pi * i / 24), cy + ry * math.sin(2 * math.pi * i / 24)) for i in range(25)]
    page.mouse.move(*pts[0])
    page.mouse.down()
    for x, y in pts[1:]:
        page.mouse.move(x, y, steps=3)
    page.mouse.up()


def _overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def _clusters_of(ws, scenario_ids: list[str]) -> set[int]:
    cluster = store.members_table(ws.db).set_index("scenario_id")["cluster_id"]
    return {int(c) for c in cluster.loc[scenario_ids]}


def _picked(page) -> str:
    """The cluster picker's shown label ("size · canonical text")."""
    return page.get_by_role("combobox", name="Cluster (size · canonical text)").input_value()


def test_merge_split_rename_undo_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    url = dashboard(ws)
    before = len(store.clusters_table(ws.db))
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
    load_page(page, url + "/scenarios", "Lasso or box-select points")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .point", timeout=90_000)

    # plotly's toolbar (shown on hover) leaves the legend's top entry uncovered
    page.locator(".js-plotly-plot .nsewdrag").first.hover()
    bar = page.locator(".js-plotly-plot .modebar").first
    expect(bar).to_be_visible(timeout=10_000)
    first_entry = page.locator(".js-plotly-plot .legend .traces").first
    assert not _overlap(bar.bounding_box(), first_entry.bounding_box())

    # merge: lasso, open the dialog, confirm (twice where the dialog asks again)
    # the map's layout varies a little by machine: a lasso that caught one cluster only is drawn larger
    opener = page.get_by_role("button", name="Merge").first
    one_cluster = page.get_by_text("The selection lies in one cluster")
    for scale in (1.0, 1.6, 2.2):
        _lasso(page, scale)
        wait_idle(page)
        expect(opener.or_(one_cluster).first).to_be_visible(timeout=60_000)
        if opener.is_visible():
            break
    expect(opener).to_be_visible(timeout=60_000)
    n = int(opener.inner_text().split()[1])
    assert n >= 2
    wait_idle(page)
    opener.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible(timeout=30_000)
    scope = dialog.get_by_text(f"This merge joins {n} dedup clusters")
    expect(scope).to_be_visible()
    # "… lie in topic 2" / "… lie in topics 0 and 3" / "… lie in 7 topics": more than one topic when plural
    many_topics = re.search(r"\btopics\b", scope.inner_text()) is not None
    confirm = dialog.get_by_role("button", name=f"Merge {n} clusters")
    expect(confirm).to_be_visible(timeout=30_000)
    if n > sm.MERGE_ASK_AGAIN_CLUSTERS or many_topics:  # the dialog asks again
        expect(confirm).to_be_disabled()
        dialog.get_by_text(f"Yes, merge all {n} clusters into one").click()
        expect(confirm).to_be_enabled(timeout=30_000)
    confirm.click()
    expect(page.get_by_text(f"Merged {n} clusters: done.")).to_be_visible(timeout=180_000)
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)
    assert len(store.clusters_table(ws.db)) == before - n + 1
    merged = json.loads(store.edit_history(ws.db).iloc[0]["payload"])["scenario_ids"]
    assert len(_clusters_of(ws, merged)) == 1
    wait_idle(page)
    assert _picked(page).startswith(f"{len(merged)} · ")  # the page shows the merged cluster

    # split the first listed scenario off it
    open_tab(page, "Split", page.get_by_text("Scenarios to move into a cluster of their own"))
    page.get_by_test_id("stMultiSelect").first.click()
    page.get_by_role("option").filter(has_text=" · ").first.click()  # a scenario, not "Select all"
    page.keyboard.press("Escape")
    split = page.get_by_role("button", name="Split off 1 scenario(s)")
    expect(split).to_be_enabled(timeout=30_000)
    wait_idle(page)
    split.click()
    expect(page.get_by_text("Split 1 scenario(s) off: done.")).to_be_visible(timeout=180_000)
    moved = json.loads(store.edit_history(ws.db).iloc[0]["payload"])["groups"][1]
    rest = [s for s in merged if s not in set(moved)]
    assert len(moved) == 1 and len(rest) == len(merged) - 1
    assert len(store.clusters_table(ws.db)) == before - n + 2  # one more cluster: the merge is not undone
    assert len(_clusters_of(ws, rest)) == 1 and _clusters_of(ws, moved) != _clusters_of(ws, rest)
    wait_idle(page)
    assert _picked(page).startswith(f"{len(rest)} · ")  # still the merged cluster, less the one moved

    # rename: it lands on the cluster the page shows, the rest of the merge
    open_tab(page, "Rename", page.get_by_role("textbox", name="Canonical text"))
    page.get_by_role("textbox", name="Canonical text").fill("Merged by the browser test")
    page.get_by_role("button", name="Rename", exact=True).click()
    expect(page.get_by_text("Renamed the cluster: done.")).to_be_visible(timeout=180_000)
    clusters = store.clusters_table(ws.db).set_index("cluster_id")
    (rest_cluster,) = _clusters_of(ws, rest)
    assert clusters.loc[rest_cluster, "canonical"] == "Merged by the browser test"
    assert int(clusters.loc[rest_cluster, "size"]) == len(rest)
    expect(page.get_by_text("Undo would revert: rename — renamed “")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "scenarios-renamed.png"), full_page=True)

    # undo the rename: the text goes back, the merge and the split stay
    wait_idle(page)
    page.get_by_role("button", name="Undo last edit").click()
    expect(page.get_by_text("Undid “renamed")).to_be_visible(timeout=180_000)
    clusters = store.clusters_table(ws.db)
    assert "Merged by the browser test" not in set(clusters["canonical"])
    assert len(clusters) == before - n + 2 and len(_clusters_of(ws, rest)) == 1
    hist = store.edit_history(ws.db)
    assert hist["kind"].tolist()[:3] == ["rename", "split", "merge"] and hist["undone_at"].notna().tolist()[:3] == [
        True, False, False]
    assert set(hist["author"]) == {"browser-test"}


def _rgb(locator) -> tuple[int, int, int]:
    return tuple(int(x) for x in re.findall(r"\d+", locator.evaluate("e => getComputedStyle(e).color"))[:3])


def test_graph_page_health_card_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    """Each figure and its target, green when met and red when missed, whole (not cut by its
    column), and the advice below when a target is missed."""
    ws = graph_workspace
    url = dashboard(ws)
    h = gh.measure(assemble(ws.db))
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
    load_page(page, url + "/graph", "fresh inverse-frequency paths")
    wait_idle(page)
    metrics = page.get_by_test_id("stMetric")
    for item in gh.card(h):
        shown = metrics.filter(has=page.get_by_test_id("stMetricLabel").get_by_text(item.label, exact=True))
        expect(shown.get_by_test_id("stMetricValue")).to_have_text(item.value)
        if item.ok is None:
            continue
        mark = page.get_by_text(f"{'✓' if item.ok else '✗'} target {item.target}", exact=True)
        expect(mark).to_be_visible()
        r, g, _ = _rgb(mark)
        assert (g > r) if item.ok else (r > g), (item, (r, g))
    labels = page.get_by_test_id("stMetricLabel").filter(has_text=re.compile(
        "|".join(re.escape(i.label) for i in gh.card(h))))
    assert_text_not_cut(labels)
    if gh.advice(h):
        expect(page.get_by_text(gh.summary(h))).to_be_visible()
        expect(page.get_by_role("alert").filter(has_text=gh.summary(h))).to_contain_text(
            gh.advice(h)[0].split("`")[0])
    page.screenshot(path=str(tmp_path / "graph-health.png"), full_page=True)
