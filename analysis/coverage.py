"""Coverage of the (scenario, skill) space by sampled paths: pure functions over ``Paths``.

A path step ``u --s--> v`` covers the pair (u, s): the scenario a skill is applied from and
the skill. The universe is every (node, skill) pair that exists as a transition in the
graph, ``TransitionGraph.pair_universe()``; metrics that speak of "all possible pairs"
count that many, unseen pairs included. Logarithms are natural (KL in nats).

For paths with no steps, entropy, Gini and KL are NaN (no distribution to measure).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # analysis/ reads the samplers' output; it does not need them to run
    from pipeline.graph.sampling import Paths


def _keys(paths: "Paths") -> np.ndarray:
    return (np.asarray(paths.src, dtype=np.int64) << 32) | np.asarray(paths.skill, dtype=np.int64)


def _counts(paths: "Paths") -> np.ndarray:
    """Counts of each observed pair (order unspecified)."""
    if len(paths.src) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(_keys(paths), return_counts=True)[1]


def _checked_counts(paths: "Paths", universe_size: int) -> np.ndarray:
    universe_size = int(universe_size)
    if universe_size < 1:
        raise ValueError("universe_size must be >= 1")
    c = _counts(paths)
    if c.size > universe_size:
        raise ValueError(f"{c.size} distinct pairs observed but universe_size is {universe_size}")
    return c


def pair_counts(paths: "Paths", n_nodes: int, n_skills: int) -> dict[tuple[int, int], int]:
    """``{(src node, skill): steps}`` over all steps of all paths."""
    src = np.asarray(paths.src, dtype=np.int64)
    skill = np.asarray(paths.skill, dtype=np.int64)
    if src.size and (src.min() < 0 or src.max() >= n_nodes or skill.min() < 0 or skill.max() >= n_skills):
        raise ValueError("a step lies outside [0, n_nodes) x [0, n_skills)")
    if src.size == 0:
        return {}
    keys, counts = np.unique(src * max(n_skills, 1) + skill, return_counts=True)
    return {(int(k // n_skills), int(k % n_skills)): int(c) for k, c in zip(keys, counts)}


def unique_pairs(paths: "Paths") -> int:
    return int(_counts(paths).size)


def normalized_entropy(paths: "Paths", universe_size: int) -> float:
    """Shannon entropy of the pair distribution divided by log(universe_size): 1 when every
    pair of the universe is hit equally often, 0 when one pair takes every step."""
    c = _checked_counts(paths, universe_size)
    if c.size == 0:
        return float("nan")
    if universe_size == 1:
        return 1.0  # the only possible distribution is the uniform one
    p = c / c.sum()
    return float(-(p * np.log(p)).sum() / np.log(universe_size))


def gini(paths: "Paths", universe_size: int) -> float:
    """Gini coefficient of the per-pair step counts over the whole universe (unseen pairs
    count as zeros): 0 for perfectly even coverage, (U-1)/U when one pair takes it all."""
    c = _checked_counts(paths, universe_size)
    if c.size == 0:
        return float("nan")
    n = int(universe_size)
    x = np.concatenate([np.zeros(n - c.size), np.sort(c).astype(np.float64)])
    i = np.arange(1, n + 1, dtype=np.float64)
    return float(((2 * i - n - 1) * x).sum() / (n * x.sum()))


def kl_to_uniform(paths: "Paths", universe_size: int) -> float:
    """KL(p || uniform over the universe) = log(U) - H(p), in nats."""
    c = _checked_counts(paths, universe_size)
    if c.size == 0:
        return float("nan")
    p = c / c.sum()
    return float(max(0.0, (p * np.log(p * universe_size)).sum()))


def coverage_growth(paths: "Paths") -> np.ndarray:
    """Unique pairs after each path (int64, one entry per path; non-decreasing)."""
    n_paths = len(paths.ptr) - 1
    if len(paths.src) == 0:
        return np.zeros(n_paths, dtype=np.int64)
    _, first = np.unique(_keys(paths), return_index=True)
    path_of_step = np.searchsorted(np.asarray(paths.ptr), first, side="right") - 1
    return np.cumsum(np.bincount(path_of_step, minlength=n_paths)).astype(np.int64)


def compare_samplers(results: dict[str, "Paths"], universe_size: int) -> pd.DataFrame:
    """One row per sampler (index = its name) with every metric."""
    rows = []
    for name, paths in results.items():
        lengths = np.diff(np.asarray(paths.ptr))
        u = unique_pairs(paths)
        rows.append({
            "sampler": name,
            "paths": int(lengths.size),
            "steps": int(lengths.sum()),
            "mean_length": float(lengths.mean()) if lengths.size else float("nan"),
            "unique_pairs": u,
            "coverage": u / universe_size,
            "normalized_entropy": normalized_entropy(paths, universe_size),
            "gini": gini(paths, universe_size),
            "kl_to_uniform": kl_to_uniform(paths, universe_size),
        })
    cols = ["sampler", "paths", "steps", "mean_length", "unique_pairs", "coverage",
            "normalized_entropy", "gini", "kl_to_uniform"]
    return pd.DataFrame(rows, columns=cols).set_index("sampler")
