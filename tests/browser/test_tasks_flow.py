"""Tasks and Synthesis pages in a real headless Chromium: follow runs on the Synthesis page,
live and finished; on the Tasks page open every tab of a verified task, read one of its files
and a check's log, with no exception shown, and leave a cancelled run's task out; open an LLM
task's repair history and read its diffs."""
from __future__ import annotations

import re
import signal
import subprocess

import pytest
from playwright.sync_api import Page, expect

from tests.browser.streamlit_page import assert_text_not_cut, load_page, open_tab, wait_idle
from tests.pages.repairs_fixture import PULL_DENIED, add_llm_run
from tests.pages.synth_fixture import CANCELLED_RUN_ID, RUN_ID, _checks, add_cancelled_run, make_synth_fixture
from tests.helpers import judged
from workbench.store import tasks as store

pytestmark = pytest.mark.browser


def _pick_only_row(page: Page, name: str, total: int) -> None:
    """Narrow the table to the one task, then pick its row with a click on the row marker."""
    search = page.get_by_role("textbox", name="Search")
    search.fill(name)
    search.press("Enter")
    expect(page.get_by_text(f"1 of {total} tasks")).to_be_visible(timeout=30_000)
    wait_idle(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # below the 35 px header, in the marker column
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=30_000)


def _no_exception(page: Page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_browse_a_task_and_follow_a_run_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    target = made[1]  # rejected at the oracle check
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
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

    # a later run is cancelled before it verifies its task: that task is hidden, and not opened
    cancelled = add_cancelled_run(ws, made)
    load_page(page, url + "/tasks", "3 of 4 tasks")
    expect(page.get_by_text("1 verified of 5 sampled (20% yield)")).to_be_visible(timeout=30_000)  # both runs
    expect(page.get_by_text("1 unverified task(s)")).to_be_visible()
    verdict = page.locator('[data-testid="stButtonGroup"]').filter(has_text="cancelled")
    assert_text_not_cut(verdict.get_by_role("button"))  # every verdict reads whole in its narrow column
    expect(page.get_by_role("heading", name=cancelled.name)).to_have_count(0)
    expect(page.get_by_role("tab", name="Checks (0)")).to_have_count(0)

    # every tab of the accepted task, whose checks are the real verifier's (the rubric's included)
    accepted = made[0]
    _pick_only_row(page, accepted.name, 4)
    expect(page.get_by_text("Accepted: every check passed.")).to_be_visible()
    open_tab(page, f"Files ({len(accepted.files)})", page.get_by_text("Count the errors (marker-0)")
             .filter(visible=True).first)
    _no_exception(page)
    checks = page.get_by_role("tabpanel").filter(visible=True)
    open_tab(page, "Checks (5)", checks.get_by_text("rubric ·", exact=False).first)
    for title in ("build ·", "no-op fails ·", "oracle passes ·", "decontamination ·"):
        expect(checks.get_by_text(title, exact=False).first).to_be_visible()
    checks.get_by_text("rubric ·", exact=False).first.click()  # passed checks start folded
    expect(checks.get_by_text("2 test function(s) found in tests/")).to_be_visible(timeout=15_000)
    _no_exception(page)
    open_tab(page, "Path", page.get_by_text("Recipes: log-analysis, text-file · difficulty medium"))
    _no_exception(page)

    _pick_only_row(page, target.name, 4)
    expect(page.get_by_text("Rejected at oracle")).to_be_visible()

    # a file of its bundle: the instruction, opened first
    # visible matches only: grid cells sit in a hidden accessibility table
    open_tab(page, f"Files ({len(target.files)})",
             page.get_by_text("Count the errors (marker-1)").filter(visible=True).first)
    # a check's log: the failed oracle check is opened on the Checks tab
    open_tab(page, "Checks (3)", page.get_by_text("NOISY-ORACLE-LOG"))
    expect(page.get_by_text("assert '41' == '42'").first).to_be_attached()
    _no_exception(page)
    page.screenshot(path=str(tmp_path / "tasks.png"), full_page=True)

    # the cancelled task, shown on request; a resumed run then verifies it while it is open:
    # the next render's picker says so (the browser kept the label it had)
    wait_idle(page)
    page.locator('[data-testid="stButtonGroup"]').get_by_role("button", name="cancelled").click()
    _pick_only_row(page, cancelled.name, 4)
    expect(page.get_by_text("was cancelled before this task was verified")).to_be_visible()
    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Task").locator("input")
    expect(picker).to_have_value(re.compile(r" · cancelled · "))
    checks = _checks("accepted", cancelled.files)
    store.save_verification(ws.db, cancelled.task_id, checks, "wb-task-0123abcd",
                            CANCELLED_RUN_ID, cancelled.path_id, **judged(checks))
    wait_idle(page)
    page.locator('[data-testid="stButtonGroup"]').get_by_role("button", name="pending").click()  # any rerun
    expect(page.get_by_text("Accepted: every check passed.")).to_be_visible(timeout=30_000)
    expect(picker).to_have_value(re.compile(r" · accepted · "), timeout=30_000)
    _no_exception(page)


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


def test_open_an_llm_tasks_repairs_and_read_its_diffs_in_chromium(graph_workspace, dashboard, chromium, tmp_path):
    """Pick an LLM task repaired twice: the Repairs tab lists both attempts, the last one open
    with its diff drawn as a diff; the first opens on a click; the cost per stage is there."""
    ws = graph_workspace
    llm = add_llm_run(ws, make_synth_fixture(ws))
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 1400})
    load_page(page, url + "/tasks", "6 of 6 tasks")
    expect(page.get_by_text("Accepted after N repairs: 2 accepted, 1 of them with none")).to_be_visible(timeout=30_000)
    _pick_only_row(page, llm.repaired.name, 6)
    panel = page.get_by_role("tabpanel").filter(visible=True)
    open_tab(page, "Repairs (2)", panel.get_by_text("2 repairs (1 fixed what failed); accepted after them"))
    last = panel.locator('[data-testid="stExpander"]').filter(has_text="#2 · tests · after oracle · fixed")
    expect(last.locator("code.language-diff")).to_contain_text("+    assert Path('/app/out.txt').read_text()"
                                                             ".strip() == '20'")
    first = panel.locator('[data-testid="stExpander"]').filter(has_text="#1 · environment · after build")
    expect(first.locator("code.language-diff")).to_be_hidden()  # folded: only the last attempt starts open
    first.get_by_text("#1 · environment · after build").click()
    expect(first.locator("code.language-diff")).to_be_visible(timeout=15_000)
    expect(first.locator("code.language-diff")).to_contain_text("+FROM workbench-base:latest")
    expect(first.get_by_text(PULL_DENIED)).to_be_visible()
    expect(panel.get_by_text("LLM cost per stage")).to_be_visible()
    expect(panel.get_by_text("6 LLM call(s)", exact=False)).to_be_visible()
    _no_exception(page)
    page.screenshot(path=str(tmp_path / "tasks-repairs.png"), full_page=True)
