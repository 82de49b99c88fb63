"""Which steps of a path run their skill's own workflow, and which skill packages a task ships.

The composer (pipeline.synth.compose) asks here before it picks recipe families: a step with an
exercise plan is a skill-exercise step; every other step is a recipe step that claims no skill, and
its skill's reason is kept (the task's exercise gaps)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..recipes import REGISTRY
from ..recipes.base import Fragment, Recipe, StepContext, SynthesisError
from ..skill_fit import StepFidelity, rubric_fidelity
from .command_plan import CommandPlan
from .command_step import RECIPE_NAME as COMMAND_EXERCISE, build_command_exercise, command_fidelity
from .package import SkillPackage, package_slug
from .plan import ExercisePlan, exercise_plan
from .step import RECIPE_NAME as EXERCISE, build_exercise, ref_files

if TYPE_CHECKING:
    from ..compose import PathStep

# Stands in the task's recipe list for an exercise step (never chosen as a family: not registered).
EXERCISE_RECIPE = Recipe(EXERCISE, "skill-exercise", "Run the skill's own workflow", accepts=lambda a: False,
                         seed=None, build=None, weight=2)
COMMAND_RECIPE = Recipe(COMMAND_EXERCISE, "skill-exercise", "Run the skill's documented command",
                        accepts=lambda a: False, seed=None, build=None, weight=2)
EXERCISE_KINDS = frozenset({EXERCISE, COMMAND_EXERCISE})   # the recipe names of exercise steps, by kind


def family_category(name: str) -> str:
    """The category of a step's family as a task's recipe list names it; an exercise step is its own kind."""
    return REGISTRY[name].category if name in REGISTRY else EXERCISE_RECIPE.category   # either exercise kind


def exercise_plans(planned: list[tuple[PathStep, str]], force: list[str | None] | None = None, enabled: bool = True
                   ) -> tuple[list[ExercisePlan | CommandPlan | None], dict[str, str]]:
    """Per planned step, the plan of a step that runs the skill's own workflow (None: a recipe step,
    connective, claiming nothing), and for each skill no step exercises, why (skill id -> "<skill>: <reason>").
    `force` pins a step to an exercise (either kind's name) or to a recipe family (any other name)."""
    plans: list[ExercisePlan | None] = []
    gaps: dict[str, str] = {}
    for k, (s, _) in enumerate(planned):
        pinned = force[k] if force and k < len(force) else None
        found = exercise_plan(s.skill_id, s.skill_name, s.description, s.parts.body, tuple(s.parts.tools),
                              s.package) if enabled else "skill packages are not shipped with this batch's tasks"
        runnable = isinstance(found, CommandPlan) or (isinstance(found, ExercisePlan) and s.package is not None)
        if pinned in EXERCISE_KINDS and not runnable:
            raise SynthesisError(f"step {k + 1} is pinned to an exercise of {s.skill_name}, which has none: {found}")
        use = runnable and (pinned is None or pinned in EXERCISE_KINDS)
        plans.append(found if use else None)
        if not use:
            gaps.setdefault(s.skill_id, f"{s.skill_name.strip() or s.skill_id}: "
                            + (found if isinstance(found, str) else "a recipe family was pinned"))
    exercised = {p.skill_id for p in plans if p is not None}
    return plans, {sid: g for sid, g in gaps.items() if sid not in exercised}


def build_exercise_step(ctx: StepContext, k: int, step: PathStep, plan: ExercisePlan | CommandPlan
                        ) -> tuple[Recipe, Fragment, StepFidelity]:
    """Step `k` as an exercise of its skill: its fragment, and its rubric record (2, with both quotes).
    The skill's package ships with the task; a script exercise's tests carry its pristine code."""
    try:
        if isinstance(plan, CommandPlan):
            frag, chosen = build_command_exercise(ctx, plan)
        else:
            frag = build_exercise(ctx, plan)
    except ValueError as exc:   # a documented call the plan let through but no sentence can state
        raise SynthesisError(f"step {k}: the exercise of {step.skill_name} cannot be stated: {exc}") from exc
    ctx.packages[plan.package.slug] = plan.package
    if isinstance(plan, CommandPlan):
        fid = command_fidelity(k, plan, chosen, frag.solve, step.parts.body) or \
            rubric_fidelity(k, step.skill_id, step.skill_name, COMMAND_EXERCISE, frag.solve, step.parts,
                            [chosen.tool], [], step.description)
        return COMMAND_RECIPE, frag, fid
    ctx.test_files.update(ref_files(plan))
    # the skill's own script is its most distinctive tool: the step uses it ("tool" level)
    return EXERCISE_RECIPE, frag, rubric_fidelity(k, step.skill_id, step.skill_name, EXERCISE, frag.solve,
                                                  step.parts, [plan.script], [], step.description)


def shipped_packages(steps: list[PathStep], ctx: StepContext) -> list[SkillPackage]:
    """The packages a task ships: every skill a step exercises (its script runs from there) and every
    other skill a step claims (rubric 2); a claimed skill whose files are not at hand ships its SKILL.md."""
    out = dict(ctx.packages)
    for s, fid in zip(steps, ctx.fidelity):
        if fid.claims:
            pkg = s.package or SkillPackage(package_slug(s.skill_name, s.skill_id), (("SKILL.md", s.parts.body.encode()),))
            out.setdefault(pkg.slug, pkg)
    return [out[k] for k in sorted(out)]
