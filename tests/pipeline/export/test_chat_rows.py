"""ATIF -> chat rows: the same conversations Harbor's own traces export makes (run in
.harbor-venv) for the parts our fixture trajectories lack — reasoning, tool definitions, a
step of copied context, list-shaped content (a string here, Harbor's list), an orphaned </think> —
and media refused."""
from __future__ import annotations

import json
import subprocess

import pytest

from pipeline.export.chat_rows import ChatRowError, RowMeta, chat_rows, text_of
from pipeline.export.harbor_runner import harbor_env, harbor_python

META = RowMeta(agent="terminus-2", model="m", model_provider=None, date="", task="t", run_id="r", trial_name="x",
               result="1.0", reward=1.0, rollout_id="ro-1", task_id="t-1")
TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
TRAJECTORY = {
    "schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1", "tool_definitions": TOOLS},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You drive a terminal."},
        {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "Sum the numbers."}]},
        {"step_id": 3, "source": "agent", "message": "earlier summary", "is_copied_context": True},
        {"step_id": 4, "source": "agent", "message": "Look first.", "reasoning_content": "hmm",
         "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "numbers.txt"}]}},
        {"step_id": 5, "source": "agent", "message": "thinking</think>Done.",
         "observation": {"results": [{"content": "ok"}, {"content": [{"type": "text", "text": "more"}]}]}},
        {"step_id": 6, "source": "user", "message": "Are you sure?"},
        {"step_id": 7, "source": "agent", "message": "Yes."},
    ]}


def _harbor_conversations(tmp_path, doc: dict) -> list:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    script = ("import json, sys\nfrom pathlib import Path\n"
              "from harbor.utils.traces_utils import extract_conversations_from_trajectory as f\n"
              "meta = {'agent_name': 'a', 'model_name': 'm', 'model_provider': 'p', 'start_time': '', 'run_id': 'r',"
              " 'task_name': 't', 'trial_name': 'x', 'raw_metadata': {}}\n"
              "print(json.dumps([c['conversations'] for c in f(Path(sys.argv[1]), meta)]))\n")
    proc = subprocess.run([str(harbor_python()), "-c", script, str(path)], capture_output=True, text=True,
                          env=harbor_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_rows_match_harbors_traces_export_episode_by_episode(tmp_path):
    rows = chat_rows(TRAJECTORY, META)
    assert [r["episode"] for r in rows] == ["episode-0", "episode-1", "episode-2"]   # copied context ends none
    harbor = _harbor_conversations(tmp_path, TRAJECTORY)
    # Harbor passes a list-shaped user message through as the list; ours is its text (always a string)
    assert harbor[0][1]["content"] == TRAJECTORY["steps"][1]["message"]
    for conv in harbor:
        conv[1]["content"] = text_of(conv[1]["content"])
    assert [r["conversations"] for r in rows] == harbor
    first = rows[0]["conversations"]
    assert first[0]["content"].startswith("<tools>\n") and first[1]["content"] == "Sum the numbers."
    assert first[-1]["content"].startswith("<think>hmm</think>\nLook first.\n<tool_call>")
    assert rows[1]["conversations"][-1]["content"] == "<think>thinking</think>Done."
    last = chat_rows(TRAJECTORY, META, episodes="last")
    assert len(last) == 1 and last[0]["conversations"] == rows[-1]["conversations"]
    assert (last[0]["reward"], last[0]["rollout_id"], last[0]["task_id"]) == (1.0, "ro-1", "t-1")


def test_media_and_bad_options_are_refused():
    doc = {"steps": [{"step_id": 1, "source": "user", "message": [{"type": "image", "source": {"path": "a.png"}}]},
                     {"step_id": 2, "source": "agent", "message": "ok"}]}
    with pytest.raises(ChatRowError, match="step 1 holds images or audio"):
        chat_rows(doc, META)
    with pytest.raises(ValueError, match="episodes 'some'"):
        chat_rows(TRAJECTORY, META, episodes="some")
    assert chat_rows({"steps": [{"step_id": 1, "source": "user", "message": "hi"}]}, META) == []
