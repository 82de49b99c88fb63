"""The one contract every synthesizer keeps (DESIGN §9): a path with its full context in,
a task (and, for synthesizers that verify while they build, its checks) out.

The batch (`pipeline.synth.batch`) only ever calls `Synthesizer.task_id` (to skip finished
work on resume, before any LLM call or build) and `Synthesizer.synthesize`; it stores
what comes back. `offline` (recipes) and `llm` (planner + constructor) implement it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from workbench.models import CheckResult

if TYPE_CHECKING:
    from pipeline.repair.attempts import RepairAttempt
    from pipeline.synth.compose import PathStep, SynthesizedTask
    from pipeline.verify.decontam import BenchmarkIndex
    from workbench.sandbox.engine import Engine

PROVIDERS = ("offline", "llm")


@dataclass(frozen=True)
class ScenarioView:
    """A scenario in FACET's five dimensions (the skill's stored pre or post scenario)."""
    goal: str
    context: str
    capability: str
    state: str
    io_tool: str
    canonical: str

    def as_text(self) -> str:
        return (f"goal: {self.goal}; context: {self.context}; capability: {self.capability}; "
                f"state: {self.state}; io/tool: {self.io_tool}")


@dataclass(frozen=True)
class BridgeView:
    """The verified link from one step's post scenario to the next step's pre scenario."""
    from_skill: str
    to_skill: str
    verdict: str          # verified | rejected | unchecked (no stored verdict for the pair)
    similarity: float
    reason: str


@dataclass(frozen=True)
class StepContext:
    """One step of a path with everything a synthesizer may use of its skill.
    `step.parts` holds tools, state kinds, parsed steps and the SKILL.md body."""
    step: PathStep
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    bins: tuple[str, ...] = ()
    pre: ScenarioView | None = None
    post: ScenarioView | None = None
    bridge: BridgeView | None = None      # to the next step; None on the last step

    @property
    def body(self) -> str:
        return self.step.parts.body

    @property
    def tools(self) -> tuple[str, ...]:
        return self.step.parts.tools


@dataclass(frozen=True)
class PathContext:
    path_id: str
    steps: tuple[StepContext, ...]

    @property
    def path_steps(self) -> list[PathStep]:
        return [s.step for s in self.steps]


@dataclass
class SynthTools:
    """What a synthesizer may use while it works (shared by the batch's threads)."""
    engine: Engine
    base_image: str
    benchmark: BenchmarkIndex | None = None
    allow_network: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    run_id: str | None = None
    red_team: bool | None = None      # the red-team probe in verification (None: unless WORKBENCH_RED_TEAM=0)


@dataclass
class SynthOutcome:
    """A synthesizer's answer for one path.
    `task` None: no task could be made (`error` says why, naming the artifact at fault).
    `checks` None: the batch verifies the bundle itself (offline); the LLM synthesizer
    verifies while it repairs, and hands over the final checks.
    `timings`: seconds spent waiting on the LLM (`llm_s`), on Docker (`docker_s`) and in all (`total_s`)."""
    task: SynthesizedTask | None
    checks: list[CheckResult] | None = None
    attempts: list[RepairAttempt] = field(default_factory=list)
    error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)


class Synthesizer(Protocol):
    provider: str      # one of PROVIDERS: stored on the run and on each task

    def task_id(self, path: PathContext, seed: int) -> str:
        """The id the task of this path will have, known before any work (resume skips by it)."""

    def synthesize(self, path: PathContext, seed: int, tools: SynthTools) -> SynthOutcome:
        """Make (and for `llm`, verify and repair) the task of one path. Raises
        `workbench.llm.budget.BudgetExceeded` when the batch's budget is spent (the batch
        stops cleanly; the path is done again on resume)."""
