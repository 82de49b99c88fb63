"""Routed repair: which failed artifact to rewrite next, within the repair bounds.

FACET's forward order: environment first (everything else is written from its state), then
the solution, the tests, the instruction. An artifact that passed is never rewritten; a
failure marked not repairable is never picked; an artifact whose budget is spent is skipped,
so a task with tests left to repair is not stopped by a spent environment budget.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.repair.attempts import MAX_ENVIRONMENT_REPAIRS, MAX_TASK_REPAIRS
from pipeline.verify.failures import ARTIFACTS, Failure

REPAIR_ORDER: tuple[str, ...] = ARTIFACTS      # environment, solution, tests, instruction
DIFF_CAP = 8000
EVIDENCE_CAP = 60                               # lines of a merged failure's evidence


@dataclass
class RepairBudget:
    """Environment repairs ≤ max_environment; solution, tests and instruction together ≤ max_task."""
    max_environment: int = MAX_ENVIRONMENT_REPAIRS
    max_task: int = MAX_TASK_REPAIRS
    environment_used: int = 0
    task_used: int = 0

    def allows(self, artifact: str) -> bool:
        if artifact not in ARTIFACTS:
            raise ValueError(f"unknown artifact {artifact!r}; expected one of {', '.join(ARTIFACTS)}")
        if artifact == "environment":
            return self.environment_used < self.max_environment
        return self.task_used < self.max_task

    def spend(self, artifact: str) -> None:
        """Count one repair of `artifact`; spending past the bound is a caller's bug, refused."""
        if not self.allows(artifact):
            raise ValueError(f"no {artifact} repair left ({self.used(artifact)} of {self.bound(artifact)} used)")
        if artifact == "environment":
            self.environment_used += 1
        else:
            self.task_used += 1

    def used(self, artifact: str) -> int:
        return self.environment_used if artifact == "environment" else self.task_used

    def bound(self, artifact: str) -> int:
        return self.max_environment if artifact == "environment" else self.max_task

    def left(self) -> dict[str, int]:
        return {"environment": self.max_environment - self.environment_used, "task": self.max_task - self.task_used}


def _merged(failures: list[Failure]) -> Failure:
    """The failures against one artifact as one: the first's check and reason, the others'
    reasons added, every piece of evidence (capped) and failing test, so one repair sees all."""
    first = failures[0]
    if len(failures) == 1:
        return first
    reason = first.reason + "".join(f"; also {f.check}: {f.reason}" for f in failures[1:])
    evidence = [line for f in failures for line in f.evidence][:EVIDENCE_CAP]
    tests = list(dict.fromkeys(t for f in failures for t in f.failing_tests))
    return first.model_copy(update={"reason": reason, "evidence": evidence, "failing_tests": tests})


def pick(failures: Sequence[Failure], budget: RepairBudget | None = None) -> Failure | None:
    """The failure to repair first: the earliest artifact in REPAIR_ORDER that has a repairable
    failure and budget left (several failures against it come merged into one); None when
    nothing may be repaired."""
    budget = budget or RepairBudget()
    for artifact in REPAIR_ORDER:
        mine = [f for f in failures if f.artifact == artifact and f.repairable]
        if mine and budget.allows(artifact):
            return _merged(mine)
    return None


def unified_diff(old: str, new: str, name: str, cap: int = DIFF_CAP) -> str:
    """A unified diff of one artifact, a/<name> → b/<name>, cut at a line boundary after `cap`
    characters (saying how much was cut). Empty when nothing changed."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    text = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    if len(text) <= cap:
        return text
    cut = text.rfind("\n", 0, cap) + 1 or cap
    return text[:cut] + f"… [{len(text) - cut} more characters of diff cut]\n"


def exhausted_reason(failures: Sequence[Failure], budget: RepairBudget) -> str:
    """Why a task is rejected with no repair left to try: the failure that would have been
    repaired next, its check and reason, and the repairs used."""
    used = (f"{budget.environment_used} of {budget.max_environment} environment and "
            f"{budget.task_used} of {budget.max_task} task repairs used")
    if not failures:
        return f"rejected with no failure to repair ({used})"
    stuck = next((f for a in REPAIR_ORDER for f in failures if f.artifact == a and f.repairable), None)
    if stuck is None:
        f = failures[0]
        return f"{f.artifact} ({f.check}) cannot be repaired: {f.reason} ({used})"
    return f"repairs exhausted: {stuck.artifact} still fails {stuck.check}: {stuck.reason} ({used})"
