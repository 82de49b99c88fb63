"""Which documented call of a skill's bundled script a task can make, or why none can.

For each script its SKILL.md runs (pipeline.synth.fidelity_rubric.teaching), in the order documented:
the script must be in the package, run offline in the base image (script_facts), be called with
arguments a task can fill (invocation) from sample data the package ships (inputs). The first that
passes is the plan. A skill with no such script call is tried as a command exercise (command_plan: a
documented command of the tool it is about, run on a sample file); otherwise the reasons of both, so a
path can say "no generator exercises <skill>: …".
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from pipeline.shell_syntax import simple_commands

from ..fidelity_rubric import documented_lines, teaching
from ..skill_fit import PLUMBING, canonical_tool
from .command_plan import CommandPlan, command_plan
from .inputs import NoSample, find_sample
from .invocation import Invocation, NotFillable, Slot, read_invocation
from .package import SkillPackage
from .script_facts import IMAGE_BINARIES, script_facts

_OUT_NAMES = re.compile(r"out|dest|result|report|target|save", re.I)


@dataclass(frozen=True)
class ExercisePlan:
    skill_id: str
    skill_name: str
    package: SkillPackage
    script: str                       # the script's path in the package
    language: str                     # python | shell
    invocation: Invocation
    samples: tuple[str, ...]          # per input slot, the package file it is built from
    purpose: str = ""                 # the script's own one-line description, when it has one


def _resolve(pkg: SkillPackage, script: str) -> str | None:
    names = pkg.names()
    rel = script.removeprefix("./")
    if rel in names:
        return rel
    base = rel.rsplit("/", 1)[-1]
    tail = [n for n in names if n == base or n.endswith("/" + base)]
    return sorted(tail, key=lambda n: (n.count("/"), n))[0] if tail else None


def _positional_names(source: str) -> list[str]:
    """argparse positionals in order: `add_argument("input")`, `add_argument("output_file")`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and not node.args[0].value.startswith("-"):
            out.append(node.args[0].value)
    return out


def _mark_outputs(inv: Invocation, source: str) -> Invocation:
    """A positional file argument the script itself calls an output (`output_file`) is one."""
    names = _positional_names(source)
    if not names:
        return inv
    slots, pos = [], 0
    for s in inv.slots:
        if s.kind in ("input", "output") and not (slots and slots[-1].kind == "literal" and slots[-1].text.startswith("-")):
            name = names[pos] if pos < len(names) else ""
            pos += 1
            if s.kind == "input" and _OUT_NAMES.search(name):
                s = Slot("output", s.text)
        slots.append(s)
    outputs = [s for s in slots if s.kind == "output"]
    if len(outputs) > 1:
        raise NotFillable("the documented call writes more than one output file")
    return Invocation(inv.script, inv.doc_line, tuple(slots), prints=not outputs)


def _purpose(source: str, language: str) -> str:
    text = ""
    if language == "python":
        try:
            tree = ast.parse(source)
            text = ast.get_docstring(tree) or ""
            if not text:
                for node in ast.walk(tree):
                    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "ArgumentParser":
                        for kw in node.keywords:
                            if kw.arg == "description" and isinstance(kw.value, ast.Constant):
                                text = str(kw.value.value)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            text = ""
    else:
        m = re.search(r"^#\s*(?!!)(.{12,})$", source, re.M)
        text = m.group(1) if m else ""
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", text.strip(), maxsplit=1)[0]
    first = re.sub(r"\s+", " ", first).strip().replace("`", "'").replace("\\", "/").replace('"""', "'")
    return first[:160] if len(first) >= 12 else ""


def exercise_plan(skill_id: str, skill_name: str, description: str, body: str, tools: tuple[str, ...],
                  package: SkillPackage | None) -> ExercisePlan | CommandPlan | str:
    """The plan for the skill's first fillable documented script call, else for its first documented
    command of the tool it is about that runs on a sample file (command_plan), or the reasons none is."""
    teach = teaching(body, skill_name, description, tools)
    if not teach.scripts:
        return command_plan(skill_id, skill_name, teach, package) if teach.commands else _no_teaching(body, tools)
    found = _script_plan(skill_id, skill_name, body, teach, package)
    if isinstance(found, ExercisePlan) or not teach.commands:
        return found
    # no script call a task can make: a documented command of the tool the skill is about may be
    by_command = command_plan(skill_id, skill_name, teach, package)
    return by_command if isinstance(by_command, CommandPlan) else f"{found}; {by_command}"


def _script_plan(skill_id: str, skill_name: str, body: str, teach, package: SkillPackage | None) -> ExercisePlan | str:
    if package is None or len(package.files) <= 1:
        why = package.note if package is not None and package.note else "the package's files are not available"
        return f"its SKILL.md runs a bundled script, but {why}"
    modules = frozenset(n.rsplit("/", 1)[-1][:-3] for n in package.names() if n.endswith(".py"))
    reasons: list[str] = []
    for script, line in teach.scripts.items():
        rel = _resolve(package, script)
        if rel is None:
            reasons.append(f"{script}: not in the package")
            continue
        source = package.text(rel) or ""
        facts = script_facts(rel, source, modules)
        if not facts.runnable:
            reasons.append(f"{rel}: {facts.problem}")
            continue
        try:
            inv = read_invocation(script, line, body)
            inv = Invocation(rel, inv.doc_line, inv.slots, inv.prints)
            inv = _mark_outputs(inv, source) if facts.language == "python" else inv
            samples, used = [], {rel}
            for slot in inv.inputs:
                sample = find_sample(package, slot.text, slot.ext, used)
                samples.append(sample)
                used.add(sample)
        except (NotFillable, NoSample) as exc:
            reasons.append(f"{rel}: {exc}")
            continue
        return ExercisePlan(skill_id, skill_name, package, rel, facts.language, inv, tuple(samples),
                            _purpose(source, facts.language))
    return "; ".join(dict.fromkeys(reasons))


def _no_teaching(body: str, tools: tuple[str, ...] = ()) -> str:
    """Why a skill with no script and no command of a tool it is about cannot be exercised, naming the
    programs its examples run when it has any (most often tools the base image does not have)."""
    progs: list[str] = []
    for line in documented_lines(body):
        for words in simple_commands(line):
            w = canonical_tool(words[0]) if words else ""
            if re.fullmatch(r"[a-z][a-z0-9_.+-]{1,30}", w) and w not in PLUMBING and w not in progs:
                progs.append(w)
    absent = [p for p in progs if p not in IMAGE_BINARIES]
    if absent:
        return (f"its SKILL.md runs no bundled script and its examples run {', '.join(absent[:4])}, not in the "
                "base image")
    if progs:
        return (f"its SKILL.md runs no bundled script; its examples run only {', '.join(progs[:4])}, none named "
                "as what the skill is about")
    named = [t for t in dict.fromkeys(canonical_tool(t) for t in tools) if t not in PLUMBING]
    absent_named = [t for t in named if t not in IMAGE_BINARIES]
    if absent_named:
        return (f"its SKILL.md runs no bundled script and shows no command at all; the tools it names "
                f"({', '.join(absent_named[:4])}) are not in the base image")
    return "its SKILL.md runs no bundled script and shows no command at all (prose or another language)"
