"""Static rubric: tests follow the instruction, the instruction keeps the solution to itself,
and nothing of the solution or the tests is reachable inside the environment.

Checks (each problem names the file and what is wrong):
- every `test_*` function carries a docstring that is a sentence of instruction.md;
- every `/app/...` path a test names appears in instruction.md (the agent is told where);
- no line of solve.sh (30+ characters) and no 10-word run of it appears in the instruction;
- environment/ holds no file of solution/ or tests/, and no file named like one.
"""
from __future__ import annotations

import ast
import re

from pipeline import python_source
from pipeline.synth.exercise.package import SKILL_REF_DIR
from workbench.models import CheckDetails, CheckResult
from workbench.sandbox.bundle import TaskBundle

_WS = re.compile(r"\s+")
_APP_PATH = re.compile(r"/app/[A-Za-z0-9_./-]+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().rstrip(".").lower()


def instruction_sentences(text: str) -> set[str]:
    """Sentences of the instruction, with list markers and markdown emphasis removed."""
    out: set[str] = set()
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).replace("**", "").replace("`", "")
        if not line.strip():
            continue
        out.add(_norm(line))
        for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`])", line):
            out.add(_norm(sent))
    return out


def _test_functions(source: str, where: str, problems: list[str]) -> list[tuple[str, str | None, str]]:
    try:
        tree = python_source.parse(source)
    except SyntaxError as exc:
        problems.append(f"{where}: not valid Python ({exc.msg} at line {exc.lineno})")
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append((node.name, ast.get_docstring(node), ast.get_source_segment(source, node) or ""))
    return found


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_./-]+", text.lower())


def check_rubric(bundle: TaskBundle) -> CheckResult:
    problems: list[str] = []
    instruction = bundle.text("instruction.md")
    plain = instruction.replace("`", "").replace("**", "")
    sentences = instruction_sentences(instruction)
    n_tests = 0
    mapped = []
    for path in sorted(p for p in bundle.files if p.startswith("tests/") and p.endswith(".py")
                       and not p.startswith(SKILL_REF_DIR)):   # a shipped skill's code, not this task's tests
        for name, doc, body in _test_functions(bundle.text(path), path, problems):
            n_tests += 1
            if not doc:
                problems.append(f"{path}::{name}: no docstring naming the instruction sentence it checks")
            elif _norm(doc) not in sentences:
                problems.append(f"{path}::{name}: docstring {doc[:80]!r} is not a sentence of instruction.md")
            else:
                mapped.append({"test": name, "sentence": doc.strip()})
            for app_path in set(_APP_PATH.findall(body)):
                if app_path.rstrip("/.") not in plain:
                    problems.append(f"{path}::{name}: reads {app_path}, which instruction.md never mentions")
    if n_tests == 0:
        problems.append("tests/: no pytest test functions found")
    solve = bundle.files.get("solution/solve.sh", b"").decode("utf-8", "replace")
    for line in solve.splitlines():
        s = line.strip()
        if len(s) >= 30 and not s.startswith("#") and s in instruction:
            problems.append(f"instruction.md gives away the solution: contains solve.sh line {s[:60]!r}")
    sw, iw = _words(solve), " " + " ".join(_words(instruction)) + " "
    for i in range(0, max(0, len(sw) - 9)):
        run = " ".join(sw[i:i + 10])
        if f" {run} " in iw:
            problems.append(f"instruction.md shares a 10-word run with solve.sh: {run[:80]!r}")
            break
    hidden = {p: c for p, c in bundle.files.items()
              if p.startswith(("solution/", "tests/")) and not p.startswith(SKILL_REF_DIR)}
    hidden_names = {p.rsplit("/", 1)[-1] for p in hidden} - {"__init__.py"}
    hidden_contents = {c for c in hidden.values() if len(c) >= 40}
    for p, c in bundle.files.items():
        if not p.startswith("environment/"):
            continue
        if p.rsplit("/", 1)[-1] in hidden_names:
            problems.append(f"{p}: has the name of a solution or test file")
        elif c in hidden_contents:
            problems.append(f"{p}: is a copy of a solution or test file")
    dockerfile = bundle.text("environment/Dockerfile")
    if re.search(r"(?im)^\s*(COPY|ADD)\s+.*\b(solution|tests)/", dockerfile):
        problems.append("environment/Dockerfile: copies solution/ or tests/ into the image")
    reason = "ok" if not problems else f"{len(problems)} rubric problem(s): {problems[0]}"
    # `tests` is kept for per-test outcomes of checks that run them; the rubric only counts.
    return CheckResult(name="rubric", passed=not problems, reason=reason, log="\n".join(problems),
                       details=CheckDetails(problems=problems, test_count=n_tests, mapped=mapped))
