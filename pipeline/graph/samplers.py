"""The path samplers by name: the names, in a module light enough for the CLI parser and the
dashboard, and :func:`draw`, the one place a name becomes a sampler call (the samplers load
numba, so they are imported only when drawing)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from pipeline.graph.sampling import Paths
    from pipeline.graph.transitions import TransitionGraph

SAMPLERS = ("inverse-frequency", "random-walk", "single-skill", "random-multi-skill", "coverage-aware")

# Where the coverage-aware sampler looks for pairs already covered: only the paths of the
# batch being drawn, or also every path stored in the workspace.
UNCOVERED_IN = ("batch", "workspace")


@dataclass
class DrawState:
    """The counts a sampling run carries from one draw to the next: Algorithm 1's node and
    skill visits, the coverage-aware sampler's pair counts (None: all zero). ``draw``
    replaces them with the updated copies; the other samplers leave them alone."""
    node_counts: "np.ndarray | None" = None
    skill_counts: "np.ndarray | None" = None
    pair_counts: "np.ndarray | None" = None


def draw(g: "TransitionGraph", sampler: str, n: int, seed: int, min_len: int = 2, max_len: int = 6,
         state: DrawState | None = None) -> "Paths":
    """``n`` paths of ``sampler`` (one of SAMPLERS); a single-skill path is one step whatever
    the lengths. Pass one ``state`` to successive calls to continue a run (a fresh one when
    omitted)."""
    from pipeline.graph import coverage_sampler, sampling
    state = state if state is not None else DrawState()
    if sampler == "inverse-frequency":
        paths, state.node_counts, state.skill_counts = sampling.sample_inverse_frequency(
            g, n, seed, min_len=min_len, max_len=max_len, node_counts=state.node_counts,
            skill_counts=state.skill_counts)
        return paths
    if sampler == "coverage-aware":
        paths, state.pair_counts = coverage_sampler.sample_coverage_aware(
            g, n, seed, min_len=min_len, max_len=max_len, pair_counts=state.pair_counts)
        return paths
    if sampler == "random-walk":
        return sampling.sample_random_walk(g, n, seed, min_len, max_len)
    if sampler == "single-skill":
        return sampling.sample_single_skill(g, n, seed)
    if sampler == "random-multi-skill":
        return sampling.sample_random_multi_skill(g, n, seed, min_len, max_len)
    raise ValueError(f"unknown sampler '{sampler}' (choose from {', '.join(SAMPLERS)})")
