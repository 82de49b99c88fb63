"""Scripted Terminus-2 models for the local replay server: a test double shipped with the
package (the tests, the benchmark and `workbench rollout --replay` use it; never a real run).

`scripted_terminus_rules(tasks, behaviour)` is a list of replay-server Rules that answer every
Terminus-2 request, ours or Harbor's (both prompts say "solving command-line tasks"). A rule
reads the whole conversation from the request, so it keeps no state: the turn is the number of
replies so far, and a confirmation question is answered by confirming.

`tasks` maps a text that identifies a task in the first user message — its instruction (see
`solutions_by_instruction`) or any part unique to it — to the task's solve.sh. The longest
matching key wins. Behaviours:
- `oracle`: looks around, then runs solve.sh one step per turn (our bundles mark steps with
  `# --- step N (...) ---`; a script without markers is one step), then marks the task complete
  and confirms.
- `early_complete`: marks the task complete before doing anything; after the confirmation
  question it does the oracle's work, then completes and confirms.
- `malformed`: never sends a reply the parser accepts (prose, broken JSON, missing fields).
- `never_completes`: runs a harmless half-second command every turn and never marks the task
  complete.
- `floods`: prints tens of megabytes to the terminal, then completes and confirms.
"""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping

from pipeline.agents.terminus2.messages import CONFIRM_QUESTION
from workbench.llm.replay_server import Rule

REPLAY_MODEL = "scripted-terminus"
BEHAVIOURS = ("oracle", "early_complete", "malformed", "never_completes", "floods")


def replay_model(behaviour: str) -> str:
    """The model name a replay run is stored under: one per behaviour, so pages never merge a
    scripted model that solves with one that never completes, and it reads as no LLM."""
    return f"{REPLAY_MODEL}:{behaviour} (test double)"

MATCH = "solving command-line tasks"
STEP_WAIT_S = 15.0            # asked per solution step; the terminal returns once the shell is idle
_STEP_MARKER = re.compile(r"^# --- step \d+ .*---\s*$", re.M)
_WORKDIR = "/tmp/scripted-oracle"
_FLOODS = ("seq 1 3000000\n", "yes 'All work and no play makes Jack a dull boy' | head -c 20000000\n")


def solutions_by_instruction(bundles: Iterable) -> dict[str, str]:
    """{instruction text: solve.sh} for TaskBundles: the `tasks` argument for these rules."""
    return {b.text("instruction.md").strip(): b.text("solution/solve.sh") for b in bundles}


def solution_steps(solve_sh: str) -> list[str]:
    """solve.sh as scripts to run one after another: the lines before the first step marker
    (shebang, `set -e…`, `cd`) then each step's lines."""
    marks = [m.start() for m in _STEP_MARKER.finditer(solve_sh)]
    if not marks:
        return [solve_sh]
    head = solve_sh[:marks[0]]
    bounds = marks + [len(solve_sh)]
    return [head + solve_sh[a:b] for a, b in zip(bounds, bounds[1:])]


def step_keystrokes(k: int, script: str) -> str:
    """Write step k's script to a file and run it with bash. The script travels as base64 on
    one line: typed into an interactive bash as a here-document, its Tabs would complete and
    its `!` expand."""
    blob = base64.b64encode(script.encode()).decode()
    path = f"{_WORKDIR}/step{k}.sh"
    return (f"mkdir -p {_WORKDIR} && echo {blob} | base64 -d > {path}\n"
            f"bash {path}; echo \"step {k} exit $?\"\n")


def _reply(analysis: str, plan: str, commands: list[tuple[str, float]], complete: bool = False) -> dict:
    return {"analysis": analysis, "plan": plan,
            "commands": [{"keystrokes": k, "duration": d} for k, d in commands], "task_complete": complete}


def _conversation(body: dict) -> tuple[str, int, str]:
    """(first user message, replies so far, last user message) of a request."""
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    text = [m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in msgs]
    users = [t for m, t in zip(msgs, text) if m.get("role") == "user"]
    replies = sum(1 for m in msgs if m.get("role") == "assistant")
    return (users[0] if users else ""), replies, (users[-1] if users else "")


def _find(tasks: Mapping[str, str], first_user: str) -> str | None:
    hits = [k for k in tasks if k.strip() and k.strip() in first_user]
    return tasks[max(hits, key=len)] if hits else None


def _oracle_turn(steps: list[str], n: int) -> dict:
    """The oracle's n-th move (0: look around; 1..len: the steps; after: complete)."""
    if n == 0:
        return _reply("A fresh shell; nothing has been done yet.", "Look at the working directory first.",
                      [("pwd && ls\n", 0.1)])
    if n <= len(steps):
        return _reply(f"Step {n - 1} is done." if n > 1 else "The task's files are in place.",
                      f"Run step {n} of {len(steps)} of the solution as a script:\n{steps[n - 1]}",
                      [(step_keystrokes(n, steps[n - 1]), STEP_WAIT_S)])
    return _reply("Every step of the solution has run.", "Mark the task complete.", [], complete=True)


def _behave(behaviour: str, tasks: Mapping[str, str], body: dict) -> dict | str:
    first, n, last = _conversation(body)
    asked = CONFIRM_QUESTION in last
    if behaviour == "malformed":
        return ("I will list the files now: ls -la",                         # no JSON at all
                '{"analysis": "broken", "plan": "x", "commands": [',          # cut off mid-array
                '{"analysis": "fields missing"}')[n % 3]
    if behaviour == "never_completes":
        return _reply(f"Still checking (turn {n + 1}).", "Keep looking.",
                      [(f"sleep 0.5; echo still working {n + 1}\n", 1.0)])
    if behaviour == "floods":
        if asked:
            return _reply("The output was long.", "Confirm.", [], complete=True)
        if n < len(_FLOODS):
            return _reply("Print a lot.", "Flood the terminal.", [(_FLOODS[n], 5.0)])
        return _reply("Done printing.", "Mark the task complete.", [], complete=True)
    solve = _find(tasks, first)
    if solve is None:
        return _reply("The scripted model knows no solution for this task.", "Give up.", [], complete=True)
    steps = solution_steps(solve)
    if behaviour == "early_complete":
        if n == 0:
            return _reply("This looks finished already.", "Mark the task complete.", [], complete=True)
        if asked and n == 1:
            return _reply("On second thought nothing is done yet.", "Do the work first.", [("pwd && ls\n", 0.1)])
        n -= 1                              # from here on, the oracle one turn late
    if asked:
        return _reply("The solution ran and the terminal shows no error.", "Confirm completion.", [], complete=True)
    return _oracle_turn(steps, n)


def scripted_terminus_rules(tasks: Mapping[str, str], behaviour: str = "oracle") -> list[Rule]:
    """Replay-server rules playing a Terminus-2 model with `behaviour` (one of BEHAVIOURS)."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"scripted terminus-2 behaviour {behaviour!r}: choose one of {', '.join(BEHAVIOURS)}")
    tasks = dict(tasks)
    return [Rule(match=MATCH, reply=lambda body: _behave(behaviour, tasks, body))]
