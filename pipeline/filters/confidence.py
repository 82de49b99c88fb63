"""How sure a skill's curation verdict is, from the rules that decided it (0..1).

A rejection is as strong as the strongest rule that failed: a rule that quotes a concrete need
(a paid API's key, a GUI app, another OS, an unsafe command) is strong; a rule that judges the
text's shape (too few steps, words of people work, a hosted product named) is weaker, since a
fuller text or a reader could decide otherwise. Two or more independent failing rules add a
little. A skill left pending by a warning is the least sure (a person decides). An acceptance is
fairly sure, less so with warnings that did not stop it, or when the only evidence of terminal
work is thin. The judge's verdict (judge.llm) carries its own agreement in its evidence
(`confidence=0.8`), which is used where present.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from workbench.models import FilterVerdict, Outcome

# rule name (or family prefix) -> strength of a failure of that rule
STRENGTH: dict[str, float] = {
    "safety": 0.9, "executable.os": 0.9, "executable.gui": 0.85, "executable.paid_service": 0.85,
    "executable.binaries": 0.7, "needs.account": 0.8, "needs.api_key": 0.8, "needs.mcp": 0.85,
    "needs.wallet": 0.85, "needs.network_service": 0.75, "needs.saas": 0.65, "needs.device": 0.8,
    "needs.hosted_cli": 0.7, "needs.agent_runtime": 0.7, "code": 0.8, "workflow.not_terminal": 0.6,
    "workflow.steps": 0.55, "dedup": 0.8,
}
DEFAULT_FAIL, PENDING, ACCEPT = 0.6, 0.3, 0.75
_JUDGE = re.compile(r"confidence=([01](?:\.\d+)?)")


def rule_strength(rule: str) -> float:
    if rule in STRENGTH:
        return STRENGTH[rule]
    return STRENGTH.get(rule.split(".", 1)[0], DEFAULT_FAIL)


def _judge_confidence(evidence: str | None) -> float | None:
    m = _JUDGE.search(evidence or "")
    return float(m.group(1)) if m else None


def skill_confidence(verdicts: Iterable[FilterVerdict]) -> float:
    vs = list(verdicts)
    judged = [c for v in vs if v.rule == "judge.llm" and (c := _judge_confidence(v.evidence)) is not None]
    fails = [v for v in vs if str(v.outcome) == Outcome.FAIL and not v.rule.startswith("error.")]
    warns = [v for v in vs if str(v.outcome) == Outcome.WARN]
    if fails:
        if judged and all(v.rule == "judge.llm" for v in fails):
            return round(judged[0], 2)
        best = max(rule_strength(v.rule) for v in fails)
        families = {v.rule.split(".", 1)[0] for v in fails}
        return round(min(0.97, best + 0.05 * (len(families) - 1)), 2)
    if warns:
        return PENDING
    if judged:
        return round(judged[0], 2)
    return ACCEPT


BANDS = ((0.0, 0.5, "low"), (0.5, 0.75, "medium"), (0.75, 1.01, "high"))


def band_of(confidence: float | None) -> str:
    if confidence is None:
        return "unknown"
    return next(name for lo, hi, name in BANDS if lo <= confidence < hi)
