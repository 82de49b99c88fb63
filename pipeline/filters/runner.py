"""Run every filter rule over skills and collect verdicts with their evidence."""
from __future__ import annotations

from collections.abc import Iterable

from pipeline.filters import bundled_code, executable, external, near_duplicate, outside_kinds, safety, workflow
from pipeline.filters.base import RuleResult
from workbench.models import FilterVerdict, ParsedSkill

PER_SKILL_RULES = (executable.RULES + external.RULES + bundled_code.RULES + outside_kinds.RULES + workflow.RULES
                   + safety.RULES)
RULE_NAMES = tuple(sorted([r.__name__ for r in PER_SKILL_RULES]))


def check_skill(skill_id: str, skill: ParsedSkill) -> list[FilterVerdict]:
    out = []
    for rule in PER_SKILL_RULES:
        try:
            res: RuleResult = rule(skill)
        except Exception as exc:  # one broken rule must not hide the others
            res = RuleResult(f"error.{rule.__name__}", "warn", f"rule crashed: {exc!r}")
        out.append(FilterVerdict(skill_id=skill_id, rule=res.rule, outcome=res.outcome,
                                 evidence=res.evidence, location=res.location))
    return out


def dedup_text(skill: ParsedSkill) -> str:
    return "\n".join([skill.description, *skill.steps, *skill.inputs, *skill.outputs,
                      skill.raw_text.split("---", 2)[-1]])


def check_duplicates(skills: Iterable[tuple[str, ParsedSkill, tuple]]) -> list[FilterVerdict]:
    items = [near_duplicate.DedupItem(sid, f"'{s.name}' ({s.skill_key})", dedup_text(s), order, s.skill_key)
             for sid, s, order in skills]
    results = near_duplicate.find_near_duplicates(items)
    return [FilterVerdict(skill_id=sid, rule=r.rule, outcome=r.outcome, evidence=r.evidence,
                          location=r.location) for sid, r in results.items()]
