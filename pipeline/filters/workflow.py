"""A skill must describe a workflow: at least two concrete steps, or — a CLI reference — at
least two concrete commands that invoke a program with real arguments."""
from __future__ import annotations

import re

from pipeline.filters.base import RuleResult
from pipeline.ingest.shell_commands import ShellCommand, shell_commands
from workbench.models import Outcome, ParsedSkill

MIN_STEPS = 2
MIN_COMMANDS = 2


def skill_commands(skill: ParsedSkill) -> list[ShellCommand]:
    """The skill's commands; the programs it declares and the tool its name names are known."""
    name = skill.name.lower()
    own = {name, *(w for w in re.split(r"[^a-z0-9_.+-]+", name) if len(w) >= 3)}
    return shell_commands(skill.raw_text, known=set(skill.bins) | own)


def concrete_commands(commands: list[ShellCommand]) -> list[ShellCommand]:
    """Distinct commands that do real work (set-up, --help and placeholders left out)."""
    seen: dict[str, ShellCommand] = {}
    for c in commands:
        if c.concrete and c.text not in seen:
            seen[c.text] = c
    return list(seen.values())


def _programs(commands: list[ShellCommand], limit: int = 5) -> str:
    names: list[str] = []
    for c in commands:
        if c.program not in names:
            names.append(c.program)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def structured_steps(skill: ParsedSkill) -> RuleResult:
    n = len(skill.steps)
    commands = skill_commands(skill)
    concrete = concrete_commands(commands)
    if n >= MIN_STEPS:
        return RuleResult("workflow.steps", Outcome.PASS,
                          f"{n} steps, first: {skill.steps[0][:120]}; {len(concrete)} concrete command(s)")
    if len(concrete) >= MIN_COMMANDS:
        first = concrete[0]
        return RuleResult("workflow.steps", Outcome.PASS,
                          f"a CLI reference: {len(concrete)} concrete commands of {_programs(concrete)} "
                          f"(no step list) — first, line {first.line}: {first.text[:120]}",
                          f"SKILL.md:{first.line}")
    setup = [c for c in commands if c.setup]
    found = f"found {n} workflow step(s) and {len(concrete)} concrete command(s)"
    if concrete:
        found += f" (line {concrete[0].line}: {concrete[0].text[:80]})"
    if setup:
        found += f"; only install/set-up lines besides (line {setup[0].line}: {setup[0].text[:80]})"
    return RuleResult("workflow.steps", Outcome.FAIL,
                      f"{found}; needs a numbered list or step headings with at least {MIN_STEPS} "
                      f"steps, or at least {MIN_COMMANDS} commands that run a program with real arguments",
                      "SKILL.md body")


RULES = (structured_steps,)
