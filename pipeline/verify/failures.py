"""Typed failures: for every failed check, the artifact at fault and the evidence.

The verdict rule is defined here once (`verdict`, `first_failed`); the store is handed the
verdict, never works it out again. The check names are the vocabulary of a stored
`CheckResult`, so they live beside it in workbench/models.py (the store and the pages need
them and must not import pipeline/); they are re-exported here as the verification order.

Which artifact is at fault (issue 13 §3), decided from each check's structured details and
the way docker_checks words its reasons:
- build → environment.
- oracle → solution when solve.sh crashed, ran past its limit, ran out of memory, forked
  without end or left processes that the test phase could not stop; tests when the test phase
  itself went wrong (no readable reward, a reward that contradicts the outcomes, test.sh past
  its limit) or when the tests fail after a solution that exited 0 (the solution's effects
  were observed by the constructor; the tests are what disagrees with them).
- noop (tests pass untouched) → tests, unless the constructor found the goal already holds in
  the initial state and says so with details["goal_in_initial_state"] = True → environment.
  The constructor can tell (it saw the state before and after the solution); this module
  cannot, and guessing from file names would route wrongly, so the hint is the one rule.
- rubric → one Failure per artifact its problems name: a leaked solution line or a test that
  reads a path the instruction never names → instruction; missing or foreign docstrings, no
  tests, invalid Python → tests; environment files that copy solution/tests → environment.
- redteam (an attack of the red-team probe got a reward without solving the task) → tests: they
  reward what is not the work; the attack and the tests it passed are the evidence.
- decontam → the artifact whose file shares the n-gram (instruction.md → instruction, which is
  also the default; solve.sh → solution; tests → tests).
- judge → one Failure per artifact of its failed criteria (details["criteria"] =
  [{name, passed, evidence, artifact}]).
A failure no rewrite can fix (the verifier's own toolchain broke, a judge with no usable
verdict) is kept with `repairable=False`: the task is rejected with its reason, never repaired.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from pipeline.verify.docker_checks import FORK_HINT, TOOLCHAIN_UNUSABLE
from pipeline.verify.reward import contradiction, failing
from workbench.models import CHECK_NAMES, CheckResult

__all__ = ["ARTIFACTS", "Artifact", "CHECK_NAMES", "Failure", "failures_of", "first_failed", "verdict"]

Artifact = Literal["environment", "solution", "tests", "instruction"]
ARTIFACTS: tuple[str, ...] = ("environment", "solution", "tests", "instruction")
Verdict = Literal["accepted", "rejected"]

EVIDENCE_LINES = 30            # log lines kept as evidence: the tail, where the error is
EVIDENCE_LINE_CHARS = 300
FAILING_TEST_LINES = 20        # failing tests described in the evidence (all of them are in failing_tests)
TEST_PHASE_MARK = "$ bash /tests/test.sh"   # docker_checks' log: solve.sh output, then the tests'
SOLVE_MARK = "$ bash /solution/solve.sh"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Docker's classic builder reports layers it reused or cleaned up; none of it says what broke.
_BUILD_NOISE = re.compile(r"^\s*(---> |Removing intermediate container )")


class Failure(BaseModel):
    check: str                          # one of CHECK_NAMES, or a guard's name (guard.*)
    artifact: Artifact
    reason: str
    evidence: list[str] = Field(default_factory=list)    # log excerpt lines, failing test ids
    failing_tests: list[str] = Field(default_factory=list)
    repairable: bool = True             # False: no rewrite of `artifact` can fix it (see module doc)


# ---------------------------------------------------------------- the verdict rule
def _rank(check: CheckResult, i: int) -> tuple[int, int]:
    return (CHECK_NAMES.index(check.name) if check.name in CHECK_NAMES else len(CHECK_NAMES), i)


def first_failed(checks: Sequence[CheckResult]) -> CheckResult | None:
    """The first failed check in verification order (CHECK_NAMES; unknown names last), or None."""
    failed = [(c, i) for i, c in enumerate(checks) if not c.passed]
    return min(failed, key=lambda ci: _rank(*ci))[0] if failed else None


def verdict(checks: Sequence[CheckResult]) -> Verdict:
    """Accepted when at least one check ran and every check passed; rejected otherwise."""
    return "accepted" if checks and first_failed(checks) is None else "rejected"


# ---------------------------------------------------------------- evidence
def tail(text: str, n: int = EVIDENCE_LINES) -> list[str]:
    """The last `n` non-blank lines of a log, each capped."""
    lines = [ln.rstrip()[:EVIDENCE_LINE_CHARS] for ln in text.splitlines() if ln.strip()]
    return lines[-n:]


def build_lines(log: str) -> str:
    """A build log without colour codes and the builder's layer bookkeeping."""
    return "\n".join(ln for ln in _ANSI.sub("", log).splitlines() if not _BUILD_NOISE.match(ln))


def _log_part(log: str, part: str) -> str:
    """The solve.sh or the test phase part of a no-op/oracle log (the whole log if unmarked)."""
    head, mark, rest = log.partition(TEST_PHASE_MARK)
    if part == "tests":
        return mark + rest if mark else log
    return head.partition(SOLVE_MARK)[2] if SOLVE_MARK in head else head


def _test_evidence(check: CheckResult) -> tuple[list[str], list[str]]:
    """The failing test ids, and a line per failing test (up to FAILING_TEST_LINES) with the
    first line of its message."""
    tests = check.details.get("tests") or []
    bad = failing(tests)
    lines = []
    for t in [t for t in tests if t["name"] in bad][:FAILING_TEST_LINES]:
        message = (t.get("message") or "").strip().splitlines()
        lines.append(f"{t['name']}: {t['outcome']}" + (f": {message[0]}" if message else ""))
    return bad, [ln[:EVIDENCE_LINE_CHARS] for ln in lines]


def _failure(check: CheckResult, artifact: str, part: str | None = None, **kw) -> Failure:
    """A Failure of `check` with its failing tests and the tail of the relevant log part."""
    bad, lines = _test_evidence(check)
    log = _log_part(check.log, part) if part else build_lines(check.log) if check.name == "build" else check.log
    return Failure(check=check.name, artifact=artifact, reason=kw.pop("reason", check.reason),
                   evidence=lines + tail(log), failing_tests=bad, **kw)


# ---------------------------------------------------------------- per check
def _toolchain(check: CheckResult) -> Failure | None:
    if not check.reason.startswith(TOOLCHAIN_UNUSABLE):
        return None
    # An image that brings its own toolchain folder is the environment's doing; anything else
    # about our toolchain is ours, and no rewrite of the task fixes it.
    own = "the environment has its own" in check.reason
    return _failure(check, "environment", repairable=own)


def _test_phase_problem(check: CheckResult) -> bool:
    """The tests could not be believed: no reward, or one that contradicts the outcomes."""
    d = check.details
    extra = {k: v for k, v in d.items() if k in ("reward_disagreement", "reward_only")}
    return d.get("reward") is None or contradiction(d.get("reward"), d.get("tests") or [], extra) is not None


def _oracle(check: CheckResult) -> Failure:
    d = check.details
    if "reward" not in d and "timed_out" in d:
        return _failure(check, "solution", "solution")        # solve.sh stopped by a limit: no tests ran
    if FORK_HINT in check.reason and "solution/solve.sh" in check.reason:
        return _failure(check, "solution", "solution")
    if check.reason.startswith("the test phase could not start clean"):
        return _failure(check, "solution", "solution")        # what solve.sh left running would not stop
    if _test_phase_problem(check):
        return _failure(check, "tests", "tests")
    if d.get("solve_exit_code") not in (0, None):
        return _failure(check, "solution", "solution")
    return _failure(check, "tests", "tests")                  # fail after a clean solution, or leave files


def _noop(check: CheckResult) -> Failure:
    if check.reason.startswith("the test phase could not start clean"):
        return _failure(check, "environment", "tests")        # nothing but the image ran
    if _test_phase_problem(check):
        return _failure(check, "tests", "tests")
    if check.details.get("goal_in_initial_state") is True:
        return _failure(check, "environment", "tests",
                        reason=check.reason + " (the initial state already holds the goal)")
    return _failure(check, "tests", "tests")


def rubric_artifact(problem: str) -> str:
    """The artifact a static-rubric problem is about (its text starts with the file it names)."""
    if "which instruction.md never mentions" in problem or problem.startswith("instruction.md"):
        return "instruction"
    if problem.startswith("environment/"):
        return "environment"
    if problem.startswith("solution/"):
        return "solution"
    return "tests"


def _grouped(check: CheckResult, items: Iterable[tuple[str, str]], what: str) -> list[Failure]:
    """One Failure per artifact of (artifact, problem) pairs, in ARTIFACTS order."""
    by: dict[str, list[str]] = {}
    for artifact, problem in items:
        by.setdefault(artifact, []).append(problem)
    out = []
    for artifact in ARTIFACTS:
        if artifact in by:
            ps = by[artifact]
            out.append(Failure(check=check.name, artifact=artifact, evidence=ps,
                               reason=f"{len(ps)} {what} about {artifact}: {ps[0]}"))
    return out


def _rubric(check: CheckResult) -> list[Failure]:
    problems = check.details.get("problems") or [ln for ln in check.log.splitlines() if ln.strip()]
    return _grouped(check, ((rubric_artifact(p), p) for p in problems), "rubric problem(s)") \
        or [_failure(check, "tests")]


def _decontam(check: CheckResult) -> list[Failure]:
    def artifact(f: str) -> str:
        return "solution" if f.startswith("solution/") else "tests" if f.startswith("tests/") else "instruction"
    matches = check.details.get("matches") or []
    items = ((artifact(m.get("file", "")), f"{m.get('file')} ~ {m.get('benchmark_file')}: {m.get('ngram', '')}")
             for m in matches)
    return _grouped(check, items, "benchmark n-gram match(es)") or [_failure(check, "instruction")]


def _judge(check: CheckResult) -> list[Failure]:
    failed = [c for c in check.details.get("criteria") or [] if not c.get("passed")]
    if not failed:
        # The judge failed without naming a criterion: it gave no usable verdict.
        return [_failure(check, "instruction", repairable=False)]
    items = []
    for c in failed:
        artifact = c.get("artifact") if c.get("artifact") in ARTIFACTS else "instruction"
        note, quote, where = ((c.get(k) or "").strip() for k in ("note", "evidence", "where"))
        at = f"evidence {where}" if where else "evidence"
        said = f"{note} ({at}: {quote!r})" if note and quote else note or quote
        items.append((artifact, f"{c.get('name', '?')}: {said}"))
    return _grouped(check, items, "judge criteria failed")


def failures_of(checks: Sequence[CheckResult]) -> list[Failure]:
    """One Failure per failed check and artifact at fault, in verification order."""
    out: list[Failure] = []
    for c, _ in sorted(((c, i) for i, c in enumerate(checks) if not c.passed), key=lambda ci: _rank(*ci)):
        tool = _toolchain(c) if c.name in ("noop", "oracle", "redteam") else None
        if tool:
            out.append(tool)
        elif c.name == "build":
            out.append(_failure(c, "environment"))
        elif c.name == "oracle":
            out.append(_oracle(c))
        elif c.name == "noop":
            out.append(_noop(c))
        elif c.name == "redteam":
            out.append(_failure(c, "tests"))
        elif c.name == "rubric":
            out.extend(_rubric(c))
        elif c.name == "decontam":
            out.extend(_decontam(c))
        elif c.name == "judge":
            out.extend(_judge(c))
        else:
            out.append(_failure(c, "environment", repairable=False,
                                reason=f"{c.name} (a check this module does not know): {c.reason}"))
    return out
