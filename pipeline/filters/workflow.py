"""A skill must describe a structured workflow: at least two concrete steps."""
from __future__ import annotations

from pipeline.filters.base import RuleResult, passed
from workbench.models import Outcome, ParsedSkill

MIN_STEPS = 2


def structured_steps(skill: ParsedSkill) -> RuleResult:
    n = len(skill.steps)
    if n >= MIN_STEPS:
        return passed("workflow.steps", f"{n} steps, first: {skill.steps[0][:120]}")
    return RuleResult("workflow.steps", Outcome.FAIL,
                      f"found {n} workflow step(s); needs a numbered list or step headings "
                      f"with at least {MIN_STEPS} steps", "SKILL.md body")


RULES = (structured_steps,)
