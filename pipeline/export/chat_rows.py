"""An ATIF trajectory as SFT rows in the shape of Harbor's traces export
(harbor/utils/traces_utils.py, harbor 0.26; the Nemotron-Terminal-Corpus rows).

One row per episode: every agent step ends an episode, and episode i's `conversations` are the
steps up to and including that agent step (`episodes="last"`: only the whole conversation).
Roles as Harbor maps them: system and user steps -> "user" (the tool definitions, when the
trajectory has any, embedded in the first as `<tools>…</tools>`), agent steps -> "assistant"
(`<think>reasoning</think>`, the message, then each tool call as `<tool_call>{name,
arguments}</tool_call>`), and an agent step's observation -> a "user" message before the
next agent turn (not after the episode's last one: it belongs to the next episode). Steps
marked `is_copied_context` are kept in the conversation but end no episode. Media parts
(images, audio) are refused, as Harbor refuses them for text-only export. One deviation: a
system or user message given as a list of content parts Harbor passes through as that list;
here it becomes its text (`text_of`, Harbor's own normalisation), so `content` is always a
string, as SFT rows and the Parquet schema need.

Row fields: Harbor's (`conversations`, `agent`, `model`, `model_provider`, `date`, `task`,
`episode`, `run_id`, `trial_name`, `result`) plus ours: `reward`, `rollout_id`, `task_id`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EPISODES = ("all", "last")
ROW_FIELDS = ("conversations", "agent", "model", "model_provider", "date", "task", "episode", "run_id",
              "trial_name", "result", "reward", "rollout_id", "task_id")


class ChatRowError(ValueError):
    """The trajectory cannot become text rows (media content)."""


@dataclass(frozen=True)
class RowMeta:
    """What a row says besides its conversation (Harbor reads it from the trial's result.json)."""
    agent: str
    model: str | None
    model_provider: str | None
    date: str
    task: str
    run_id: str
    trial_name: str
    result: str | None          # Harbor: the reward as text ("1.0"), or the exception's type
    reward: float | None
    rollout_id: str
    task_id: str


def text_of(content: Any) -> str:
    """Harbor's normalize_message_content: a string, the first text part, else JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict) and "text" in content[0]:
        val = content[0].get("text")
        return val if isinstance(val, str) else json.dumps(val, ensure_ascii=False)
    try:
        return json.dumps(content, ensure_ascii=False)
    except TypeError:
        return str(content)


def _has_media(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in ("image", "audio")
                                             for p in content)


def _check_text_only(steps: list[dict]) -> None:
    for step in steps:
        results = (step.get("observation") or {}).get("results") or []
        if _has_media(step.get("message")) or any(_has_media(r.get("content")) for r in results if isinstance(r, dict)):
            raise ChatRowError(f"step {step.get('step_id')} holds images or audio; text rows would lose them")


def _assistant(step: dict) -> str:
    parts = []
    if step.get("reasoning_content"):
        parts.append(f"<think>{step['reasoning_content']}</think>")
    message = text_of(step.get("message"))
    if message:
        if "</think>" in message and "<think>" not in message:
            message = "<think>" + message     # as Harbor repairs a generation prompt's missing opener
        parts.append(message)
    for call in step.get("tool_calls") or []:
        obj = {"name": call.get("function_name"), "arguments": call.get("arguments", {})}
        parts.append(f"<tool_call>\n{json.dumps(obj, ensure_ascii=False)}\n</tool_call>")
    return "\n".join(parts)


def _observation(step: dict) -> str | None:
    results = (step.get("observation") or {}).get("results") or []
    texts = [text_of(r["content"]) for r in results if isinstance(r, dict) and "content" in r]
    return "\n".join(texts) if texts else None


def _conversation(steps: list[dict], tools: list | None) -> list[dict]:
    agent_positions = [i for i, s in enumerate(steps) if s.get("source") == "agent"]
    out: list[dict] = []
    tools_added = False
    for i, step in enumerate(steps):
        source = step.get("source")
        if source == "system":
            content = text_of(step.get("message"))
            if tools and not tools_added:
                content = f"<tools>\n{json.dumps(tools, ensure_ascii=False, indent=2)}\n</tools>\n\n{content}"
                tools_added = True
            out.append({"role": "user", "content": content})
        elif source == "user":
            out.append({"role": "user", "content": text_of(step.get("message"))})
        elif source == "agent":
            out.append({"role": "assistant", "content": _assistant(step)})
            if i != agent_positions[-1] and (obs := _observation(step)) is not None:
                out.append({"role": "user", "content": obs})
    return out


def chat_rows(trajectory: dict, meta: RowMeta, episodes: str = "all") -> list[dict]:
    """The trajectory's rows (none when it has no agent step). Raises ChatRowError for media."""
    if episodes not in EPISODES:
        raise ValueError(f"episodes {episodes!r}: one of {', '.join(EPISODES)}")
    steps = [s for s in trajectory.get("steps") or [] if isinstance(s, dict)]
    _check_text_only(steps)
    agent = trajectory.get("agent") if isinstance(trajectory.get("agent"), dict) else {}
    tools = agent.get("tool_definitions")
    ends = [i for i, s in enumerate(steps) if s.get("source") == "agent" and not s.get("is_copied_context")]
    rows = []
    for n, end in enumerate(ends):
        if episodes == "last" and n != len(ends) - 1:
            continue
        conv = _conversation(steps[:end + 1], tools)
        if not conv:
            continue
        rows.append({"conversations": conv, "agent": meta.agent, "model": meta.model or agent.get("model_name"),
                     "model_provider": meta.model_provider, "date": meta.date, "task": meta.task,
                     "episode": f"episode-{n}", "run_id": meta.run_id, "trial_name": meta.trial_name,
                     "result": meta.result, "reward": meta.reward, "rollout_id": meta.rollout_id,
                     "task_id": meta.task_id})
    return rows


def row_text(row: dict) -> str:
    """Every message of a row as one text (what decontamination reads)."""
    return "\n".join(str(m.get("content") or "") for m in row.get("conversations") or [])
