"""How faithfully a synthesis batch honours its skills: the share of composed steps that use a
tool or a state kind named by the skill they serve, and which categories the batch's tasks cover.

Pure functions of the per-step `skill_fidelity` records (task.toml metadata, the store, the
`tasks export` rows) and of category lists, so a page, a test or a script can call them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from pipeline.synth.fidelity_rubric import SCORES

LEVELS = ("tool", "artifact", "category-only")
HONOURED = ("tool", "artifact")      # a step that uses something its skill names


@dataclass(frozen=True)
class FidelityFigures:
    tasks: int
    steps: int
    levels: dict[str, int]           # fidelity level -> composed steps at that level
    honoured_share: float            # steps at "tool" or "artifact" / all steps (0.0 for none)
    by_recipe: dict[str, float]      # recipe -> honoured share of its steps


def fidelity_figures(tasks: Iterable[Sequence[Mapping]]) -> FidelityFigures:
    """Figures over the tasks' step records (each a mapping with `fidelity` and `recipe`).
    A record with an unknown level is an error: it would silently count as not honoured."""
    levels: Counter[str] = Counter({lvl: 0 for lvl in LEVELS})
    per_recipe: dict[str, list[int]] = {}
    n_tasks = 0
    for t, steps in enumerate(tasks, 1):
        n_tasks += 1
        for step in steps:
            level = step.get("fidelity")
            if level not in LEVELS:
                raise ValueError(f"task {t}, step {step.get('step', '?')}: fidelity {level!r} is not one of "
                                 f"{', '.join(LEVELS)}")
            levels[level] += 1
            per_recipe.setdefault(str(step.get("recipe")), []).append(level in HONOURED)
    total = sum(levels.values())
    honoured = sum(levels[lvl] for lvl in HONOURED)
    return FidelityFigures(n_tasks, total, dict(levels), honoured / total if total else 0.0,
                           {r: sum(v) / len(v) for r, v in sorted(per_recipe.items())})


@dataclass(frozen=True)
class CategoryCoverage:
    covered: tuple[str, ...]         # categories some task of the batch exercises, in `categories` order
    missing: tuple[str, ...]         # the asked-for categories no task exercises
    tasks_per_category: dict[str, int]


def category_coverage(task_categories: Iterable[Iterable[str]], categories: Sequence[str]) -> CategoryCoverage:
    """Which of `categories` the batch covers; `task_categories[i]` are task i's categories
    (those of its steps' recipe families), each counted once per task."""
    counts = Counter(c for cats in task_categories for c in dict.fromkeys(cats))
    covered = tuple(c for c in categories if counts.get(c))
    missing = tuple(c for c in categories if not counts.get(c))
    return CategoryCoverage(covered, missing, {c: counts.get(c, 0) for c in categories})


def categories_due(accepted_per_category: Mapping[str, int], at_least: int = 10) -> tuple[str, ...]:
    """The categories with at least `at_least` accepted skills: those a large batch should cover."""
    return tuple(sorted(c for c, n in accepted_per_category.items() if n >= at_least))


RUBRIC = tuple(sorted(SCORES, reverse=True))   # 2 exercises, 1 shares a tool or format, 0 unrelated


@dataclass(frozen=True)
class RubricFigures:
    steps: int                       # steps with a rubric score
    counts: dict[int, int]           # score -> steps
    shares: dict[int, float]         # score -> share of the scored steps (0.0 for none)
    unscored: int                    # records written before the rubric (no `score`)


def rubric_figures(tasks: Iterable[Sequence[Mapping]]) -> RubricFigures:
    """The rubric's distribution over the tasks' step records (`score` 0/1/2). A score outside the
    rubric is an error naming the task and step; a record without one is counted as unscored."""
    counts: Counter[int] = Counter({s: 0 for s in RUBRIC})
    unscored = 0
    for t, steps in enumerate(tasks, 1):
        for step in steps:
            score = step.get("score")
            if score is None:
                unscored += 1
                continue
            if score not in RUBRIC:
                raise ValueError(f"task {t}, step {step.get('step', '?')}: rubric score {score!r} is not 0, 1 or 2")
            counts[score] += 1
    total = sum(counts.values())
    return RubricFigures(total, dict(counts), {s: counts[s] / total if total else 0.0 for s in RUBRIC}, unscored)
