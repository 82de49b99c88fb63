"""How faithfully a synthesis batch honours its skills: the share of composed steps that use a
tool or a state kind named by the skill they serve, and which categories the batch's tasks cover.

Pure functions of the per-step `skill_fidelity` records (task.toml metadata, the store, the
`tasks export` rows) and of category lists, so a page, a test or a script can call them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

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


# --- what a reader sees per step, and what no generator could exercise --------------------------------

SCORE_LABELS = {2: "2 · exercises the skill", 1: "1 · shares a tool or format", 0: "0 · unrelated"}


def step_rubric_rows(fidelity: Sequence[Mapping] | None) -> pd.DataFrame:
    """One row per composed step: its skill, rubric score, how it uses the skill, and side by side the
    SKILL.md line and the solution line the score rests on (2 only); a connective step says why no
    step exercises its skill (`gap`)."""
    cols = ["step", "skill", "score", "how", "SKILL.md says", "solution runs"]
    rows = []
    for f in fidelity or ():
        ev = f.get("evidence") or {}
        score = f.get("score")
        how = ev.get("note") or ""
        if score is not None and score < 2 and f.get("gap"):
            how = f"connective; no step exercises it: {f['gap']}"
        rows.append({"step": int(f.get("step", 0)), "skill": f.get("skill_name") or f.get("skill_id", ""),
                     "score": SCORE_LABELS.get(score, "not scored"), "how": how,
                     "SKILL.md says": ev.get("skill_quote", ""), "solution runs": ev.get("solution_quote", "")})
    return pd.DataFrame(rows, columns=cols)


def exercise_gaps(tasks: Iterable[Sequence[Mapping]]) -> pd.DataFrame:
    """Skills of a batch that no step exercised, with why and in how many steps they stood connective."""
    seen: dict[str, dict] = {}
    for steps in tasks:
        for f in steps:
            if f.get("gap"):
                key = f.get("skill_id", "")
                row = seen.setdefault(key, {"skill": f.get("skill_name") or key, "why not exercised": f["gap"],
                                            "steps": 0})
                row["steps"] += 1
    out = pd.DataFrame(list(seen.values()), columns=["skill", "why not exercised", "steps"])
    return out.sort_values(["steps", "skill"], ascending=[False, True], ignore_index=True)


def rubric_split_figure(figures: RubricFigures) -> go.Figure:
    """Steps by rubric score: a horizontal bar each, the claimed ones (2) first."""
    labels = [SCORE_LABELS[s] for s in RUBRIC]
    values = [figures.counts.get(s, 0) for s in RUBRIC]
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h", marker_color=["#2a9d8f", "#e9c46a", "#e76f51"],
                           text=[f"{v} ({figures.shares.get(s, 0):.0%})" for v, s in zip(values, RUBRIC)],
                           textposition="outside", cliponaxis=False,
                           hovertemplate="%{y}: %{x} steps<extra></extra>"))
    fig.update_layout(title=dict(text=f"Steps by fidelity score ({figures.steps} scored)", x=0, font=dict(size=15)),
                      height=220, margin=dict(l=0, r=40, t=40, b=0), xaxis=dict(tickformat="d", rangemode="tozero"),
                      yaxis=dict(autorange="reversed"))
    return fig
