"""ATIF documents built by our TrajectoryBuilder pass Harbor's own validator (run in
.harbor-venv); broken ones are rejected by our models and by Harbor's; files that Harbor's
models write are read by ours; garbage gets an error that says what and where."""
from __future__ import annotations

import json
import subprocess

import pytest

from pipeline.export.harbor_runner import ensure_harbor
from pipeline.trajectories.atif import (SCHEMA_VERSION, TrajectoryBuilder, TrajectoryError, read_trajectory,
                                        validate_with_harbor)


@pytest.fixture(scope="module")
def harbor_python():
    return ensure_harbor()   # a no-op when .harbor-venv is up to date


def scripted_doc() -> dict:
    """What the oracle agent writes: one tool call, no LLM."""
    b = TrajectoryBuilder("trial-1", "oracle", "1", None)
    b.user("Sum the numbers in /data/in.txt")
    b.agent("Run the task's solution", llm_call_count=0,
            tool_calls=[{"tool_call_id": "call_1", "function_name": "bash",
                         "arguments": {"command": "bash /solution/solve.sh"}}],
            observation="exit 0\n42\n", extra={"exit_code": 0})
    return b.finish()


def llm_doc() -> dict:
    """What terminus-2 writes: several turns with keystrokes, observations and metrics."""
    b = TrajectoryBuilder("trial-2", "terminus-2", "0.1", "replay-model")
    b.system("You are an AI assistant solving tasks in a Linux terminal.")
    b.user("Create /app/out.txt containing hello")
    turns = [("ls /app\n", "out.txt missing", 100, 20, 0.001),
             ("echo hello > /app/out.txt\n", "", 180, 30, 0.002),
             (None, "Are you sure?", 240, 10, 0.0005)]
    for i, (keys, obs, pt, ct, cost) in enumerate(turns, 1):
        calls = ([{"tool_call_id": f"call_{i}_1", "function_name": "bash_command",
                   "arguments": {"keystrokes": keys, "duration": 0.1}}] if keys else
                 [{"tool_call_id": f"call_{i}_task_complete", "function_name": "mark_task_complete",
                   "arguments": {}}])
        b.agent(json.dumps({"analysis": "a", "plan": "p"}), reasoning="thinking", tool_calls=calls,
                observation=obs, metrics={"prompt_tokens": pt, "completion_tokens": ct, "cost_usd": cost})
    return b.finish(notes="replayed")


def write(tmp_path, name: str, doc) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(path)


def test_scripted_agent_document_is_valid_atif(tmp_path, harbor_python):
    doc = scripted_doc()
    assert doc["schema_version"] == SCHEMA_VERSION == "ATIF-v1.8"
    assert [s["step_id"] for s in doc["steps"]] == [1, 2]
    agent_step = doc["steps"][1]
    assert agent_step["observation"]["results"][0]["source_call_id"] == "call_1"
    assert "metrics" not in agent_step and "model_name" not in doc["agent"]
    path = write(tmp_path, "trajectory.json", doc)
    assert read_trajectory(path).steps[1].tool_calls[0].arguments["command"] == "bash /solution/solve.sh"
    assert validate_with_harbor(path) == []   # Harbor's CLI, one file


def test_llm_agent_document_sums_metrics_and_is_valid_atif(tmp_path, harbor_python):
    doc = llm_doc()
    fm = doc["final_metrics"]
    assert fm["total_prompt_tokens"] == 520 and fm["total_completion_tokens"] == 60
    assert fm["total_cost_usd"] == pytest.approx(0.0035) and fm["total_steps"] == 5
    assert "total_cached_tokens" not in fm   # no step said: unknown, not 0
    paths = [write(tmp_path, "a.json", doc), write(tmp_path, "b.json", scripted_doc())]
    assert validate_with_harbor(paths) == []  # one Harbor process for many files


@pytest.mark.parametrize("breakage, words", [
    ("step_order", "step_id"),
    ("unknown_field", "flavour"),
    ("agent_field_on_user", "reasoning_content"),
    ("dangling_call", "call_nope"),
])
def test_broken_documents_are_rejected_by_ours_and_harbors(tmp_path, harbor_python, breakage, words):
    doc = llm_doc()
    if breakage == "step_order":
        doc["steps"][2]["step_id"], doc["steps"][3]["step_id"] = 4, 3
    elif breakage == "unknown_field":
        doc["steps"][2]["flavour"] = "mint"
    elif breakage == "agent_field_on_user":
        doc["steps"][1]["reasoning_content"] = "hm"
    else:
        doc["steps"][2]["observation"]["results"][0]["source_call_id"] = "call_nope"
    path = write(tmp_path, "broken.json", doc)
    with pytest.raises(TrajectoryError, match=words) as e:
        read_trajectory(path)
    assert str(path) in str(e.value)
    errors = validate_with_harbor(path)
    assert errors and all(err.startswith(path) for err in errors)
    assert any(words in err for err in errors), errors
    # the batch path gives the same verdict, next to a valid file that stays clean
    good = write(tmp_path, "good.json", scripted_doc())
    batch = validate_with_harbor([good, path])
    assert batch and all(err.startswith(path) for err in batch)


def test_documents_written_by_harbors_models_are_read_by_ours(tmp_path, harbor_python):
    """Parity with what Harbor writes (terminus-2 uses copied context, subagent refs, token ids):
    a document built with Harbor's own pydantic models reads with ours, field for field."""
    script = """
import json, sys
from harbor.models.trajectories import *
t = Trajectory(session_id="s", trajectory_id="root", agent=Agent(name="terminus-2", version="2.0.0",
    model_name="m", tool_definitions=[{"type": "function"}], extra={"k": 1}),
  steps=[Step(step_id=1, source="user", message="hi", is_copied_context=True),
         Step(step_id=2, source="agent", message=[ContentPart(type="text", text="ok")],
              reasoning_effort="high", llm_call_count=1,
              tool_calls=[ToolCall(tool_call_id="c", function_name="f", arguments={}, extra={"t": 1})],
              observation=Observation(results=[ObservationResult(source_call_id="c", content="out",
                  subagent_trajectory_ref=[SubagentTrajectoryRef(trajectory_path="sub.json")],
                  extra={"e": 1})]),
              metrics=Metrics(prompt_tokens=3, completion_tokens=2, cached_tokens=1, cost_usd=0.1,
                              prompt_token_ids=[1, 2], completion_token_ids=[3], logprobs=[-0.5]))],
  final_metrics=FinalMetrics(total_prompt_tokens=3, total_steps=2), continued_trajectory_ref="next.json",
  subagent_trajectories=[Trajectory(trajectory_id="sub", agent=Agent(name="s", version="1"),
                                    steps=[Step(step_id=1, source="agent", message="x")])])
print(json.dumps(t.to_json_dict()))
"""
    out = subprocess.run([str(harbor_python), "-c", script], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    ours = read_trajectory(out.encode())
    assert ours.to_json_dict() == json.loads(out)


def test_garbage_is_refused_with_what_and_where(tmp_path):
    cases = {
        "latin1.json": (b'{"agent": "\xe9"}', r"not UTF-8 \(byte 11"),
        "truncated.json": (b'{"agent": {', r"not JSON \(.* line 1 column 12"),
        "list.json": (b"[1, 2]", "JSON object, this is list"),
        "empty_steps.json": (json.dumps({"agent": {"name": "a", "version": "1"}, "steps": []}).encode(),
                             r"trajectory\.steps: .*at least 1"),
        "bad_version.json": (json.dumps({"schema_version": "ATIF-v9", "agent": {"name": "a", "version": "1"},
                                         "steps": [{"step_id": 1, "source": "user", "message": "x"}]}).encode(),
                             "trajectory.schema_version"),
        "bad_time.json": (json.dumps({"agent": {"name": "a", "version": "1"},
                                      "steps": [{"step_id": 1, "source": "user", "message": "x",
                                                 "timestamp": "yesterday"}]}).encode(),
                          r"trajectory\.steps\[0\]\.timestamp: .*ISO 8601"),
    }
    for name, (data, pattern) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(TrajectoryError, match=pattern) as e:
            read_trajectory(path)
        assert name in str(e.value)
        with pytest.raises(TrajectoryError, match=pattern):
            read_trajectory(data)
    with pytest.raises(TrajectoryError, match="missing.json: cannot read"):
        read_trajectory(tmp_path / "missing.json")


def test_a_builder_without_steps_says_so():
    with pytest.raises(TrajectoryError, match="no steps"):
        TrajectoryBuilder("s", "nop", "1").finish()
