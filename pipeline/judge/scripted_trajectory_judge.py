"""A scripted trajectory judge for tests and the demo (no API key): replay-server rules that
answer the `trajectory_judge` stage by a fixed rule. It is a TEST DOUBLE, not an LLM; every
report made with it says so (`NOTE`), and its model is named for what it is.

The rule: a test that fails in every rollout and checks a path under /app that the
instruction never names is a design flaw (no agent could know it); anything else is too
hard. Its quotes are copied from the prompt's own blocks, as a real judge's must be.
"""
from __future__ import annotations

import re

from workbench.llm.replay_server import Rule

MODEL = "scripted-trajectory-judge"
NOTE = ("the trajectory judge is a TEST DOUBLE (scripted rules on a replay server: design flaw when a "
        "consistently failing test checks a path the instruction never names, else too hard), not an LLM")
_BLOCK = {name: re.compile(rf"<{name}>\n(.*?)\n</{name}>", re.S)
          for name in ("instruction_md", "tests", "failing_tests", "terminal")}
_PATH = re.compile(r"/app/[\w.\-/]+")


def _blocks(text: str) -> dict[str, str]:
    return {name: (m.group(1) if (m := rx.search(text)) else "") for name, rx in _BLOCK.items()}


def _test_source(tests: str, name: str) -> list[str]:
    """The lines of test function `name` (up to the next top-level def or file marker)."""
    lines, out, inside = tests.splitlines(), [], False
    for line in lines:
        if re.match(rf"\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", line):
            inside = True
        elif inside and (re.match(r"(?:async\s+)?def\s|# file: ", line)):
            break
        if inside:
            out.append(line)
    return out


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("[...")), "")


def judge_reply(body: dict) -> dict:
    """The scripted judge's answer to one request body (OpenAI chat format)."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    b = _blocks(text)
    consistent = re.search(r"^consistent: (.*)$", b["failing_tests"], re.M)
    names = [] if not consistent or consistent.group(1) == "(none)" else \
        [n.strip() for n in consistent.group(1).split(",") if n.strip()]
    for name in (n.split("::")[-1] for n in names):       # "test_outputs.py::test_sum" -> test_sum
        for line in _test_source(b["tests"], name):
            for path in _PATH.findall(line):
                if path.rstrip(".") not in b["instruction_md"]:
                    return {"verdict": "design_flaw",
                            "reason": f"{name} fails in every rollout and checks {path}, which the instruction "
                                      "never names: no agent could know it.",
                            "evidence": [{"source": "tests", "quote": line.strip()}],
                            "flawed_tests": [name]}
    evidence = [{"source": "instruction", "quote": _first_line(b["instruction_md"]) or "(empty)"}]
    if last := _first_line("\n".join(reversed(b["terminal"].splitlines()))):
        evidence.append({"source": "terminal", "quote": last})
    return {"verdict": "too_hard",
            "reason": "Every test the rollouts failed checks something the instruction asks for; "
                      "the agents did not get the work right.",
            "evidence": evidence, "flawed_tests": []}


def scripted_judge_rules() -> list[Rule]:
    return [Rule(match="Stage: trajectory_judge.", reply=judge_reply)]
