"""What a filter rule returns, and the line search every text rule shares."""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.filters.required_literals import line_index
from workbench.models import Outcome


@dataclass(frozen=True)
class RuleResult:
    rule: str
    outcome: Outcome
    evidence: str
    location: str | None = None


def passed(rule: str, evidence: str) -> RuleResult:
    return RuleResult(rule, Outcome.PASS, evidence)


def find_lines(text: str, patterns: list[re.Pattern[str]], limit: int = 3) -> list[tuple[int, str]]:
    """(1-based line number, stripped line) for lines matching any pattern. Only the lines that
    hold one of the patterns' required literals are searched (the others cannot match)."""
    index = line_index(text)
    hits: list[tuple[int, str]] = []
    for i in index.indices(tuple(patterns)):
        line = index.lines[i]
        if any(p.search(line) for p in patterns):
            hits.append((i + 1, line.strip()[:240]))
            if len(hits) >= limit:
                break
    return hits


def from_hits(rule: str, outcome: Outcome, what: str, hits: list[tuple[int, str]]) -> RuleResult:
    lines = "; ".join(f"line {n}: {t}" for n, t in hits)
    return RuleResult(rule, outcome, f"{what} — {lines}", f"SKILL.md:{hits[0][0]}")


def compile_all(*patterns: str) -> list[re.Pattern[str]]:
    return [re.compile(p, re.I) for p in patterns]


def scan(rule: str, text: str, patterns: list[re.Pattern[str]], found: str, clean: str) -> RuleResult:
    """The common rule: fail with the matching lines as evidence, else pass saying why."""
    hits = find_lines(text, patterns)
    return from_hits(rule, Outcome.FAIL, found, hits) if hits else passed(rule, clean)
