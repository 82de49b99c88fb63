"""The names and rules of difficulty evolution, defined once (SETA-Evol, PAPERS.md §2).

By a task's pass rate r over its rollouts: r > 0.5 → harder, 0 < r <= 0.5 → a context
switch (same difficulty, another tool or domain for a step), r = 0 → easier. A variant's id
is its parent's id plus one lineage mark per generation: `<task>__d1` (harder),
`<task>__d1__b1` (then a context switch), `__e1` (easier); the number tells apart variants
of one parent made by the same operator.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

OPERATORS = ("harder", "context_switch", "easier")
LINEAGE_MARKS = {"harder": "d", "context_switch": "b", "easier": "e"}
OPERATOR_OF_MARK = {v: k for k, v in LINEAGE_MARKS.items()}
OPERATOR_LABELS = {
    "harder": "harder (an extra step along a bridge, constraints, edge cases, more data)",
    "context_switch": "context switch (same difficulty, another tool or domain for a step)",
    "easier": "easier (a step or an edge case dropped)",
}
_MARK = re.compile(r"__([dbe])(\d+)")
PRODUCTIVE_ZONE = "0 < r < 1"      # where a task still teaches: some rollouts pass, some fail
DEFAULT_AGENT = "noisy-oracle"     # whose pass rates drive a run unless told (simulated, runs without an LLM)
DEFAULT_K = 4                      # rollouts per variant (and per parent that has none yet)
# Rollouts left out of a pass rate: one whose worker raised says nothing about the task's difficulty.
NOT_COUNTED = ("crashed",)


def operator_for(pass_rate: float) -> str:
    """SETA-Evol's rule: the operator a task with this pass rate gets."""
    if not 0.0 <= pass_rate <= 1.0:
        raise ValueError(f"a pass rate lies in [0, 1], got {pass_rate}")
    if pass_rate > 0.5:
        return "harder"
    return "context_switch" if pass_rate > 0.0 else "easier"


def productive(pass_rate: float) -> bool:
    return 0.0 < pass_rate < 1.0


def variant_id(parent_id: str, operator: str, n: int = 1) -> str:
    if operator not in LINEAGE_MARKS:
        raise ValueError(f"operator {operator!r}: choose one of {', '.join(OPERATORS)}")
    if n < 1:
        raise ValueError(f"variant number starts at 1, got {n}")
    return f"{parent_id}__{LINEAGE_MARKS[operator]}{n}"


def root_of(task_id: str) -> str:
    """The original task a variant descends from (itself for an original)."""
    m = _MARK.search(task_id)
    return task_id[: m.start()] if m else task_id


def parent_of(task_id: str) -> str | None:
    marks = list(_MARK.finditer(task_id))
    return task_id[: marks[-1].start()] if marks else None


def lineage(task_id: str) -> list[tuple[str, int]]:
    """(operator, n) per generation, oldest first: `t__d1__b2` -> [("harder", 1), ("context_switch", 2)]."""
    return [(OPERATOR_OF_MARK[m.group(1)], int(m.group(2))) for m in _MARK.finditer(task_id)]


def generation(task_id: str) -> int:
    return len(lineage(task_id))


@dataclass
class VariantDraft:
    """What an operator hands back for one parent: the variant's bundle and what changed.
    Verified and stored by the evolve driver (pipeline/evolve/run.py), never by the operator."""
    task_id: str                      # variant_id(parent, operator, n)
    parent_id: str
    operator: str                     # OPERATORS
    change: str                       # one line a person reads: "added step 3 (jq-filter) along bridge s1>s4"
    bundle: Any                       # workbench.sandbox.bundle.TaskBundle
    name: str
    category: str
    difficulty: str
    n_steps: int
    recipes: list[str] = field(default_factory=list)
    skill_ids: list[str] = field(default_factory=list)
    scenario_ids: list[str] = field(default_factory=list)
    provider: str = "offline"         # offline (recipe knobs) | llm (constructor + repair loop)
    details: dict[str, Any] = field(default_factory=dict)


class NoVariant(Exception):
    """The operator cannot make this kind of variant of this task (said why; the parent is
    recorded as not evolved by that operator, and nothing else is lost)."""


@dataclass
class ParentTask:
    """A task a round evolves: its stored row, its bundle and the pass rate that chose the operator."""
    task_id: str
    bundle: Any                       # workbench.sandbox.bundle.TaskBundle (read from tasks/<id>/)
    record: dict[str, Any]            # its `tasks` row: provider, recipes, skill_ids, scenario_ids, path_id, ...
    pass_rate: float
    rollouts: int                     # how many rollouts the rate is over


class EvolveOperator(Protocol):
    """One backend of the operators: `offline` (recipe tasks: the recipes' knobs, the graph's
    bridges) or `llm` (LLM-built tasks: the constructor and its repair loop). `make` never
    writes the workspace; it returns a draft or raises NoVariant with the reason."""
    provider: str

    def make(self, parent: ParentTask, operator: str, n: int) -> VariantDraft: ...
