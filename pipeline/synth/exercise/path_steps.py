"""Which steps of a path run their skill's own workflow, and which skill packages a task ships.

The composer (pipeline.synth.compose) asks here before it picks recipe families: a step with an
exercise plan is a skill-exercise step; every other step is a recipe step that claims no skill, and
its skill's reason is kept (the task's exercise gaps)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..recipes import REGISTRY
from ..recipes.base import Recipe, StepContext, SynthesisError
from .package import SkillPackage, package_slug
from .plan import ExercisePlan, exercise_plan
from .step import RECIPE_NAME as EXERCISE

if TYPE_CHECKING:
    from ..compose import PathStep

# Stands in the task's recipe list for an exercise step (never chosen as a family: not registered).
EXERCISE_RECIPE = Recipe(EXERCISE, "skill-exercise", "Run the skill's own workflow", accepts=lambda a: False,
                         seed=None, build=None, weight=2)


def family_category(name: str) -> str:
    """The category of a step's family as a task's recipe list names it; an exercise step is its own kind."""
    return REGISTRY[name].category if name in REGISTRY else EXERCISE_RECIPE.category


def exercise_plans(planned: list[tuple[PathStep, str]], force: list[str | None] | None = None, enabled: bool = True
                   ) -> tuple[list[ExercisePlan | None], dict[str, str]]:
    """Per planned step, the plan of a step that runs the skill's own workflow (None: a recipe step,
    connective, claiming nothing), and for each skill no step exercises, why (skill id -> "<skill>: <reason>").
    `force` pins a step to an exercise (EXERCISE) or to a recipe family (any other name)."""
    plans: list[ExercisePlan | None] = []
    gaps: dict[str, str] = {}
    for k, (s, _) in enumerate(planned):
        pinned = force[k] if force and k < len(force) else None
        found = exercise_plan(s.skill_id, s.skill_name, s.description, s.parts.body, tuple(s.parts.tools),
                              s.package) if enabled else "skill packages are not shipped with this batch's tasks"
        if pinned == EXERCISE and not isinstance(found, ExercisePlan):
            raise SynthesisError(f"step {k + 1} is pinned to an exercise of {s.skill_name}, which has none: {found}")
        use = isinstance(found, ExercisePlan) and pinned in (None, EXERCISE) and s.package is not None
        plans.append(found if use else None)
        if not use:
            gaps.setdefault(s.skill_id, f"{s.skill_name.strip() or s.skill_id}: "
                            + (found if isinstance(found, str) else "a recipe family was pinned"))
    exercised = {p.skill_id for p in plans if p is not None}
    return plans, {sid: g for sid, g in gaps.items() if sid not in exercised}


def shipped_packages(steps: list[PathStep], ctx: StepContext) -> list[SkillPackage]:
    """The packages a task ships: every skill a step exercises (its script runs from there) and every
    other skill a step claims (rubric 2); a claimed skill whose files are not at hand ships its SKILL.md."""
    out = dict(ctx.packages)
    for s, fid in zip(steps, ctx.fidelity):
        if fid.claims:
            pkg = s.package or SkillPackage(package_slug(s.skill_name, s.skill_id), (("SKILL.md", s.parts.body.encode()),))
            out.setdefault(pkg.slug, pkg)
    return [out[k] for k in sorted(out)]
