"""The sampler study: every sampler at equal budgets on one graph, pure functions over paths.

For each sampler of ``pipeline.graph.samplers.SAMPLERS``, ``draw_study`` draws ``budget``
paths under each of a few seeds (fresh counts for every draw: a study never reads or
changes the workspace's visit counts). The measures (``analysis.coverage``) are then:

- unique (scenario, skill) pairs the batch covers, the share of the graph's pair universe,
  and the normalised entropy of the pair distribution (1 = every pair equally often);
- the growth curve: unique pairs after each path, averaged over the seeds;
- ratios of unique pairs at the same number of paths: vs the random walk (the issue's
  target for the coverage-aware sampler: 1.3x) and vs single-skill (SkillSynth reports
  +31%, PAPERS.md §1). Paths differ in length, so the table also gives both ratios at the
  same number of *steps*: the reference's paths are drawn on (a long draw of each) until they
  have as many steps as the sampler's batch, which is what a per-step coverage claim compares
  (a sampler that only draws longer paths wins at equal paths, not at equal steps).

Figures for it are in :mod:`analysis.sampler_study_figures`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.coverage import coverage_growth, normalized_entropy, unique_pairs

if TYPE_CHECKING:
    from pipeline.graph.sampling import Paths
    from pipeline.graph.transitions import TransitionGraph

SKILLSYNTH_VS_SINGLE_SKILL = 1.31   # PAPERS.md §1: +31% unique scenario-skill coverage over single-skill
TARGET_VS_RANDOM_WALK = 1.3         # the target for the coverage-aware sampler
PAPER_SCALE_ALGORITHM1_VS_RW = 1.10  # Algorithm 1 over the random walk on bench/sampling_speed.py's graph
BASELINE = "random-walk"
SINGLE = "single-skill"
COLUMNS = ["paths", "steps", "mean_length", "unique_pairs", "unique_pairs_sd", "coverage", "normalized_entropy",
           "vs_random_walk", "vs_random_walk_equal_steps", "vs_single_skill", "vs_single_skill_equal_steps"]


@dataclass
class StudyDraws:
    """Paths per sampler and seed at one budget, on a graph of ``universe`` pairs; the
    single-skill and random-walk references for equal steps are drawn long enough for every
    sampler (``walk_long`` empty: that ratio is NaN)."""
    budget: int
    universe: int
    draws: dict[str, list["Paths"]]
    single_long: list["Paths"]
    walk_long: list["Paths"] = field(default_factory=list)


def draw_study(g: "TransitionGraph", budget: int, seeds=(0, 1, 2), samplers=None, min_len: int = 2,
               max_len: int = 6) -> StudyDraws:
    """Every sampler (default: all of SAMPLERS) at ``budget`` paths under each seed."""
    from pipeline.graph.samplers import SAMPLERS, draw   # numba: loaded only to draw
    names = list(samplers or SAMPLERS)
    if budget < 1:
        raise ValueError(f"budget must be >= 1 path, got {budget}")
    if not seeds:
        raise ValueError("need at least one seed")
    if g.n_edges == 0:
        raise ValueError("the graph has no transitions to sample: build it first (`workbench graph build`)")
    draws = {name: [draw(g, name, budget, int(s), min_len, max_len) for s in seeds] for name in names}
    # every path has at least one step, so budget * max_len of them reach any sampler's steps
    single_long = [draw(g, SINGLE, budget * max_len, int(s)) for s in seeds]
    walk_long = [draw(g, BASELINE, budget * max_len, int(s), min_len, max_len) for s in seeds]
    return StudyDraws(int(budget), g.pair_universe(), draws, single_long, walk_long)


def unique_at_steps(long_runs: list["Paths"], steps: float) -> float:
    """Unique pairs a reference reaches in its first whole paths that hold ``steps`` steps
    (the first prefix with at least that many; all of a draw that has fewer), mean over seeds;
    NaN without a reference."""
    k = int(round(steps))
    if not long_runs:
        return float("nan")
    if k <= 0:
        return 0.0
    out = []
    for p in long_runs:
        if len(p) == 0:
            out.append(0.0)
            continue
        upto = min(int(np.searchsorted(np.asarray(p.ptr)[1:], k, side="left")), len(p) - 1)
        out.append(float(coverage_growth(p)[upto]))
    return float(np.mean(out))


def study_table(study: StudyDraws) -> pd.DataFrame:
    """One row per sampler (index = its name), means over the seeds; a ratio is NaN when its
    reference sampler is not in the study."""
    rows = {}
    for name, runs in study.draws.items():
        u = np.array([unique_pairs(p) for p in runs], dtype=np.float64)
        steps = np.array([p.n_steps for p in runs], dtype=np.float64)
        rows[name] = {
            "paths": study.budget,
            "steps": float(steps.mean()),
            "mean_length": float(steps.mean() / study.budget),
            "unique_pairs": float(u.mean()),
            "unique_pairs_sd": float(u.std()),
            "coverage": float(u.mean() / study.universe) if study.universe else float("nan"),
            "normalized_entropy": float(np.nanmean([normalized_entropy(p, study.universe) for p in runs]))
            if study.universe else float("nan"),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    for ref, col in ((BASELINE, "vs_random_walk"), (SINGLE, "vs_single_skill")):
        table[col] = table["unique_pairs"] / table.loc[ref, "unique_pairs"] if ref in table.index else np.nan
    for col, long_runs in (("vs_single_skill_equal_steps", study.single_long),
                           ("vs_random_walk_equal_steps", study.walk_long)):
        table[col] = [r.unique_pairs / denom if (denom := unique_at_steps(long_runs, r.steps)) else np.nan
                      for r in table.itertuples()]
    table.index.name = "sampler"
    return table[COLUMNS]


def growth_frame(study: StudyDraws) -> pd.DataFrame:
    """Long frame ``sampler, paths, unique_pairs`` (mean over seeds after each path) plus
    ``vs_random_walk`` at that many paths (NaN without the random walk)."""
    parts = []
    for name, runs in study.draws.items():
        curves = np.array([coverage_growth(p) for p in runs], dtype=np.float64)
        parts.append(pd.DataFrame({"sampler": name, "paths": np.arange(1, study.budget + 1),
                                   "unique_pairs": curves.mean(axis=0)}))
    frame = pd.concat(parts, ignore_index=True)
    base = frame[frame["sampler"] == BASELINE].set_index("paths")["unique_pairs"]
    frame["vs_random_walk"] = frame["unique_pairs"] / frame["paths"].map(base) if len(base) else np.nan
    return frame


def ratio_at(growth: pd.DataFrame, sampler: str, paths: int) -> float:
    """``sampler``'s unique pairs over the random walk's after ``paths`` paths."""
    row = growth[(growth["sampler"] == sampler) & (growth["paths"] == paths)]
    if row.empty:
        raise ValueError(f"no growth point for {sampler!r} at {paths} paths")
    return float(row["vs_random_walk"].iloc[0])


def ratio_table(growth: pd.DataFrame, budgets) -> pd.DataFrame:
    """Unique pairs vs the random walk per sampler (rows) after each of ``budgets`` paths
    (columns); budgets beyond the study's are left out."""
    have = set(growth["paths"])
    keep = [int(b) for b in budgets if int(b) in have]
    frame = growth[growth["paths"].isin(keep)].pivot(index="sampler", columns="paths", values="vs_random_walk")
    frame.columns = [f"{c} paths" for c in frame.columns]
    return frame


def paper_reference() -> pd.DataFrame:
    """The reported figures the study is read against."""
    return pd.DataFrame([
        {"what": "SkillSynth Algorithm 1 vs single-skill (unique scenario-skill pairs)", "ratio": SKILLSYNTH_VS_SINGLE_SKILL,
         "source": "PAPERS.md §1 (+31%)"},
        {"what": "Algorithm 1 vs random walk on the paper-scale synthetic graph", "ratio": PAPER_SCALE_ALGORITHM1_VS_RW,
         "source": "bench/sampling_speed.py (issue 15)"},
        {"what": "coverage-aware vs random walk: the target", "ratio": TARGET_VS_RANDOM_WALK, "source": "issue 15"},
    ])
