"""Verifier strength on the pages (AppTest): a measured task's commands on the Tasks page
(untested first), the run's distribution on the Synthesis page, and what to run where nothing
was measured yet."""
from __future__ import annotations

from tests.pages.apptest_helpers import chart, frame, open_page, plotly_array
from tests.pages.synth_fixture import RUN_ID, make_synth_fixture
from workbench.store import strength as strength_store
from workbench.store import tasks as store

REPORT = {"strength": 0.5, "effective": 2, "caught": 1, "problem": None, "seconds": 9.0, "unstable": [],
          "commands": [
              {"number": 1, "command": "command 1: grep -c ERROR /app/server.log > /app/out.txt", "caught": True,
               "effect": True, "failing_tests": ["test_outputs.py::test_count"], "changed": ["/app/out.txt"]},
              {"number": 2, "command": "command 2: date > /app/stamp.txt", "caught": False, "effect": True,
               "failing_tests": [], "changed": ["/app/stamp.txt"]},
              {"number": 3, "command": "command 3: echo done", "caught": False, "effect": False,
               "failing_tests": [], "changed": []}]}


def _accepted(ws):
    tasks = store.tasks_frame(ws.db)
    return tasks[tasks["verdict"] == "accepted"].iloc[0]


def test_a_measured_task_lists_its_untested_commands_first(graph_workspace, monkeypatch):
    ws = graph_workspace
    make_synth_fixture(ws)
    task = _accepted(ws)
    strength_store.save_strength(ws.db, task["task_id"], task["bundle_hash"], REPORT)
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(task["task_id"]).run()
    assert not at.exception, at.exception
    expander = [e for e in at.expander if e.label.startswith("Verifier strength")]
    assert expander and "50% of the effective solution commands" in expander[0].label
    table = frame(at, "command", "verdict", "failing tests", "state changed")
    assert table["verdict"].tolist() == ["untested", "no effect", "caught"]
    assert table["state changed"].tolist()[0] == "/app/stamp.txt"


def test_an_unmeasured_task_says_how_to_measure_it(graph_workspace, monkeypatch):
    ws = graph_workspace
    make_synth_fixture(ws)
    task = _accepted(ws)
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(task["task_id"]).run()
    assert any(f"workbench tasks strength --tasks {task['task_id']}" in c.value for c in at.caption)


def test_the_synthesis_page_draws_the_runs_strength_or_says_how_to_measure_it(graph_workspace, monkeypatch):
    ws = graph_workspace
    make_synth_fixture(ws)
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert any(f"workbench tasks strength --run-id {RUN_ID}" in c.value for c in at.caption)
    task = _accepted(ws)
    strength_store.save_strength(ws.db, task["task_id"], task["bundle_hash"], REPORT)
    at = open_page(ws, monkeypatch, "synthesis.py")
    fig = chart(at, f"synth_strength_{RUN_ID}")
    assert list(plotly_array(fig["data"][0]["x"])) == [50.0]
    assert fig["layout"]["title"]["text"] == "Verifier strength of 1 task(s): 1 below the target"
