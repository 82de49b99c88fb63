"""The answer budget table and the runaway-repetition test, as pure functions."""
from __future__ import annotations

import json

import pytest

from workbench.llm.answer_budget import DEFAULT_BUDGET, STAGE_BUDGETS, answer_budget
from workbench.llm.repetition import RepetitionWatch, repeating_period


def test_a_stage_budget_is_exact_then_by_prefix_then_the_default_and_overridable():
    assert answer_budget("synth_plan") == STAGE_BUDGETS["synth_plan"]
    assert answer_budget("synth_repair_tests") == STAGE_BUDGETS["synth_repair_*"]
    assert answer_budget("unknown-stage") == DEFAULT_BUDGET
    assert answer_budget("synth_plan", {"synth_plan": 900}) == 900
    assert answer_budget("synth_repair_tests", {"synth_repair_*": 500}) == 500
    with pytest.raises(ValueError, match="'synth_plan' must be a positive whole number of tokens, not 0"):
        answer_budget("synth_plan", {"synth_plan": 0})


def test_a_loop_at_the_tail_is_found_with_its_period():
    assert repeating_period("The task runs the command.\n" * 20) == len("The task runs the command.\n")
    assert repeating_period('{"goal": "x", "steps": [' + "\n" * 300) == 1
    assert repeating_period("opening words, then " + "ab" * 200) == 2


def test_ordinary_answers_are_not_loops():
    plan = json.dumps({"steps": [{"command": f"echo {i} > out{i}.txt", "weight": 0.5} for i in range(60)]}, indent=2)
    assert repeating_period(plan) is None
    assert repeating_period("-" * 80 + "\nSection\n" + "=" * 80 + "\n") is None  # rules are short
    assert repeating_period("step 1\nstep 2\n" + "".join(f"step {i}\n" for i in range(3, 90))) is None
    assert repeating_period("short " * 5) is None


def test_the_watch_checks_a_growing_answer_in_steps():
    watch, parts = RepetitionWatch(every=64), []
    looped_at = None
    for i in range(200):
        parts.append("same line\n")
        if watch.looping_at(10 * (i + 1), parts):
            looped_at = i
            break
    assert looped_at is not None and looped_at < 40 and watch.period == 10
    assert "".join(parts) == "same line\n" * (looped_at + 1)
