"""Terminus-2's reply: one JSON object {analysis, plan, commands: [{keystrokes, duration}],
task_complete}, as Harbor's terminus-json-plain parser reads it.

Tolerant where Harbor is (a model's habits that lose nothing): the object may sit inside prose
or a ```json fence, a missing or non-numeric duration becomes DEFAULT_DURATION_S, a
`task_complete` of "true"/"yes"/"1" counts, a reply cut off before its closing braces is
closed, unknown keys are ignored. Each of these is a warning the agent passes back to the model.
Strict where it matters: no object, JSON that does not parse, a missing analysis, plan or
commands, commands that are not a list of objects with string keystrokes — these are errors
(`ReplyError`): nothing runs and the model is told what was wrong. A reply that marks the task
complete is not refused for bad commands (Harbor's rule: the commands are dropped, a warning).
"""
from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, Field

DEFAULT_DURATION_S = 1.0
REQUIRED_FIELDS = ("analysis", "plan", "commands")
_TRUE_WORDS = {"true", "1", "yes"}
_CONTENT_PREVIEW = 200


class Command(BaseModel):
    keystrokes: str
    duration: float = Field(default=DEFAULT_DURATION_S, ge=0)


class Reply(BaseModel):
    analysis: str
    plan: str
    commands: list[Command]
    task_complete: bool = False
    warnings: list[str] = Field(default_factory=list)


class ReplyError(ValueError):
    """A reply that cannot be acted on; the message is what the model is told."""

    def __init__(self, message: str, warnings: list[str] | None = None):
        super().__init__(message)
        self.warnings = list(warnings or [])


def _object_span(text: str) -> tuple[int, int] | None:
    """Start and end of the first balanced {...} outside strings (None when there is none)."""
    start, depth, in_string, escaped = -1, 0, False, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_string = not in_string
        elif not in_string and ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif not in_string and ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                return start, i + 1
    return None


def _load_object(text: str, warnings: list[str]) -> dict:
    span = _object_span(text)
    if span is None:
        unclosed = text.count("{") - text.count("}")
        if "{" in text and unclosed > 0:
            # Harbor's auto-fix: a reply cut off before its closing braces.
            fixed = text[text.index("{"):] + "}" * unclosed
            try:
                data = json.loads(fixed)
            except (json.JSONDecodeError, RecursionError):
                data = None
            if isinstance(data, dict):
                warnings.append("AUTO-CORRECTED: added the missing closing brace(s) - please send "
                                "complete JSON in future responses")
                return data
        raise ReplyError("No valid JSON found in response: send one JSON object with the fields "
                         "analysis, plan, commands", warnings)
    start, end = span
    if text[:start].strip(" \n\r\t`") not in ("", "json"):
        warnings.append("Extra text detected before JSON object")
    if text[end:].strip(" \n\r\t`"):
        warnings.append("Extra text detected after JSON object")
    content = text[start:end]
    preview = content if len(content) <= _CONTENT_PREVIEW else content[:100] + "..."
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"Invalid JSON: {exc} | Content: {preview!r}", warnings) from None
    except RecursionError:
        raise ReplyError(f"Invalid JSON: nested too deeply | Content: {preview!r}", warnings) from None
    return data


def _commands(raw: Any, warnings: list[str]) -> list[Command]:
    if not isinstance(raw, list):
        raise ReplyError("Field 'commands' must be an array", warnings)
    out: list[Command] = []
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            raise ReplyError(f"Command {i} must be an object", warnings)
        if "keystrokes" not in item:
            raise ReplyError(f"Command {i} missing required 'keystrokes' field", warnings)
        keys = item["keystrokes"]
        if not isinstance(keys, str):
            raise ReplyError(f"Command {i} 'keystrokes' must be a string", warnings)
        duration = item.get("duration")
        if "duration" not in item:
            warnings.append(f"Command {i}: Missing duration field, using default {DEFAULT_DURATION_S}")
            duration = DEFAULT_DURATION_S
        elif (isinstance(duration, bool) or not isinstance(duration, (int, float))
              or not math.isfinite(duration) or duration < 0):
            warnings.append(f"Command {i}: Invalid duration value, using default {DEFAULT_DURATION_S}")
            duration = DEFAULT_DURATION_S
        unknown = sorted(set(item) - {"keystrokes", "duration"})
        if unknown:
            warnings.append(f"Command {i}: Unknown fields: {', '.join(unknown)}")
        if i < len(raw) and keys and not keys.endswith("\n"):
            warnings.append(f"Command {i} should end with newline when followed by another command. "
                            "Otherwise the two commands will be concatenated together on the same line.")
        out.append(Command(keystrokes=keys, duration=float(duration)))
    return out


def _is_true(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_WORDS
    return value is True


def parse_reply(text: str) -> Reply:
    """The reply as a `Reply` (with its warnings), or ReplyError saying what was wrong."""
    warnings: list[str] = []
    data = _load_object(text or "", warnings)
    if not isinstance(data, dict):
        raise ReplyError("Response must be a JSON object", warnings)
    missing = [f for f in REQUIRED_FIELDS if f not in data]
    if missing:
        raise ReplyError(f"Missing required fields: {', '.join(missing)}", warnings)
    texts = {}
    for name in ("analysis", "plan"):
        value = data[name]
        if not isinstance(value, str):
            warnings.append(f"Field '{name}' should be a string")
            value = json.dumps(value) if value is not None else ""
        texts[name] = value
    complete = _is_true(data.get("task_complete", False))
    try:
        commands = _commands(data["commands"], warnings)
    except ReplyError as exc:
        if not complete:
            raise
        warnings.append(str(exc))
        commands = []
    return Reply(analysis=texts["analysis"], plan=texts["plan"], commands=commands,
                 task_complete=complete, warnings=warnings)
