"""Rollouts as a user drives them, in a real headless Chromium: on accepted demo tasks (offline
synthesis in real Docker), launch an oracle batch and an ablation batch from the Rollouts page
(real detached `workbench rollout` processes, real containers), watch both finish, then open the
Failures page, drill into a failed ablation rollout and read its failed test next to its
trajectory."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from pipeline.agents.protocol import AGENT_LABELS
from tests.browser.streamlit_page import assert_text_not_cut, load_page, wait_idle
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401  (fixtures)
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

pytestmark = [pytest.mark.browser, pytest.mark.docker]


def _spin(page, name: str, value: str) -> None:
    box = page.get_by_role("spinbutton", name=name)
    box.fill(value)
    box.press("Tab")


def _pick_agent(page, agent: str) -> None:
    wait_idle(page)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Agent").first.click()
    page.get_by_role("option", name=AGENT_LABELS[agent], exact=True).click()
    wait_idle(page)


def _launch(page, agent: str, k: int) -> None:
    _pick_agent(page, agent)
    _spin(page, "Rollouts per task (k)", str(k))
    wait_idle(page)
    page.get_by_role("button", name="Launch").click()
    expect(page.get_by_text(re.compile(rf"Started run \S+ \({agent}\) in the background"))).to_be_visible(
        timeout=30_000)


def test_launch_oracle_and_ablation_rollouts_and_drill_into_a_failed_one(tasks_ws, dashboard, chromium,  # noqa: F811
                                                                          tmp_path):
    ws, _ = tasks_ws
    n = len(task_store.accepted_tasks(ws.db))     # "every accepted task" is the form's default
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 2400})
    load_page(page, url + "/rollouts", "keeps going when you close this tab")
    wait_idle(page)

    _launch(page, "oracle", 1)
    expect(page.get_by_text(re.compile(r"^Finished\."))).to_be_visible(timeout=300_000)
    expect(page.get_by_text(f"rollouts finished: {n} / {n}")).to_be_visible()
    expect(page.get_by_text(f"passed: {n} of {n} run")).to_be_visible()

    _launch(page, "ablation", 2)
    expect(page.get_by_text(f"rollouts finished: {2 * n} / {2 * n}")).to_be_visible(timeout=300_000)
    expect(page.get_by_text(re.compile(r"^Finished\."))).to_be_visible(timeout=60_000)
    wait_idle(page)
    expect(page.get_by_text("Running (process")).to_have_count(0, timeout=30_000)   # the live view stopped
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "rollouts.png"), full_page=True)

    frame = ro_store.rollouts_frame(ws.db)
    assert sorted(frame["agent"].value_counts().items()) == [("ablation", 2 * n), ("oracle", n)]
    assert frame[frame["agent"] == "oracle"]["passed"].all()
    failed = frame[(frame["agent"] == "ablation") & ~frame["passed"]]
    assert len(failed) >= 1, "no ablation rollout failed: the demo tasks' tests missed every left-out step"
    tests = ro_store.test_outcomes(ws.db)

    # Failures: only ablation, then the first failed rollout (the picker's default) and its failed test
    load_page(page, url + "/failures", "Why rollouts fail")
    wait_idle(page)
    expect(page.get_by_text("verifier probe, not a model").first).to_be_visible()
    agents = page.locator('[data-testid="stButtonGroup"]').filter(has_text=AGENT_LABELS["oracle"])
    assert_text_not_cut(agents.get_by_role("button"))       # every label reads whole, the probe's too
    agents.get_by_role("button", name=AGENT_LABELS["ablation"], exact=True).click()
    wait_idle(page)
    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Rollout").locator("input")
    expect(picker).to_have_value(re.compile(r" · ablation #\d · test_assertion, \d+/\d+ tests failed · ro-\w+$"),
                                 timeout=30_000)
    rollout_id = picker.input_value().rsplit(" · ", 1)[1]
    assert rollout_id in set(failed["rollout_id"]), (rollout_id, failed["rollout_id"].tolist())
    mine = tests[(tests["rollout_id"] == rollout_id) & tests["outcome"].isin(["failed", "error"])]
    expect(page.get_by_text(re.compile(rf"^Failed tests \({len(mine)} of \d+\)$"))).to_be_visible()
    cells = page.locator('[data-testid="stDataFrame"]').filter(has_text="test_name").locator('[role="gridcell"]')
    expect(cells.first).to_be_attached(timeout=30_000)
    shown = cells.all_text_contents()
    first = sorted(mine["test_name"])[0]     # the grid draws only the rows in view: the first failed test
    assert first in shown, (first, shown[:12])
    # its one scripted step: the solution run with a step left out, and its output
    step = page.locator('[data-testid="stExpander"]').filter(has_text="agent · 1 command")
    expect(step.first).to_be_visible()
    expect(page.get_by_role("button", name="Download trajectory.json")).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "failures.png"), full_page=True)


def test_terminus2_against_the_scripted_replay_model_from_the_page_and_its_turns(tasks_ws, dashboard,  # noqa: F811
                                                                                   chromium, tmp_path):
    """No endpoint configured: the page offers terminus-2 only against the scripted replay model
    (labelled a test double); k = 3 on one task finishes and each rollout reads turn by turn."""
    ws, ids = tasks_ws
    names = dict(task_store.accepted_tasks(ws.db)[["task_id", "name"]].itertuples(index=False))
    url = dashboard(ws)
    page = chromium.new_page(viewport={"width": 1500, "height": 2400})
    load_page(page, url + "/rollouts", "keeps going when you close this tab")
    _pick_agent(page, "terminus-2")
    expect(page.get_by_text("No LLM endpoint is configured")).to_be_visible()
    expect(page.get_by_text("a test double served in-process", exact=False)).to_be_visible()
    page.get_by_text("a selection", exact=True).click()
    tasks = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Selection")
    tasks.click()
    page.get_by_role("option", name=f"{names[ids[0]]} ({ids[0]})", exact=True).click()
    page.keyboard.press("Escape")
    _spin(page, "Rollouts per task (k)", "3")
    wait_idle(page)
    page.get_by_role("button", name="Launch").click()
    expect(page.get_by_text(re.compile(r"Started run \S+ \(terminus-2 against scripted-terminus \(a test double\)\)"))
           ).to_be_visible(timeout=30_000)
    expect(page.get_by_text("rollouts finished: 3 / 3")).to_be_visible(timeout=420_000)
    wait_idle(page)
    expect(page.get_by_text("passed: 3 of 3 run")).to_be_visible(timeout=30_000)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "rollouts-terminus.png"), full_page=True)
    frame = ro_store.rollouts_frame(ws.db)
    assert len(frame) == 3 and frame["passed"].all() and set(frame["task_id"]) == {ids[0]}
    log = (ws.runs_dir / frame["run_id"].iloc[0] / "rollout.log").read_text()
    assert "--replay oracle" in log.splitlines()[0], log[:300]

    load_page(page, url + "/failures", "Why rollouts fail")
    wait_idle(page)
    expect(page.get_by_text("Every rollout shown passed.")).to_be_visible()
    turn = page.get_by_text(re.compile(r"^\d+\. agent · \d+ commands?$")).first    # a turn's header
    expect(turn).to_be_visible(timeout=30_000)
    turn.click()                                                      # many turns: they start folded
    opened = page.locator('[data-testid="stExpander"]').filter(has=turn).first
    expect(opened.get_by_text(re.compile(r"^Analysis \S"))).to_be_visible()
    expect(opened.get_by_text(re.compile(r"^Plan \S"))).to_be_visible()
    expect(opened.locator("code.language-bash")).to_be_visible()      # the keystrokes
    expect(opened.get_by_text("Terminal output", exact=True)).to_be_visible()
    expect(page.get_by_text(re.compile(r"^\d+\. agent · .*task complete")).first).to_be_visible()
    expect(page.get_by_role("button", name="Download recording.cast")).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "failures-terminus.png"), full_page=True)
