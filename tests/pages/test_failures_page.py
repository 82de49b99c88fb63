"""The Failures page through AppTest over the rollouts fixture (tests/pages/rollouts_fixture.py):
every tab and expander, the filters, the drill-down to one rollout (scripted and terminus-2),
a near-miss click, a crashed rollout, a garbage trajectory file and the empty workspace."""
from __future__ import annotations

import shutil

import pytest

from pipeline.agents.protocol import AGENT_LABELS
from tests.pages.apptest_helpers import chart, codes, frame, metric, open_page
from tests.pages.rollouts_fixture import COUNT, FORMAT, PLAN, TESTS, make_rollouts_fixture


@pytest.fixture
def rollouts_ws(graph_workspace):
    return graph_workspace, make_rollouts_fixture(graph_workspace)


def _outcomes(agent: str | None = None):
    return [o for (_, a, _), outs in PLAN.items() if agent in (None, a) for o in outs]


def _near(agent: str | None = None) -> tuple[int, int, int]:
    """(failed, failed with tests, near-misses) worked out from PLAN."""
    failed = [o for o in _outcomes(agent) if o != "pass"]
    ran = [o for o in failed if o[1] is not None]
    return len(failed), len(ran), sum(len(o[1]) <= 2 for o in ran)


def _pick(at, fx, task_id: str, agent: str, sample: int, model: str | None = None) -> dict:
    rec = next(r for r in fx.of(task_id, agent, model) if r["sample"] == sample)
    at.selectbox(key="fail_rollout").set_value(rec["rollout_id"]).run()
    assert not at.exception, at.exception
    return rec


def test_the_empty_workspace_says_how_to_make_rollouts(workspace, monkeypatch):
    at = open_page(workspace, monkeypatch, "failures.py")
    info = " ".join(i.value for i in at.info)
    assert "No rollouts yet" in info and "[Rollouts page](rollouts)" in info
    assert "workbench rollout --accepted --agent oracle -k 3" in info
    assert not at.tabs


def test_breakdowns_over_every_rollout(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "failures.py")
    failed, with_tests, near = _near()
    assert metric(at, "Rollouts") == str(len(fx.records)) == str(len(_outcomes()))
    assert metric(at, "Failed") == str(failed) and metric(at, "Near-misses") == str(near)
    assert metric(at, "Near-miss share") == f"{near / with_tests:.0%}"
    assert [t.label for t in at.tabs] == ["Failure classes", "Most-failing tests", "Task × test heatmap", "Near-misses"]
    # failure classes by agent, labelled with AGENT_LABELS; the ablation caption says it is a probe
    classes = frame(at, "agent_label", "failure_class", "rollouts")
    assert set(classes["agent_label"]) == {AGENT_LABELS[a] for a in ("nop", "ablation", "terminus-2")}
    t2 = classes[classes["agent_label"] == AGENT_LABELS["terminus-2"]].set_index("failure_class")["rollouts"]
    expected = {}
    for o in _outcomes("terminus-2"):
        if o != "pass":
            expected[o[0]] = expected.get(o[0], 0) + 1
    assert t2.to_dict() == expected
    assert any("verifier probe" in c.value for c in at.caption)
    assert chart(at, "fail_classes_chart")["data"]
    assert any(e.label == "What the failure classes mean" for e in at.expander)
    # the heatmap: tasks with a failure as rows; the unsolved task's count test failed in most rollouts
    heat = chart(at, "fail_heatmap")["data"][0]
    assert "skillgraph/llm-unsolved" in heat["y"] and "test_count" in heat["x"]  # the test's own name
    assert chart(at, "fail_missed_chart")["data"]
    top = frame(at, "task", "test_name", "runs", "failed", "fail_rate")
    counts = {}
    for (task, _, _), outs in PLAN.items():
        for o in outs:
            if o != "pass" and o[1] is not None:
                for t in o[1]:
                    counts[(task, t)] = counts.get((task, t), 0) + 1
    best = max(counts.values())
    assert int(top.iloc[0]["failed"]) == best and (top.iloc[0]["task_id"], top.iloc[0]["test_name"]) in {
        k for k, v in counts.items() if v == best}


def test_filters_narrow_everything_and_nothing_matching_says_so(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "failures.py")
    box = at.pills(key="fail_agents")
    assert box.format_func("ablation") == AGENT_LABELS["ablation"]
    box.set_value(["ablation"]).run()
    failed, with_tests, near = _near("ablation")
    assert metric(at, "Rollouts") == str(len(_outcomes("ablation"))) and metric(at, "Near-misses") == str(near)
    top = frame(at, "task", "test_name", "runs", "failed", "fail_rate")
    # rolltask01's format test and rolltask03's three tests fail in all 3 ablation rollouts: ties by task id
    assert (top.iloc[0]["task_id"], top.iloc[0]["test_name"], int(top.iloc[0]["failed"])) == ("rolltask01", FORMAT, 3)
    assert any(AGENT_LABELS["ablation"] in c.value for c in at.caption)
    # nop alone: no ablation caption
    at.pills(key="fail_agents").set_value(["nop"]).run()
    assert not any("verifier probe" in c.value for c in at.caption)
    # a model and a run that never met: nothing
    at.multiselect(key="fail_models").set_value(["qwen3-coder"]).run()
    assert any("No rollouts match these filters" in i.value for i in at.info)
    at.pills(key="fail_agents").set_value([]).run()
    at.multiselect(key="fail_runs").set_value(["rollfix-t2-qwen"]).run()
    at.multiselect(key="fail_tasks").set_value(["rolltask02"]).run()
    assert metric(at, "Rollouts") == "3" and metric(at, "Failed") == "3"
    assert not at.exception


def test_drilling_into_an_ablation_rollout_shows_its_step_and_failed_test(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "failures.py")
    rec = _pick(at, fx, "rolltask01", "ablation", 0)
    failed = frame(at, "test_name", "outcome", "message")
    assert failed["test_name"].tolist() == [FORMAT] and failed["outcome"].tolist() == ["failed"]
    assert any(m.value == f"**Failed tests** (1 of {len(TESTS)})" for m in at.markdown)
    assert "bash /solution/solve.sh  # step 2 left out" in codes(at)   # st.code drops the last newline
    assert any(e.label.startswith("2. agent · 1 command") for e in at.expander)
    assert any(e.label == "verifier/ctrf.json" for e in at.expander)
    assert any('"status": "failed"' in c for c in codes(at))
    labels = [d.label for d in at.get("download_button")]
    assert labels == ["Download trajectory.json", "Download agent.log"]
    assert any("No terminal recording" in c.value for c in at.caption)
    assert any("**failed: test assertion" in m.value and rec["task_id"] not in m.value for m in at.markdown)


def test_a_terminus_rollout_reads_turn_by_turn_with_its_recording(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "failures.py")
    _pick(at, fx, "rolltask00", "terminus-2", 1, "gpt-4o-mini")
    assert any(m.value == "**Analysis** I need to look at the log first." for m in at.markdown)
    assert any(m.value == "**Plan** Write it to /app/out.txt." for m in at.markdown)
    assert "ls /app\ngrep -c ERROR /app/server.log" in codes(at)   # both keystrokes of the turn, in order
    assert "server.log\n20" in codes(at)                            # the terminal output they gave
    assert any("task complete" in e.label for e in at.expander)
    assert frame(at, "test_name", "outcome", "message")["test_name"].tolist() == [COUNT]
    assert "Download recording.cast" in [d.label for d in at.get("download_button")]
    assert any(c.value.startswith("800 prompt + 120 completion tokens") for c in at.caption)


def test_a_near_miss_click_opens_it_and_a_crashed_rollout_says_it_has_no_tests(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "failures.py")
    misses = frame(at, "task_name", "n_failed", "rollout_id")
    at.session_state["fail_near_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert at.selectbox(key="fail_rollout").value == misses.iloc[0]["rollout_id"]
    _pick(at, fx, "rolltask01", "terminus-2", 1, "qwen3-coder")
    assert any("exited (code 137) before the verifier ran" in e.value for e in at.error)
    assert any("No per-test results" in i.value for i in at.info)


def test_a_garbage_trajectory_file_is_named_and_its_tests_still_show(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    rec = next(r for r in fx.of("rolltask02", "ablation") if r["sample"] == 0)
    (ws.root / rec["folder"] / "trajectory.json").write_bytes(b"\x00{garbage")
    at = open_page(ws, monkeypatch, "failures.py")
    _pick(at, fx, "rolltask02", "ablation", 0)
    warning = next(w.value for w in at.warning if w.value.startswith("The trajectory cannot be shown"))
    assert f"{rec['folder']}/trajectory.json" in warning and "not JSON" in warning
    assert frame(at, "test_name", "outcome", "message")["test_name"].tolist() == [COUNT]
    # a folder gone from disk: said so, tests still shown
    other = next(r for r in fx.of("rolltask02", "ablation") if r["sample"] == 1)
    shutil.rmtree(ws.root / other["folder"])
    _pick(at, fx, "rolltask02", "ablation", 1)
    assert any("no such folder" in w.value for w in at.warning)
    assert frame(at, "test_name", "outcome", "message")["test_name"].tolist() == [COUNT]


def test_terminus2_runs_against_the_scripted_replay_read_as_a_test_doubles_as_on_difficulty(rollouts_ws, monkeypatch):
    """Issue 22.7: Failures labelled scripted terminus-2 runs "terminus-2 (LLM agent)" while Difficulty
    said "(test double)". Both pages now label them by workbench.double_rule, alike."""
    ws, fx = rollouts_ws
    scripted = "scripted-terminus:oracle (test double)"
    with ws.db.write() as con:
        con.execute("UPDATE rollouts SET model = ? WHERE agent = 'terminus-2'", [scripted])
    at = open_page(ws, monkeypatch, "failures.py")
    label = at.pills(key="fail_agents").format_func("terminus-2")
    assert "LLM agent" not in label and label.startswith("terminus-2 · test double")
    assert label in set(frame(at, "agent_label", "failure_class", "rollouts")["agent_label"])
    rec = next(r for r in fx.of("rolltask00", "terminus-2") if r["sample"] == 1)
    at.selectbox(key="fail_rollout").set_value(rec["rollout_id"]).run()
    assert any(label in m.value and scripted in m.value for m in at.markdown)
    difficulty = open_page(ws, monkeypatch, "difficulty.py")
    assert difficulty.multiselect(key="diff_agents").format_func("terminus-2") == label
