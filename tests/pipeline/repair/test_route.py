"""Routed repair: which artifact is rewritten first, within the bounds, and the rejection text
when nothing may be repaired. Failures come from failures_of on real checks (a real verify
run of a bundle with a crashing solution and a leaking instruction; the real static rubric)."""
import re

import pytest

from pipeline.repair.attempts import MAX_ENVIRONMENT_REPAIRS, MAX_TASK_REPAIRS
from pipeline.repair.route import DIFF_CAP, RepairBudget, exhausted_reason, pick, unified_diff
from pipeline.verify.failures import Failure, failures_of
from pipeline.verify.rubric import check_rubric
from pipeline.verify.run import verify_bundle
from tests.helpers import SUM_SENTENCE, sum_bundle
from workbench.models import CheckResult

CRASH = "echo 'numbers.txt: bad line' >&2; exit 4"


def _leaky(solve: str = CRASH):
    """Solve.sh crashes and instruction.md quotes it: a solution and an instruction fault at once."""
    return sum_bundle(solve, extra_files={"instruction.md": f"# Sum\n\n1. {SUM_SENTENCE}\n\nHint: `{CRASH}`\n"})


def _f(artifact: str, check: str = "oracle", **kw) -> Failure:
    return Failure(check=check, artifact=artifact, reason=f"{artifact} broke", **kw)


@pytest.mark.docker
def test_the_solution_is_repaired_before_the_instruction_and_exhaustion_names_it():
    failures = failures_of(verify_bundle(_leaky()))
    assert [(f.check, f.artifact) for f in failures] == [("oracle", "solution"), ("rubric", "instruction")]
    budget = RepairBudget()
    first = pick(failures, budget)
    assert (first.artifact, first.check) == ("solution", "oracle") and "exited with code 4" in first.reason
    for _ in range(MAX_TASK_REPAIRS):
        assert pick(failures, budget).artifact == "solution"
        budget.spend("solution")
    assert pick(failures, budget) is None                  # the instruction shares the spent task budget
    why = exhausted_reason(failures, budget)
    assert why.startswith("repairs exhausted: solution still fails oracle: solution/solve.sh exited with code 4")
    assert f"0 of {MAX_ENVIRONMENT_REPAIRS} environment and {MAX_TASK_REPAIRS} of {MAX_TASK_REPAIRS} task" in why


def test_forward_order_environment_solution_tests_instruction():
    failures = [_f("instruction", "rubric"), _f("tests"), _f("solution"), _f("environment", "build")]
    order = []
    while failures:
        f = pick(failures)
        order.append(f.artifact)
        failures = [g for g in failures if g.artifact != f.artifact]   # repaired: that check passes now
    assert order == ["environment", "solution", "tests", "instruction"]


def test_a_spent_environment_budget_is_skipped_not_a_stop():
    budget = RepairBudget()
    for _ in range(MAX_ENVIRONMENT_REPAIRS):
        budget.spend("environment")
    failures = [_f("environment", "build"), _f("tests", "noop")]
    assert pick(failures, budget).artifact == "tests"
    assert pick([_f("environment", "build")], budget) is None
    assert "environment still fails build" in exhausted_reason([_f("environment", "build")], budget)


def test_failures_against_one_artifact_are_repaired_together():
    rubric = check_rubric(sum_bundle(extra_files={"tests/test_outputs.py": (
        'def test_sum():\n    """Check it."""\n    assert open("/app/sum.txt").read().strip() == "6"\n')}))
    oracle = Failure(check="oracle", artifact="tests", reason="after the solution the tests still fail",
                     evidence=["test_sum: failed: assert '6' == '7'"], failing_tests=["test_sum"])
    f = pick([oracle] + failures_of([rubric]))
    assert (f.artifact, f.check) == ("tests", "oracle")
    # the stray docstring, and so the instruction's requirement no test quotes: both about the tests
    assert f.reason.startswith("after the solution the tests still fail; also rubric: 2 rubric problem(s)")
    assert f.evidence[0] == "test_sum: failed: assert '6' == '7'" and "is not a sentence" in f.evidence[1]
    assert "no test checks the requirement" in f.evidence[2]
    assert f.failing_tests == ["test_sum"]


def test_unrepairable_failures_are_never_picked():
    toolchain = failures_of([CheckResult(name="noop", passed=False, reason="the verifier's own toolchain could "
                                         "not be used: base image workbench/base:x is missing")])
    assert pick(toolchain) is None
    assert exhausted_reason(toolchain, RepairBudget()).startswith("environment (noop) cannot be repaired: the "
                                                                  "verifier's own toolchain")
    assert pick(toolchain + [_f("instruction", "rubric")]).artifact == "instruction"


def test_budget_bounds():
    b = RepairBudget()
    assert b.left() == {"environment": MAX_ENVIRONMENT_REPAIRS, "task": MAX_TASK_REPAIRS}
    for artifact in ("solution", "tests", "instruction", "tests", "solution"):
        assert b.allows(artifact)
        b.spend(artifact)
    assert b.left() == {"environment": MAX_ENVIRONMENT_REPAIRS, "task": 0}
    assert not any(b.allows(a) for a in ("solution", "tests", "instruction")) and b.allows("environment")
    with pytest.raises(ValueError, match="no tests repair left \\(5 of 5 used\\)"):
        b.spend("tests")
    with pytest.raises(ValueError, match="unknown artifact 'task.toml'"):
        b.allows("task.toml")


def test_unified_diff_and_its_cap():
    d = unified_diff("set -e\nsort in.txt\n", "set -e\nsort -u in.txt", "solution/solve.sh")
    assert d.splitlines()[:2] == ["--- a/solution/solve.sh", "+++ b/solution/solve.sh"]
    assert "-sort in.txt\n+sort -u in.txt\n\\ No newline at end of file\n" in d
    assert unified_diff("same\n", "same\n", "x") == ""
    old = "".join(f"line {i}\n" for i in range(2000))
    big = unified_diff(old, old.replace("line", "LINE"), "environment/app/data.txt")
    assert len(big) <= DIFF_CAP + 80
    body, _, note = big.rstrip("\n").rpartition("\n")
    assert re.fullmatch(r"[-+ ](line|LINE) \d+", body.rpartition("\n")[2])     # cut at a whole line
    assert note.startswith("… [") and note.endswith("more characters of diff cut]")
    assert len(unified_diff(old, old.upper(), "f", cap=500)) < 600
