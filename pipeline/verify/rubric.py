"""Static rubric: tests follow the instruction, the instruction keeps the solution to itself,
and nothing of the solution or the tests is reachable inside the environment.

Checks (each problem names the file and what is wrong):
- every `test_*` function carries a docstring that is a sentence of instruction.md;
- every numbered requirement of instruction.md is the docstring of at least one test (or one of
  its sentences is): a requirement no test checks is an untested promise;
- every `/app/...` path a test names appears in instruction.md (the agent is told where);
- no line of solve.sh (30+ characters) and no 10-word run of it appears in the instruction;
- environment/ holds no file of solution/ or tests/, and no file named like one.

Reported, not failed (`unchecked_inputs`): files the environment ships that test code reads (open,
Path(...).read_*, a copy, a table or line reader) without their sha256 in the tests — ground truth
an agent could edit. Whether such an edit pays is what the red-team probe's trivial-inputs attack
finds out, with the task's own tests; a static rule cannot tell a read of ground truth from one of
a file the task is meant to change.
"""
from __future__ import annotations

import ast
import hashlib
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


_REQUIREMENT = re.compile(r"^\s*\d+[.)]\s+(.*)$")
# Calls that read the file named by their first argument; Path(x) counts only with a reading method.
_READERS = {"open", "read_text", "read_bytes", "read_lines", "read_table", "copy", "copyfile", "copy2", "cmp",
            "parse", "connect", "executescript"}
_PATH_READS = {"read_text", "read_bytes", "open"}
_WRITE_MODES = ("w", "a", "x")


def requirements(text: str) -> list[str]:
    """The numbered requirements of an instruction, markdown stripped."""
    return [m.group(1).replace("**", "").replace("`", "").strip() for line in text.splitlines()
            if (m := _REQUIREMENT.match(line))]


def untested_requirements(instruction: str, docstrings: list[str]) -> list[str]:
    """Requirements no test docstring quotes (the whole line, or one of its sentences)."""
    docs = {_norm(d) for d in docstrings}
    out = []
    for req in requirements(instruction):
        sentences = {_norm(req)} | {_norm(s) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", req)}
        if not sentences & docs:
            out.append(req)
    return out


def shipped_files(bundle: TaskBundle) -> dict[str, bytes]:
    """Container path -> bytes of each environment file the Dockerfile COPYs (or ADDs) in."""
    copies = re.findall(r"(?im)^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*(\S+)\s+(\S+)\s*$",
                        bundle.files.get("environment/Dockerfile", b"").decode("utf-8", "replace"))
    out = {}
    for path, data in bundle.files.items():
        rel = path[len("environment/"):] if path.startswith("environment/") else None
        if rel is None or rel == "Dockerfile":
            continue
        for src, dst in copies:
            src = src.rstrip("/").removeprefix("./")
            if src in (".", "") or rel == src or rel.startswith(src + "/"):
                tail = rel if src in (".", "") else rel[len(src):].lstrip("/")
                out[(dst.rstrip("/") + "/" + tail) if tail else dst] = data
    return out


def read_paths(source: str) -> set[str]:
    """String constants handed to a reading call in test code (docstrings are no code)."""
    try:
        tree = python_source.parse(source)
    except (SyntaxError, RecursionError, ValueError):
        return set()
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        inner = node.func.value if isinstance(node.func, ast.Attribute) else None
        if isinstance(inner, ast.Call) and getattr(inner.func, "id", getattr(inner.func, "attr", "")) == "Path":
            if name in _PATH_READS and not _writes(node, mode_at=0):       # Path('/app/x').read_bytes()
                out |= _first_string(inner)
        elif name in _READERS and not (name == "open" and _writes(node)):
            out |= _first_string(node)
    return out


def _first_string(call: ast.Call) -> set[str]:
    return {a.value for a in call.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)}


def _writes(call: ast.Call, mode_at: int = 1) -> bool:
    """An open() (its mode the second argument) or Path(...).open() (the first) whose mode writes."""
    modes = [a for a in call.args[mode_at:mode_at + 1]] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and any(w in str(m.value) for w in _WRITE_MODES) for m in modes)


def unchecked_inputs(bundle: TaskBundle, tests: dict[str, str]) -> list[str]:
    """Shipped files that test code reads without their sha256 anywhere in the tests."""
    shipped = shipped_files(bundle)
    text = "\n".join(tests.values())
    reads = set().union(*(read_paths(src) for src in tests.values())) if tests else set()
    return sorted(p for p in reads & set(shipped) if hashlib.sha256(shipped[p]).hexdigest() not in text)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_./-]+", text.lower())


def check_rubric(bundle: TaskBundle) -> CheckResult:
    problems: list[str] = []
    instruction = bundle.text("instruction.md")
    plain = instruction.replace("`", "").replace("**", "")
    sentences = instruction_sentences(instruction)
    n_tests = 0
    mapped = []
    docstrings: list[str] = []
    test_sources = {p: bundle.text(p) for p in sorted(bundle.files) if p.startswith("tests/") and p.endswith(".py")
                    and not p.startswith(SKILL_REF_DIR)}   # a shipped skill's code, not this task's tests
    for path, source in test_sources.items():
        for name, doc, body in _test_functions(source, path, problems):
            n_tests += 1
            docstrings += [doc] if doc else []
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
    else:
        for req in untested_requirements(instruction, docstrings):
            problems.append(f"tests/: no test checks the requirement {req[:100]!r} of instruction.md "
                            "(no test's docstring quotes it)")
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
                       details=CheckDetails(problems=problems, test_count=n_tests, mapped=mapped,
                                            unchecked_inputs=unchecked_inputs(bundle, test_sources)))
