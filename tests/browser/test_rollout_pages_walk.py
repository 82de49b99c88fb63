"""The rollout pages walked as a user does, in a real headless Chromium over the rollouts fixture
(real store rows and rollout folders): on Failures, drill into the rollouts of each agent (nop,
oracle, ablation, terminus-2) and open every tab; a task the trajectory judge withdrew reads
withdrawn on Tasks, leaves the Rollouts page's accepted set, and its undo brings it back. No
exception anywhere."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from pipeline.agents.protocol import AGENT_LABELS
from tests.browser.streamlit_page import load_page, open_tab, wait_idle
from tests.pages.rollouts_fixture import UNSOLVED_TASK, make_rollouts_fixture
from workbench.store import tasks as task_store
from workbench.store import trajectory_judgements as judgements

pytestmark = pytest.mark.browser

REASON = "test_count checks /app/count.txt, a file the instruction never names"


def _open(chromium, url: str, ready: str):
    """A fresh tab per page: going to another URL in the same tab aborts the old page's script
    chunks still in flight (net::ERR_ABORTED), which load_page takes for a failed load."""
    for old in chromium.contexts:     # new_page made each its own context
        old.close()
    page = chromium.new_page(viewport={"width": 1500, "height": 2000})
    load_page(page, url, ready)
    wait_idle(page)
    return page


def _no_exception(page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_drill_into_the_failures_of_each_agent(graph_workspace, dashboard, chromium, tmp_path):
    ws = graph_workspace
    fx = make_rollouts_fixture(ws)
    url = dashboard(ws)
    for agent in ("nop", "oracle", "ablation", "terminus-2"):
        page = _open(chromium, url + "/failures", "Why rollouts fail")
        group = page.locator('[data-testid="stButtonGroup"]').filter(has_text=AGENT_LABELS["oracle"])
        group.get_by_role("button", name=AGENT_LABELS[agent], exact=True).click()
        wait_idle(page)
        picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Rollout").locator("input")
        # the picker offers this agent's rollouts only: a failed one first where there is one
        expect(picker).to_have_value(re.compile(rf" · {re.escape(agent)} #\d · "), timeout=30_000)
        rollout_id = picker.input_value().rsplit(" · ", 1)[1]
        assert rollout_id in {r["rollout_id"] for r in fx.of(agent=agent)}, rollout_id
        failed = [r for r in fx.of(agent=agent) if not r["passed"]]
        if failed:
            assert rollout_id in {r["rollout_id"] for r in failed}, (agent, rollout_id)
            expect(page.get_by_text(re.compile(r"^Failed tests \(\d+ of \d+\)$"))).to_be_visible()
        else:
            expect(page.get_by_text("Every rollout shown passed.")).to_be_visible()
        expect(page.get_by_role("button", name="Download trajectory.json")).to_be_visible()
        if agent in ("nop", "oracle", "ablation"):   # the scripted probes say they are not models
            expect(page.get_by_text("verifier probe, not a model").first).to_be_visible()
        for tab in ("Most-failing tests", "Task × test heatmap", "Near-misses", "Failure classes"):
            open_tab(page, tab, page.get_by_role("tabpanel", name=tab))
            _no_exception(page)
        page.screenshot(path=str(tmp_path / f"failures-{agent}.png"), full_page=True)


def test_a_withdrawn_task_leaves_the_accepted_set_and_undo_brings_it_back(graph_workspace, dashboard, chromium,
                                                                          tmp_path):
    ws = graph_workspace
    make_rollouts_fixture(ws)
    n = len(task_store.accepted_tasks(ws.db))
    judgements.save_judgement(ws.db, UNSOLVED_TASK, verdict="design_flaw", reason=REASON,
                              evidence={"consistent": ["test_outputs.py::test_count"]}, n_rollouts=3,
                              model="judge-model", cost_usd=0.001, withdraw=True)
    name = task_store.tasks_frame(ws.db).set_index("task_id").loc[UNSOLVED_TASK, "name"]
    url = dashboard(ws)
    page = _open(chromium, url + "/rollouts", "keeps going when you close this tab")
    expect(page.get_by_text(f"every accepted task ({n - 1})")).to_be_visible()

    page = _open(chromium, url + "/tasks", "Browse")
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("Task", exact=True))
    box.locator("input").click()
    option = page.get_by_role("option").filter(has_text=" · withdrawn · ")
    expect(option).to_have_count(1)
    expect(option).to_contain_text(name)
    option.click()
    wait_idle(page)
    warning = page.locator('[data-testid="stAlertContentWarning"]')
    expect(warning).to_contain_text("Withdrawn from the accepted set by the trajectory judge on ")
    expect(warning).to_contain_text(REASON)
    page.screenshot(path=str(tmp_path / "tasks-withdrawn.png"), full_page=True)
    page.get_by_role("button", name="Undo: restore it to the accepted set").click()
    wait_idle(page)
    expect(page.get_by_text("Accepted: every check passed.")).to_be_visible(timeout=30_000)
    _no_exception(page)
    assert UNSOLVED_TASK in set(task_store.accepted_tasks(ws.db)["task_id"])

    page = _open(chromium, url + "/rollouts", "keeps going when you close this tab")
    expect(page.get_by_text(f"every accepted task ({n})")).to_be_visible()
    _no_exception(page)
