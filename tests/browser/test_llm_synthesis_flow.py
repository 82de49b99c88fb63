"""The LLM synthesis as a user drives it, in a real headless Chromium: launch an LLM batch from
the Synthesis page against the scripted replay server (started here, in-process; the batch is a
real `workbench synth --provider llm` process with real Docker), watch it finish with every task
accepted after one repair, then open a repaired task's Repairs tab on the Tasks page and read
the attempt, its evidence (as plain text) and its diff, and the task's LLM cost per stage."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
from pipeline.synth.llm.scripted_faults import REPLAY_MODEL, scripted_replies, write_demo_price
from tests.browser.streamlit_page import load_page, open_tab, wait_idle
from workbench.llm.replay_server import ReplayServer, Script
from workbench.store import tasks as store

pytestmark = [pytest.mark.browser, pytest.mark.docker]

# the first two paths of the batch the run samples: its Dockerfile's RUN fails (the build log
# Docker gives has colour codes in it), its solve.sh crashes; each is fixed by one repair
FAULTS = ("broken_dockerfile", "crashing_solution")
ANSI = re.compile(r"\x1b\[|\[0m|\[91m")


def _spin(page, name: str, value: str) -> None:
    box = page.get_by_role("spinbutton", name=name)
    box.fill(value)
    box.press("Tab")


def test_launch_an_llm_batch_from_the_browser_and_read_its_repairs(graph_workspace, dashboard, chromium,
                                                                    monkeypatch, tmp_path):
    ws = graph_workspace
    scripted, _ = scripted_replies(ws, FAULTS)
    write_demo_price(ws.root)            # costs are not zero: the page shows dollars per stage
    with ReplayServer(Script([scripted.rule()])) as srv:
        # the dashboard, and the batch process it launches, find the endpoint in their environment
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("WORKBENCH_LLM_MODEL", REPLAY_MODEL)
        monkeypatch.setenv(SOLVE_TIMEOUT_ENV, "60")
        url = dashboard(ws)
        page = chromium.new_page(viewport={"width": 1500, "height": 2400})
        load_page(page, url + "/synthesis", "keeps going when you close this tab")
        wait_idle(page)
        page.get_by_test_id("stRadioGroup").get_by_text("llm", exact=True).click()
        _spin(page, "Paths", "2")
        _spin(page, "Seed", "3")
        _spin(page, "LLM budget (USD)", "1.00")
        wait_idle(page)
        page.get_by_role("button", name="Launch").click()
        expect(page.get_by_text(re.compile(r"Started run synth-\w+ in the background"))).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Running (process")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Finished. 2 accepted, 0 rejected, 0 failed")).to_be_visible(timeout=420_000)
        # the rerun that follows the run's end redraws the progress bars; once it is over they stand once
        wait_idle(page)
        expect(page.get_by_text("tasks accepted: 2 / 2")).to_have_count(1)
        figure = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="Accepted after N repairs")
        expect(figure.get_by_text("Accepted after N repairs: 2 accepted, 0 of them with none")).to_be_visible()
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        page.screenshot(path=str(tmp_path / "synthesis-llm.png"), full_page=True)
        runs = store.runs(ws.db)
        assert runs["provider"].tolist() == ["llm"]
        # the page launched the command the user asked for
        log = (ws.runs_dir / runs["run_id"].iloc[0] / "synth.log").read_text()
        assert "--provider llm" in log.splitlines()[0] and "--budget-usd 1.0" in log.splitlines()[0], log[:300]
        assert srv.stats.chat_requests > 0

    # the task whose Dockerfile was repaired, on the Tasks page
    tasks = store.tasks_frame(ws.db)
    path_ids = sorted(tasks["path_id"], key=lambda p: int(p.rsplit("-", 1)[1]))
    repaired = tasks.set_index("path_id").loc[path_ids[0]]
    assert repaired["verdict"] == "accepted" and repaired["repairs"] == 1
    load_page(page, url + "/tasks", "Yield")
    wait_idle(page)
    search = page.get_by_role("textbox", name="Search")
    search.fill(repaired["name"])
    search.press("Enter")
    expect(page.get_by_text("1 of 2 tasks")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name=repaired["name"])).to_be_visible(timeout=30_000)
    panel = page.get_by_role("tabpanel").filter(visible=True)
    open_tab(page, "Repairs (1)", panel.get_by_text("1 repair (1 fixed what failed); accepted after it"))
    attempt = panel.locator('[data-testid="stExpander"]').filter(has_text="#1 · environment · after build · fixed")
    expect(attempt.get_by_text("build failed:", exact=False).first).to_be_visible()
    evidence = attempt.locator("code").first
    expect(evidence).to_contain_text("returned a non-zero code")
    assert not ANSI.search(evidence.inner_text()), evidence.inner_text()[:2000]
    expect(attempt.locator("code.language-diff")).to_contain_text("environment")
    expect(panel.get_by_text("LLM cost per stage")).to_be_visible()
    expect(panel.get_by_text(re.compile(r"\d+ LLM call\(s\), [\d,]+ tokens, \$0\.\d{4} in all"))).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "tasks-llm-repairs.png"), full_page=True)
