"""Figures of an LLM synthesis measurement (prompt sizes, outcomes of a scripted batch): pure
functions over plain numbers and rows, so a test or a notebook can report them the same way."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

# A rough English/markdown/code average, for budgets only: the replay server counts words, a real
# endpoint reports its own tokens in llm_calls.
CHARS_PER_TOKEN = 4


def estimated_tokens(chars: int) -> int:
    return -(-int(chars) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class SizeSummary:
    """Sizes (characters) of one kind of prompt."""
    n: int
    p50: int
    p95: int
    max: int

    def as_text(self) -> str:
        return (f"n={self.n} p50={self.p50} p95={self.p95} max={self.max} chars "
                f"(~{estimated_tokens(self.p50)}/{estimated_tokens(self.p95)}/{estimated_tokens(self.max)} tokens)")


def size_summary(sizes: list[int]) -> SizeSummary:
    if not sizes:
        return SizeSummary(0, 0, 0, 0)
    a = np.asarray(sizes, dtype=float)
    return SizeSummary(len(sizes), int(np.percentile(a, 50)), int(np.percentile(a, 95)), int(a.max()))


@dataclass(frozen=True)
class BatchOutcome:
    """What a batch gave for the paths it was asked about."""
    paths: int
    accepted: int
    rejected: int
    no_task: int
    repairs: int                      # repair attempts over all its tasks
    failed_checks: dict[str, int]     # first failed check of the rejected tasks
    repairs_by_check: dict[str, int]  # the check that asked for each repair

    @property
    def accepted_share(self) -> float:
        return self.accepted / self.paths if self.paths else 0.0

    def as_text(self) -> str:
        rejected = f"{self.rejected} rejected" + (f" {self.failed_checks}" if self.failed_checks else "")
        repairs = f"{self.repairs} repairs" + (f" {self.repairs_by_check}" if self.repairs_by_check else "")
        return (f"{self.accepted}/{self.paths} accepted ({self.accepted_share:.2f}), {rejected}, "
                f"{self.no_task} without a task, {repairs}")


def batch_outcome(paths: int, verdicts: list[str], failed_checks: list[str | None],
                  repair_checks: list[str]) -> BatchOutcome:
    """`verdicts`/`failed_checks`: one per task the batch stored; `repair_checks`: one per attempt."""
    accepted = sum(v == "accepted" for v in verdicts)
    failed = Counter(c for v, c in zip(verdicts, failed_checks) if v != "accepted" and c)
    return BatchOutcome(paths, accepted, len(verdicts) - accepted, paths - len(verdicts), len(repair_checks),
                        dict(failed), dict(Counter(repair_checks)))


def fidelity_levels(per_task: list[list[str]]) -> dict[str, int]:
    """Steps per fidelity level (tool | artifact | category-only) over a batch's tasks."""
    return dict(Counter(level for task in per_task for level in task))
