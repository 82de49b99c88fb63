"""Tasks and Synthesis pages in a real headless Chromium: pick a task from the table, read
one of its files and a check's log; follow runs on the Synthesis page, live and finished."""
from __future__ import annotations

import re
import signal
import subprocess

import pytest
from playwright.sync_api import expect

from tests.browser.streamlit_page import load_page, open_tab, wait_idle
from tests.pages.synth_fixture import RUN_ID, make_synth_fixture
from workbench.store import tasks as store

pytestmark = pytest.mark.browser


def test_browse_a_task_and_follow_a_run_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    target = made[1]  # rejected at the oracle check
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
    load_page(page, url + "/tasks", "3 of 3 tasks")
    expect(page.get_by_text("1 verified of 4 sampled (25% yield)")).to_be_visible(timeout=30_000)

    # narrow the table to the one task, then pick its row with a click on the row marker
    search = page.get_by_role("textbox", name="Search")
    search.fill(target.name)
    search.press("Enter")
    expect(page.get_by_text("1 of 3 tasks")).to_be_visible(timeout=30_000)
    wait_idle(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # below the 35 px header, in the marker column
    expect(page.get_by_role("heading", name=target.name)).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Rejected at oracle")).to_be_visible()

    # a file of its bundle: the instruction, opened first
    # visible matches only: grid cells sit in a hidden accessibility table
    expect(page.get_by_text("Count the errors (marker-1)").filter(visible=True).first).to_be_visible(timeout=30_000)
    # a check's log: the failed oracle check is opened on the Checks tab
    open_tab(page, "Checks (3)", page.get_by_text("NOISY-ORACLE-LOG"))
    expect(page.get_by_text("assert '41' == '42'").first).to_be_attached()
    page.screenshot(path=str(tmp_path / "tasks.png"), full_page=True)

    load_page(page, url + "/synthesis", "keeps going when you close this tab")
    expect(page.get_by_text("Finished. 3 tasks synthesized, 1 accepted")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("paths through verification: 4 / 4")).to_be_visible()
    runs = page.locator('[data-testid="stDataFrame"]').first
    expect(runs).to_be_visible()
    # the grid draws on a canvas; its accessible table holds the cells' text
    cells = runs.locator('[role="gridcell"]')
    expect(cells.first).to_have_text(RUN_ID)
    cells = cells.all_text_contents()
    assert cells[:4] == [RUN_ID, "finished", "random-walk", "4"], cells[:8]
    follow = page.locator('[data-testid="stSelectbox"]').filter(has_text="Follow run").locator("input")
    expect(follow).to_have_value(re.compile(f"^{RUN_ID} · random-walk · 4 paths · "))
    page.screenshot(path=str(tmp_path / "synthesis.png"), full_page=True)


def test_the_live_view_follows_a_running_batch_and_cancels_it(workspace, dashboard, chromium, tmp_path):
    """The fragment refreshes progress and log every 2 s without a reload; Cancel signals the
    batch's process group; once the process is gone the whole page turns to 'interrupted'."""
    ws = workspace
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)  # stands in for `workbench synth`
    try:
        store.create_run(ws.db, "synth-live02", "inverse-frequency", 4, 0, "offline", 2, proc.pid)
        store.attach_paths(ws.db, "synth-live02", "b", ["p1", "p2", "p3", "p4"])
        log = ws.runs_dir / "synth-live02" / "synth.log"
        log.parent.mkdir(parents=True)
        log.write_text("sampling 4 paths\n")
        url = dashboard(ws)
        page = chromium.new_page(viewport={"width": 1400, "height": 1400})
        load_page(page, url + "/synthesis", f"Running (process {proc.pid})")
        expect(page.get_by_text("paths through synthesis: 0 / 4")).to_be_visible()
        # the batch moves on: the view catches up by itself
        store.set_path_stage(ws.db, "synth-live02", "p1", "synthesized", "t1")
        with log.open("a") as fh:
            fh.write("SYNTHESIZED-P1\n")
        expect(page.get_by_text("SYNTHESIZED-P1")).to_be_visible(timeout=20_000)
        expect(page.get_by_text("paths through synthesis: 1 / 4")).to_be_visible(timeout=20_000)
        page.get_by_role("button", name="Cancel run").click()
        expect(page.get_by_text("Cancel requested")).to_be_visible(timeout=20_000)
        assert proc.wait(timeout=20) == -signal.SIGTERM
        expect(page.get_by_text("Interrupted: the batch process")).to_be_visible(timeout=30_000)
        resume = f"workbench synth --workspace {ws.root} --resume --run-id synth-live02"
        expect(page.get_by_text(resume)).to_be_visible()
        cells = page.locator('[data-testid="stDataFrame"]').first.locator('[role="gridcell"]')
        expect(cells.nth(1)).to_have_text("interrupted", timeout=20_000)  # the runs table refreshed too
        page.screenshot(path=str(tmp_path / "synthesis-live.png"), full_page=True)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
