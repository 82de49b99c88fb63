"""Full verification of a constructed draft, and routed repair until it passes or the budget is spent
(issue 13, Deliver 3).

verify_bundle (build — cached: the constructor built this environment —, no-op, oracle, static
rubric, decontamination), then, when the static rubric passed, the LLM judge as check "judge".
`failures_of` names the artifact at fault of every failed check; `route.pick` chooses which
to rewrite (environment, then solution, tests, instruction); only that artifact is rewritten,
checked as in construction (guard, build, a run of solve.sh) and the bundle verified again.
After an environment repair the container state is read again and the kept solution run
again, so later repairs see the state the checks see.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from pipeline.repair.route import exhausted_reason, pick
from pipeline.synth.llm.constructor import Draft, Exhausted, Work
from pipeline.verify.failures import Failure, failures_of
from pipeline.verify.run import verify_bundle
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle


@dataclass
class Verified:
    bundle: TaskBundle
    checks: list[CheckResult]
    error: str | None = None      # set when the task is rejected with its repairs spent


def run_checks(work: Work, bundle: TaskBundle, *, judge: bool) -> list[CheckResult]:
    """verify_bundle, then the judge when the static rubric passed (it runs only then)."""
    t0 = time.monotonic()
    try:
        checks = verify_bundle(bundle, engine=work.tools.engine, benchmark=work.tools.benchmark,
                               allow_network=work.tools.allow_network, red_team=work.tools.red_team)
    finally:
        work.timer["docker_s"] = work.timer.get("docker_s", 0.0) + time.monotonic() - t0
    rubric = next((c for c in checks if c.name == "rubric"), None)
    if judge and rubric is not None and rubric.passed:
        from pipeline.judge.task_judge import judge_task
        checks.append(judge_task(work.caller, bundle, work.path, item=work.item, timer=work.timer))
    return checks


def goal_in_initial_state(draft: Draft) -> bool:
    """The constructor's hint for a no-op that passes (failures.py): the reference solution had
    nothing to change, so the environment already holds the goal (else the tests check too little)."""
    return draft.diff is not None and not draft.diff.changed_paths


def _hint(checks: list[CheckResult], draft: Draft) -> None:
    for c in checks:
        if c.name == "noop" and not c.passed and goal_in_initial_state(draft):
            c.details["goal_in_initial_state"] = True


def _outcome(failures: list[Failure], artifact: str) -> str:
    if not failures:
        return "fixed"
    return "still_failing" if any(f.artifact == artifact for f in failures) else "moved_on"


def repair_one(work: Work, draft: Draft, failure: Failure) -> None:
    """Rewrite the failure's artifact (and only it); raises Exhausted when its checks never pass."""
    a = failure.artifact
    if a == "environment":
        check = work.check_environment(draft)
        draft.manifest = work.settle(a, draft.manifest, [failure], check)
        work.read_before(draft)
        work.check_solution(draft)(draft.solution)    # refresh the observed effects; verify judges them
    elif a == "solution":
        check = work.check_solution(draft)
        draft.solution = work.settle(a, draft.solution, [failure], check)
    elif a == "tests":
        draft.tests = work.settle(a, draft.tests, [failure], work.check_tests)
    else:
        draft.instruction = work.settle(a, draft.instruction, [failure], work.check_instruction(draft))


def verify_and_repair(work: Work, draft: Draft, make_bundle: Callable[[Draft], TaskBundle], *,
                      judge: bool = True) -> Verified:
    """Verify; while something fails and may be repaired, repair it and verify again."""
    while True:
        work.stop_if_asked()
        bundle = make_bundle(draft)
        checks = run_checks(work, bundle, judge=judge)
        _hint(checks, draft)
        failures = failures_of(checks)
        if work.attempts and work.attempts[-1].outcome in ("pending", "fixed"):
            work.attempts[-1].outcome = _outcome(failures, work.attempts[-1].artifact)
        if not failures:
            return Verified(bundle, checks)
        chosen = pick(failures, work.budget)
        if chosen is None:
            if work.attempts and work.attempts[-1].outcome == "still_failing":
                work.attempts[-1].outcome = "exhausted"
            return Verified(bundle, checks, exhausted_reason(failures, work.budget))
        try:
            repair_one(work, draft, chosen)
        except Exhausted as exc:
            return Verified(bundle, checks, exhausted_reason(exc.failures, work.budget))
