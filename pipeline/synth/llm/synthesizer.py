"""`LLMSynthesizer` (provider "llm"): planner, constructor in FACET's forward order, routed repair.

The batch calls `task_id` (before any LLM call or build: resume skips by it) and `synthesize`.
A path whose plan cannot be made gets no task ("plan: <why>"); one whose construction cannot
finish (an environment that never builds) none either, with the exhausted repair as the
reason; a constructed task comes back with its final checks, accepted or rejected, and every
repair attempt. `BudgetExceeded` propagates: the batch stops cleanly.
"""
from __future__ import annotations

import hashlib
import re
import time

from pipeline.repair.route import exhausted_reason
from pipeline.synth.compose import SynthesizedTask, step_category, task_slug
from pipeline.synth.skill_fit import StepFidelity
from pipeline.synth.llm import render
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.constructor import Draft, Exhausted, Stopped, Work
from pipeline.synth.llm.fidelity import recipe_of, step_fidelities
from pipeline.synth.llm.models import ENVIRONMENT, INSTRUCTION, JUDGE, PLAN, REPAIR, SOLUTION, TESTS, Plan
from pipeline.synth.llm.planner import PlanError, make_plan
from pipeline.synth.llm.repair_loop import verify_and_repair
from pipeline.synth.protocol import PathContext, SynthOutcome, SynthTools
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle

SYNTH_LLM_VERSION = "1"
STAGES = (PLAN, ENVIRONMENT, INSTRUCTION, SOLUTION, TESTS, *REPAIR.values())
VERIFIER_TIMEOUT_S = 180.0
STOPPED = "stopped before the task was finished (resume makes it)"


def difficulty_of(plan: Plan, n_steps: int) -> str:
    """Steps, handoffs and services: what an agent must keep in its head at once."""
    score = max(n_steps, len(plan.subgoals)) + len(plan.handoffs) // 2 + len(plan.services)
    return "easy" if score <= 1 else "medium" if score <= 3 else "hard"


def near_duplicate_key(instruction_text: str) -> str:
    """The instruction's words, numbers aside: two tasks that read as one share it."""
    text = re.sub(r"\d+(\.\d+)?", "#", re.sub(r"\s+", " ", instruction_text).strip().lower())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def draft_fidelity(d: Draft, path: PathContext, plan: Plan) -> list[StepFidelity]:
    """What each step of the draft uses of its skill, read from its solve.sh and what it made."""
    made = set(d.diff.changed_paths) if d.diff is not None else set()
    return step_fidelities(path, plan, d.solution.solve_sh, made)


def task_bundle(d: Draft, *, path: PathContext, plan: Plan, seed: int, name: str, category: str,
                difficulty: str, base_image: str, agent_timeout_s: float,
                fidelity: list[StepFidelity] | None = None) -> TaskBundle:
    """The bundle of a draft, with the task's metadata (`fidelity`: the draft's, when known already)."""
    fidelity = draft_fidelity(d, path, plan) if fidelity is None else fidelity
    names = [s.step.skill_name.strip() or s.step.skill_id for s in path.steps]
    meta = {"path_id": path.path_id, "seed": seed, "provider": LLMSynthesizer.provider,
            "skill_ids": list(dict.fromkeys(s.step.skill_id for s in path.steps)),
            "recipes": [recipe_of(n) for n in names],
            "scenario_ids": list(dict.fromkeys(a for s in path.path_steps for a in (s.src_anchor, s.dst_anchor) if a)),
            "tags": list(dict.fromkeys(["llm", category, *(t for g in plan.subgoals for t in g.tools)]))[:20],
            "skill_fidelity": [f.as_dict() for f in fidelity]}
    return render.bundle_from_artifacts(
        name=name, category=category, difficulty=difficulty, manifest=d.manifest, instruction=d.instruction,
        solution=d.solution, tests=d.tests, base_image=base_image, agent_timeout_sec=agent_timeout_s,
        verifier_timeout_sec=VERIFIER_TIMEOUT_S, metadata=meta)


class LLMSynthesizer:
    provider = "llm"

    def __init__(self, caller: LLMCaller, *, model: str, solve_timeout_s: float | None = None,
                 judge: bool = True, base_image: str | None = None):
        """`solve_timeout_s`: the agent timeout of every task (None: 300 s + 300 s per step), which
        is also how long solve.sh may run in the constructor's Session."""
        self.caller, self.model, self.judge = caller, model, judge
        self.solve_timeout_s = solve_timeout_s
        self.base_image = base_image or base_image_name()

    # ------------------------------------------------------------ identity
    def template_versions(self) -> list[str]:
        stages = STAGES + ((JUDGE,) if self.judge else ())
        return [f"{s}={self.caller.template(s).version}" for s in stages]

    def task_id(self, path: PathContext, seed: int) -> str:
        key = "|".join(["llm", SYNTH_LLM_VERSION, self.model, *self.template_versions(), str(seed), self.base_image]
                       + [f"{s.src_anchor}>{s.skill_id}>{s.dst_anchor}" for s in path.path_steps])
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def agent_timeout_s(self, path: PathContext) -> float:
        return float(self.solve_timeout_s) if self.solve_timeout_s else float(300 + 300 * len(path.steps))

    # ------------------------------------------------------------ the work
    def synthesize(self, path: PathContext, seed: int, tools: SynthTools) -> SynthOutcome:
        t0 = time.monotonic()
        timer: dict[str, float] = {"llm_s": 0.0, "docker_s": 0.0}
        task_id = self.task_id(path, seed)

        def done(**kw) -> SynthOutcome:
            timer["total_s"] = time.monotonic() - t0
            return SynthOutcome(timings=dict(timer), **kw)

        if not path.steps:
            return done(task=None, error="plan: the path has no steps")
        try:
            plan = make_plan(self.caller, path, item=task_id, timer=timer)
        except PlanError as exc:
            return done(task=None, error=f"plan: {exc}")
        work = Work(self.caller, path, plan, tools, item=task_id, agent_timeout_s=self.agent_timeout_s(path),
                    timer=timer)
        try:
            draft = work.construct()
        except Exhausted as exc:
            return done(task=None, attempts=work.attempts, error=exhausted_reason(exc.failures, work.budget))
        except Stopped:
            return done(task=None, attempts=work.attempts, error=STOPPED)

        first = path.steps[0].step
        category = step_category(first)
        difficulty = difficulty_of(plan, len(path.steps))
        names = [s.step.skill_name.strip() or s.step.skill_id for s in path.steps]
        name = f"workbench/{task_slug(task_id, ['llm', *names])}"

        fidelity: list[StepFidelity] = []   # of the draft last laid out: the task's, once verified

        def make_bundle(d: Draft) -> TaskBundle:
            fidelity[:] = draft_fidelity(d, path, plan)
            return task_bundle(d, path=path, plan=plan, fidelity=fidelity, seed=seed, name=name, category=category,
                               difficulty=difficulty, base_image=tools.base_image,
                               agent_timeout_s=self.agent_timeout_s(path))

        try:
            verified = verify_and_repair(work, draft, make_bundle, judge=self.judge)
        except Stopped:
            return done(task=None, attempts=work.attempts, error=STOPPED)
        task = SynthesizedTask(bundle=verified.bundle, name=name, category=category, difficulty=difficulty,
                               recipes=[recipe_of(n) for n in names], task_id=task_id,
                               near_dup_key=near_duplicate_key(verified.bundle.text("instruction.md")),
                               fidelity=list(fidelity))
        return done(task=task, checks=verified.checks, attempts=work.attempts, error=verified.error)
