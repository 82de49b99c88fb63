"""How many of a workspace's accepted skills an exercise step can serve, by kind (the skill's bundled
script, or a documented command of the tool it is about), and why not the rest."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pipeline.synth.exercise.package import read_package
from pipeline.synth.exercise.command_plan import CommandPlan
from pipeline.synth.exercise.plan import ExercisePlan, exercise_plan
from pipeline.synth.skill_fit import parts_from_skill
from workbench.store.connection import Database

# Why a documented command of a tool the image has runs on no sample file (the first command's reason).
COMMAND_CLASSES = (
    ("command: works on machine state (repository, files, processes)", r"on the machine's own state"),
    ("command: talks to the network", r"talks to the network"),
    ("command: random or clock", r"random values or reads the clock"),
    ("command: shell variables, heredocs, background", r"shell variables|heredoc|background|assignment"),
    ("command: placeholder a task cannot fill", r"placeholder|names no (database )?file|unnamed place"),
    ("command: a folder or path of the author's machine", r"folder|author's machine"),
    ("command: a file type no sample can stand for", r"a file of a type a task cannot make"),
    ("command: reads no input file", r"reads no input file"),
    ("command: edits in place or writes unnamed files", r"in place|beside its input|besides its result"),
    ("command: SQL that writes, or runs other commands", r"changes the database|SQL it reads from its input|"
                                                         r"shell command \.|extra commands"),
    ("command: answer does not depend on the input", r"reads a setting, not the data"),
    ("command: a program no sample can feed", r"no sample file can feed|not in the base image|Python code|needs keys"),
    ("command: no sample fits the command", r"no sample|fits the command"),
    ("command: not a command line", r"does not run|too long|several lines|several file patterns"),
    ("command: program read from a file", r"reads its program from a file"),
    ("command: discards its output (exit status only)", r"discards what it prints"),
)
# Reasons grouped for a table: the first pattern a reason matches names its class.
CLASSES = (
    ("commands of a tool the image lacks", r"^documents commands of .*not in the base image"),
    ("examples run tools the image lacks", r"^its SKILL\.md runs no bundled script and its examples run"),
    ("examples run only generic tools", r"^its SKILL\.md runs no bundled script; its examples run only"),
    ("no command at all", r"^its SKILL\.md runs no bundled script and shows no command"),
    ("package files not available", r"^its SKILL\.md runs a bundled script, but"),
    ("script not in the package", r": not in the package"),
    ("needs Python packages", r"imports .*: not in the base image"),
    ("needs a program the image lacks", r"runs .*: not in the base image|script: the base image has no"),
    ("talks to the network", r"talks to the network"),
    ("interactive", r"interactively"),
    ("output differs per run", r"differs on every run"),
    ("documented call takes no input file", r"reads no input file"),
    ("placeholder a task cannot fill", r"placeholder|names no file|folder or an unnamed"),
    ("a folder or path of the author's machine", r"folder or a path on the author's machine"),
    ("a file type no sample can stand for", r"a file of a type a task cannot make"),
    ("works on machine state (repository, services)", r"on the machine's own state"),
    ("no sample input in the package", r"has no \.\w+ file to build"),
    ("documented call is --help or multi-line", r"--help|several lines|does not run the script"),
)


_NO_COMMAND = "none runs on a sample file: "


def reason_class(reason: str) -> str:
    first = reason.split("; ")[0]
    if _NO_COMMAND in reason and (first.startswith("documents commands of") or not reason.startswith("documents")):
        why = reason.split(_NO_COMMAND, 1)[1].split("; ")[0].split(" command: ", 1)[-1]
        return next((name for name, pat in COMMAND_CLASSES if re.search(pat, why)), "command: other")
    if first.startswith("documents commands of"):   # "documents commands of X; X not in the base image"
        first = reason
    return next((name for name, pat in CLASSES if re.search(pat, first)), "other")


@dataclass
class ExerciseCoverage:
    skills: int = 0
    served: list[str] = field(default_factory=list)              # skill names
    by_kind: Counter = field(default_factory=Counter)            # "script" | "command" -> skills served
    reasons: Counter = field(default_factory=Counter)            # class -> skills
    examples: dict[str, list[str]] = field(default_factory=dict)  # class -> "skill: reason" (a few)

    @property
    def share(self) -> float:
        return len(self.served) / self.skills if self.skills else 0.0


def exercise_coverage(db: Database, statuses: tuple[str, ...] = ("accepted",)) -> ExerciseCoverage:
    with db.read() as con:
        rows = con.execute(
            """SELECT id, name, coalesce(description, ''), coalesce(raw_text, ''), coalesce(bins, []),
                      coalesce(tools, []), coalesce(source_path, ''), coalesce(package_files, [])
               FROM skills_effective WHERE is_current AND status IN (SELECT unnest(?::VARCHAR[]))
               ORDER BY name, id""", [list(statuses)]).fetchall()
    out = ExerciseCoverage(skills=len(rows))
    for sid, name, desc, body, bins, tools, source, files in rows:
        parts = parts_from_skill(body, bins=list(bins), tools=list(tools))
        pkg = read_package(source, list(files), body, name=name, skill_id=sid) if source else None
        got = exercise_plan(sid, name, desc, body, tuple(parts.tools), pkg)
        if isinstance(got, (ExercisePlan, CommandPlan)):
            out.served.append(name)
            out.by_kind["script" if isinstance(got, ExercisePlan) else "command"] += 1
            continue
        cls = reason_class(got)
        out.reasons[cls] += 1
        ex = out.examples.setdefault(cls, [])
        if len(ex) < 3:
            ex.append(f"{name}: {got[:160]}")
    return out
