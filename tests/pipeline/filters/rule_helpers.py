"""Building small skills and checking rule results, shared by the filter tests."""
from __future__ import annotations

import textwrap

from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome, ParsedSkill

DEFAULT_STEPS = """
# Demo skill

## Steps
1. Read the input with `cat data/input.csv`.
2. Count the rows with `wc -l data/input.csv`.
"""


def skill_from_text(text: str, name: str = "demo") -> ParsedSkill:
    return build_skill(text, where=f"{name}/SKILL.md", skill_key=name, source_kind="folder",
                       source_path=name, source_ref=None, package_files=["SKILL.md"], content_hash="x" * 64)


def make_skill(extra: str = "", *, front_extra: str = "", steps: str = DEFAULT_STEPS,
               description: str = "Summarise a CSV file in the terminal.") -> ParsedSkill:
    """A valid skill: front matter (plus `front_extra` YAML), a short workflow, then `extra`."""
    front = (f"---\nname: demo-skill\ndescription: {description}\n"
             + textwrap.dedent(front_extra).strip("\n") + ("\n" if front_extra.strip() else "") + "---\n")
    return skill_from_text(front + textwrap.dedent(steps) + "\n" + textwrap.dedent(extra).strip("\n") + "\n")


def line_of(skill: ParsedSkill, fragment: str) -> int:
    for n, line in enumerate(skill.raw_text.splitlines(), start=1):
        if fragment in line:
            return n
    raise AssertionError(f"{fragment!r} not in skill text")


def assert_flagged(res, rule: str, skill: ParsedSkill, fragment: str) -> None:
    n = line_of(skill, fragment)
    assert res.rule == rule
    assert res.outcome == Outcome.FAIL
    assert f"line {n}:" in res.evidence
    assert fragment in res.evidence
    assert res.location == f"SKILL.md:{n}"


def assert_passes(res, rule: str) -> None:
    assert res.rule == rule
    assert res.outcome == Outcome.PASS, res.evidence


def assert_fails_on(res, rule: str, skill, fragment: str) -> None:
    """Failed, quoting the line with `fragment` (the description may come first)."""
    assert res.rule == rule and res.outcome == Outcome.FAIL, res.evidence
    assert f"line {line_of(skill, fragment)}:" in res.evidence and fragment in res.evidence
    assert res.location.startswith("SKILL.md:")
