"""analysis/trajectory_view.py: ATIF documents (built with our TrajectoryBuilder, and as Harbor's
terminus-2 writes them) turned into viewer turns; garbage files give a clear message."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis import trajectory_view as tv
from pipeline.trajectories.atif import TrajectoryBuilder


def _terminus_doc() -> dict:
    b = TrajectoryBuilder("ro-1", "terminus-2", "1.0", "replay-model")
    b.user("Count the errors in /app/server.log")
    b.agent("Analysis: The log is there.\nPlan: grep it.\nThen write the number.",
            tool_calls=[{"tool_call_id": "call_1_1", "function_name": "bash_command",
                         "arguments": {"keystrokes": "grep -c ERROR /app/server.log > /app/out.txt\n",
                                       "duration": 0.5}}],
            observation="$ grep -c ERROR /app/server.log > /app/out.txt\n$ ",
            metrics={"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.001})
    b.agent('{"analysis": "Done?", "plan": "confirm", "commands": [], "task_complete": true}',
            tool_calls=[{"tool_call_id": "call_2_task_complete", "function_name": "mark_task_complete",
                         "arguments": {}}],
            observation="Are you sure you want to mark the task complete?")
    b.agent("not json at all", observation="Previous response had parsing errors: no JSON object")
    return b.finish()


def _scripted_doc() -> dict:
    b = TrajectoryBuilder("ro-2", "ablation", "1", None)
    b.agent("Ran the solution with step 2 of 3 left out",
            tool_calls=[{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "bash /solution/solve.sh"}}],
            observation="exit 0", llm_call_count=0, extra={"left_out": 2})
    return b.finish()


TESTS = pd.DataFrame([
    {"rollout_id": "ro-1", "task_id": "T", "agent": "terminus-2", "model": "m", "test_name": "test_a",
     "outcome": "passed", "message": ""},
    {"rollout_id": "ro-1", "task_id": "T", "agent": "terminus-2", "model": "m", "test_name": "test_b",
     "outcome": "failed", "message": "assert 41 == 42"},
    {"rollout_id": "other", "task_id": "T", "agent": "terminus-2", "model": "m", "test_name": "test_c",
     "outcome": "failed", "message": ""},
])


def _write(tmp_path, doc, name="trajectory.json"):
    path = tmp_path / name
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def test_a_terminus_trajectory_gives_analysis_plan_keystrokes_and_output_per_turn(tmp_path):
    view = tv.load_view(_write(tmp_path, _terminus_doc()), TESTS, "ro-1", name="runs/x/trajectory.json")
    assert view.error is None and view.warnings == []
    assert view.agent == "terminus-2 1.0" and view.model == "replay-model"
    assert [t.source for t in view.turns] == ["user", "agent", "agent", "agent"] and view.agent_turns == 3
    first = view.turns[1]
    assert first.analysis == "The log is there." and first.plan == "grep it.\nThen write the number."
    assert first.message == ""
    assert [(k.text, k.duration) for k in first.keystrokes] == [("grep -c ERROR /app/server.log > /app/out.txt\n", 0.5)]
    assert first.output.startswith("$ grep -c ERROR") and not first.task_complete
    assert (first.prompt_tokens, first.completion_tokens, first.cost_usd) == (120, 30, 0.001)
    # a raw JSON reply (Harbor's raw_content mode) splits too; task_complete is a tool call
    confirm = view.turns[2]
    assert (confirm.analysis, confirm.plan, confirm.task_complete) == ("Done?", "confirm", True)
    # a reply that was not JSON: shown as it came, with the parse error fed back
    bad = view.turns[3]
    assert bad.message == "not json at all" and "parsing errors" in bad.output and not bad.keystrokes
    # the rollout's own failed tests only
    assert view.failed_tests.to_dict("records") == [{"test_name": "test_b", "outcome": "failed",
                                                     "message": "assert 41 == 42"}]


def test_a_scripted_agents_one_step_shows_its_command(tmp_path):
    view = tv.load_view(_write(tmp_path, _scripted_doc()))
    assert len(view.turns) == 1
    step = view.turns[0]
    assert step.scripted and [k.text for k in step.keystrokes] == ["bash /solution/solve.sh"]
    assert step.message == "Ran the solution with step 2 of 3 left out" and step.output == "exit 0"
    assert view.failed_tests.empty


def test_analysis_and_plan_in_a_steps_extra_win_and_unknown_tools_are_listed():
    doc = {"schema_version": "ATIF-v1.6", "agent": {"name": "claude-code", "version": "2"},
           "steps": [{"step_id": 1, "source": "agent", "message": [{"type": "text", "text": "thinking"}],
                      "extra": {"analysis": "A", "plan": "P"},
                      "tool_calls": [{"tool_call_id": "x", "function_name": "Edit", "arguments": {"file": "/a"}}],
                      "observation": {"results": [{"content": "ok"}, {"content": "also"}]}}]}
    view = tv.view_document(doc)
    turn = view.turns[0]
    assert (turn.analysis, turn.plan, turn.message) == ("A", "P", "thinking")
    assert turn.calls == ['Edit {"file": "/a"}'] and turn.output == "ok\nalso"


def test_our_terminus_steps_keep_analysis_and_plan_in_extra_and_the_joined_message_is_not_repeated():
    doc = {"agent": {"name": "terminus-2"}, "steps": [
        {"step_id": 1, "source": "agent", "message": "Analysis: a: b\nPlan: c", "llm_call_count": 1,
         "extra": {"turn": 1, "analysis": "a: b", "plan": "c\nPlan: not a heading"}}]}
    turn = tv.view_document(doc).turns[0]
    assert (turn.analysis, turn.plan, turn.message) == ("a: b", "c\nPlan: not a heading", "")


def test_long_texts_keep_head_and_tail_and_turns_are_bounded(monkeypatch):
    big = "H" * 10_000 + "middle" + "T" * 10_000
    assert tv.capped("short") == "short"
    cut = tv.capped(big, 1000)
    assert cut.startswith("H" * 500) and cut.endswith("T" * 500) and "characters cut" in cut and len(cut) < 1100
    monkeypatch.setattr(tv, "MAX_TURNS", 5)
    doc = {"agent": {"name": "x"}, "steps": [{"step_id": i + 1, "source": "agent", "message": "m",
                                              "observation": {"results": [{"content": big}]}} for i in range(8)]}
    view = tv.view_document(doc)
    assert len(view.turns) == 5 and view.omitted == 3
    assert len(view.turns[0].output) <= tv.MAX_TEXT + 100 and "characters cut" in view.turns[0].output


@pytest.mark.parametrize("content, expected", [
    (b"{not json", "not JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"[1, 2, 3]", "a trajectory is a JSON object, this is list"),
    (b'{"agent": {"name": "x"}, "steps": []}', "no steps"),
    (b'{"agent": {"name": "x"}, "steps": "three"}', "no steps"),
])
def test_garbage_files_say_what_is_wrong_and_where(tmp_path, content, expected):
    path = _write(tmp_path, content)
    view = tv.load_view(path, TESTS, "ro-1", name="runs/r/rollouts/ro-1/trajectory.json")
    assert view.error is not None and expected in view.error, view.error
    assert view.error.startswith("runs/r/rollouts/ro-1/trajectory.json")
    assert view.turns == []
    assert view.failed_tests["test_name"].tolist() == ["test_b"]   # the tests still show


def test_a_document_our_models_reject_is_shown_as_far_as_it_reads_with_a_warning(tmp_path):
    doc = _scripted_doc()
    doc["steps"][0]["step_id"] = 7          # ATIF wants 1..n
    doc["steps"].append("junk")
    view = tv.load_view(_write(tmp_path, doc), name="t.json")
    assert view.error is None and len(view.turns) == 1
    assert view.warnings[0].startswith("t.json: not valid ATIF") and "shown as far as it reads" in view.warnings[0]
    assert any("1 step(s) are not JSON objects" in w for w in view.warnings)


def test_a_missing_or_oversized_file_is_named(tmp_path, monkeypatch):
    view = tv.load_view(tmp_path / "trajectory.json", name="trajectory.json")
    assert view.error == "trajectory.json: no such file (the rollout wrote no trajectory)"
    monkeypatch.setattr(tv, "MAX_FILE_BYTES", 100)
    view = tv.load_view(_write(tmp_path, _terminus_doc()), name="t.json")
    assert "over the viewer's 100-byte cap" in view.error and view.turns == []
