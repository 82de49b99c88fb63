"""One rollout's ATIF trajectory as turns for a viewer: per agent step the analysis, plan,
keystrokes (or a scripted agent's command), other tool calls and the terminal output, next to
the tests the rollout failed.

Files come from anywhere (an agent, a Harbor job someone imported, a hand edit), so nothing is
trusted: the file is read with a size cap, every field is read defensively from the JSON (a
document our ATIF models reject is still shown as far as it reads, with the models' complaint
as a warning), texts are cut to a bounded length (head and tail kept) and at most MAX_TURNS
turns are kept. A file that cannot be shown at all gives a view with `error` set — what was
wrong and where — and no turns. Pure: no Streamlit.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.failures import rollout_tests
from pipeline.trajectories.atif import TrajectoryError, read_trajectory

MAX_FILE_BYTES = 32 * 1024 * 1024   # a page reads at most this much of a trajectory
MAX_TURNS = 300                     # steps shown; the rest are counted in `omitted`
MAX_TEXT = 12_000                   # characters per text shown (head + tail)
# Terminus-2's two text fields, as Harbor's agent joins them into a step's message.
_SECTION = re.compile(r"^(Analysis|Plan):[ \t]*", re.MULTILINE)
KEYSTROKE_TOOLS = ("bash_command",)          # Terminus-2: {keystrokes, duration}
COMMAND_TOOLS = ("bash", "shell", "run")      # scripted agents: {command}
COMPLETE_TOOLS = ("mark_task_complete",)


def capped(text: str, limit: int = MAX_TEXT) -> str:
    """`text` whole when short, else its head and tail with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half:,} characters cut …]\n{text[-half:]}"


def _text(value: Any) -> str:
    """A message or content: a string, or ATIF's list of content parts (text parts joined, other
    parts named)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, dict) and p.get("type") == "text":
                parts.append(str(p.get("text") or ""))
            elif isinstance(p, dict):
                parts.append(f"[{p.get('type', 'part')}: {(p.get('source') or {}).get('path', '')}]")
            else:
                parts.append(str(p))
        return "\n".join(parts)
    return json.dumps(value, default=str) if isinstance(value, dict) else str(value)


@dataclass
class Keystrokes:
    text: str
    duration: float | None = None


@dataclass
class Turn:
    step_id: int
    source: str                      # system | user | agent
    message: str = ""                # what is left of the message once analysis and plan are taken out
    analysis: str = ""
    plan: str = ""
    reasoning: str = ""
    keystrokes: list[Keystrokes] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)     # other tool calls, as "name {args}"
    task_complete: bool = False
    output: str = ""                 # the observation (terminal output, a parse error's feedback)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    scripted: bool = False           # llm_call_count == 0: a deterministic step, no model


@dataclass
class TrajectoryView:
    agent: str = ""
    model: str | None = None
    turns: list[Turn] = field(default_factory=list)
    omitted: int = 0                 # steps past MAX_TURNS
    notes: str = ""
    error: str | None = None         # the file could not be shown at all: why
    warnings: list[str] = field(default_factory=list)
    failed_tests: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["test_name", "outcome",
                                                                                      "message"]))

    @property
    def agent_turns(self) -> int:
        return sum(t.source == "agent" for t in self.turns)


def _split_message(message: str) -> tuple[str, str, str]:
    """(analysis, plan, rest) of a Terminus-2 message: 'Analysis: …\\nPlan: …' as Harbor writes it,
    or the raw JSON reply ({analysis, plan, …}); anything else is all rest."""
    stripped = message.strip()
    if stripped.startswith("{"):
        try:
            reply = json.loads(stripped)
        except ValueError:
            reply = None
        if isinstance(reply, dict) and ("analysis" in reply or "plan" in reply):
            return _text(reply.get("analysis")), _text(reply.get("plan")), ""
    marks = list(_SECTION.finditer(message))
    if not marks or marks[0].start() != 0:
        return "", "", message
    found = {"Analysis": "", "Plan": ""}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(message)
        found[m.group(1)] = message[m.end():end].strip()
    return found["Analysis"], found["Plan"], ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _turn(step: dict, index: int) -> Turn:
    source = str(step.get("source") or "?")
    sid = step.get("step_id")
    turn = Turn(step_id=int(sid) if isinstance(sid, int) else index + 1, source=source)
    message = _text(step.get("message"))
    extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
    if source == "agent":
        turn.analysis, turn.plan, turn.message = _split_message(message)
        if extra.get("analysis") is not None or extra.get("plan") is not None:
            # our terminus-2 keeps the reply's fields whole in extra (the message has them joined)
            turn.analysis, turn.plan = _text(extra.get("analysis")), _text(extra.get("plan"))
    else:
        turn.message = message
    turn.reasoning = _text(step.get("reasoning_content"))
    turn.scripted = step.get("llm_call_count") == 0
    for call in step.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        name = str(call.get("function_name") or "?")
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        if name in KEYSTROKE_TOOLS and "keystrokes" in args:
            turn.keystrokes.append(Keystrokes(capped(_text(args.get("keystrokes"))), _number(args.get("duration"))))
        elif name in COMMAND_TOOLS and "command" in args:
            turn.keystrokes.append(Keystrokes(capped(_text(args.get("command")))))
        elif name in COMPLETE_TOOLS:
            turn.task_complete = True
        else:
            turn.calls.append(capped(f"{name} {json.dumps(args, default=str)}", 2000))
    obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
    results = obs.get("results") if isinstance(obs.get("results"), list) else []
    turn.output = "\n".join(_text(r.get("content")) for r in results if isinstance(r, dict))
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    turn.prompt_tokens = metrics.get("prompt_tokens") if isinstance(metrics.get("prompt_tokens"), int) else None
    turn.completion_tokens = (metrics.get("completion_tokens")
                              if isinstance(metrics.get("completion_tokens"), int) else None)
    turn.cost_usd = _number(metrics.get("cost_usd"))
    for name in ("message", "analysis", "plan", "reasoning", "output"):
        setattr(turn, name, capped(getattr(turn, name)))
    return turn


def view_document(doc: Any, tests: pd.DataFrame | None = None, rollout_id: str | None = None,
                  name: str = "trajectory") -> TrajectoryView:
    """The view of a parsed JSON document (see the module docstring)."""
    view = TrajectoryView()
    if tests is not None and rollout_id is not None:
        mine = rollout_tests(tests, rollout_id)
        view.failed_tests = mine[mine["outcome"].isin(("failed", "error"))].reset_index(drop=True)
    if not isinstance(doc, dict):
        view.error = f"{name}: a trajectory is a JSON object, this is {type(doc).__name__}"
        return view
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        view.error = f"{name}: no steps (ATIF keeps the turns in a non-empty 'steps' list)"
        return view
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    view.agent = " ".join(str(agent[k]) for k in ("name", "version") if agent.get(k))
    view.model = str(agent["model_name"]) if agent.get("model_name") else None
    view.notes = capped(_text(doc.get("notes")), 4000)
    bad = sum(not isinstance(s, dict) for s in steps)
    if bad:
        view.warnings.append(f"{name}: {bad} step(s) are not JSON objects and are left out")
    kept = [s for s in steps if isinstance(s, dict)]
    view.turns = [_turn(s, i) for i, s in enumerate(kept[:MAX_TURNS])]
    view.omitted = max(0, len(kept) - MAX_TURNS)
    return view


def load_view(path: Path, tests: pd.DataFrame | None = None, rollout_id: str | None = None,
              name: str | None = None) -> TrajectoryView:
    """The view of a trajectory file. `name` is how messages call the file (default: its path)."""
    name = name or str(path)
    empty = view_document({}, tests, rollout_id, name)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        empty.error = f"{name}: no such file (the rollout wrote no trajectory)"
        return empty
    except OSError as e:
        empty.error = f"{name}: cannot read ({e.strerror or e})"
        return empty
    if size > MAX_FILE_BYTES:
        empty.error = f"{name}: {size:,} bytes, over the viewer's {MAX_FILE_BYTES:,}-byte cap (download it instead)"
        return empty
    try:
        data = path.read_bytes()
    except OSError as e:
        empty.error = f"{name}: cannot read ({e.strerror or e})"
        return empty
    try:
        read_trajectory(data)
        problem = None
    except TrajectoryError as e:
        problem = str(e).replace("<bytes>", name, 1)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        empty.error = problem or f"{name}: not a JSON document"
        return empty
    view = view_document(doc, tests, rollout_id, name)
    if problem and view.error is None:
        view.warnings.insert(0, f"{problem} — shown as far as it reads")
    return view
