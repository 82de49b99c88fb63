"""Workflow rule: a skill needs at least two concrete steps."""
from __future__ import annotations

import textwrap

from pipeline.filters import workflow
from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome, ParsedSkill

RULE = "workflow.steps"


def make_skill(body: str) -> ParsedSkill:
    text = ("---\nname: demo-skill\ndescription: Find the commit that broke the build.\n---\n"
            + textwrap.dedent(body).lstrip("\n"))
    return build_skill(text, where="demo/SKILL.md", skill_key="demo", source_kind="folder",
                       source_path="demo", source_ref=None, package_files=["SKILL.md"],
                       content_hash="x" * 64)


def test_flags_vague_prose():
    skill = make_skill("""
        # Bisect helper

        This skill helps you figure out what went wrong in your repository. Look around,
        think about the history and use git to narrow things down until you find the culprit.
    """)
    res = workflow.structured_steps(skill)
    assert res.rule == RULE
    assert res.outcome == Outcome.FAIL
    assert "found 0 workflow step(s)" in res.evidence
    assert res.location == "SKILL.md body"


def test_flags_a_single_step():
    skill = make_skill("""
        # Bisect helper

        ## Steps
        1. Run `git bisect run ./test.sh` and read the result.
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    # extract_steps only reports lists of two or more, so the count shown is 0 here.
    assert "workflow step(s)" in res.evidence
    assert "at least 2 steps" in res.evidence


def test_flags_prose_with_one_numbered_remark_per_section():
    skill = make_skill("""
        # Bisect helper

        ## Background
        1. Bisecting needs a known good commit.

        ## Notes
        1. Mark skipped commits with `git bisect skip`.
    """)
    assert workflow.structured_steps(skill).outcome == Outcome.FAIL


def test_passes_two_step_numbered_workflow():
    skill = make_skill("""
        # Bisect helper

        ## Steps
        1. Start with `git bisect start HEAD v1.0`.
        2. Run `git bisect run ./test.sh` and note the first bad commit.
    """)
    res = workflow.structured_steps(skill)
    assert res.rule == RULE
    assert res.outcome == Outcome.PASS
    assert res.evidence.startswith("2 steps, first: Start with `git bisect start HEAD v1.0`.")


def test_passes_step_subheadings():
    skill = make_skill("""
        # Bisect helper

        ## Workflow

        ### Step 1: Mark the endpoints
        Run `git bisect start HEAD v1.0`.

        ### Step 2: Automate the test
        Run `git bisect run ./test.sh`.

        ### Step 3: Clean up
        Run `git bisect reset`.
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.PASS
    assert res.evidence.startswith("3 steps, first: Mark the endpoints")


def test_passes_bulleted_workflow_section():
    skill = make_skill("""
        # Bisect helper

        ## Workflow
        - Start bisecting with `git bisect start HEAD v1.0`.
        - Let `git bisect run ./test.sh` find the first bad commit.
        - Finish with `git bisect reset`.
    """)
    assert workflow.structured_steps(skill).outcome == Outcome.PASS
