"""Path samplers over a :class:`TransitionGraph`: Algorithm 1 and its baselines.

A path is a sequence of transitions ``(src, skill, dst)`` where, except for the random
multi-skill baseline, each step starts where the previous one ended and no node is
visited twice within a path.

Samplers (all seeded, all deterministic for a given seed):

- :func:`sample_inverse_frequency` — SkillSynth's Algorithm 1 (PAPERS.md §1). Global visit
  counts ν (nodes) and μ (skills) persist across calls: pass the counts a previous call
  returned. The start node is drawn ∝ (ν+1)^-1 among nodes with out-degree > 0; each next
  transition u --s--> v among u's transitions to nodes not yet on the path is drawn
  ∝ (μ(s)+1)^-1 · (ν(v)+1)^-1. Each path draws a target length uniformly in
  [min_len, max_len] and stops there or at a dead end. Counts are updated after each path
  (every node on it, start included, and every skill used).
- :func:`sample_random_walk` — uniform over out-transitions (so it favours high-degree
  nodes), start uniform over nodes with out-edges, same no-revisit and length rules.
- :func:`sample_single_skill` — one uniformly chosen transition per path.
- :func:`sample_random_multi_skill` — a chain of uniformly chosen transitions that ignores
  connectivity (distinct transitions within a path).
- :func:`networkx_random_walk` — the random walk written naively on a networkx graph; the
  baseline that ``bench/sampling_speed.py`` measures against.

Short paths. A walk that hits a dead end before ``min_len`` steps is retried from a new
start, at most ``MAX_RETRIES`` attempts per path (the target length is kept). If every
attempt stays short, the longest attempt is kept as it is — possibly shorter than
``min_len``, in a degenerate graph even empty — rather than looping forever. Only the kept
attempt updates the counts. :func:`short_paths` counts such paths and says why each stopped.

How hubs (scenarios with thousands of out-transitions) stay cheap, and how the numba
kernels are seeded, is described in :mod:`pipeline.graph.sampling_kernels`.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from pipeline.graph.sampling_kernels import (
    inverse_frequency_kernel,
    random_multi_skill_kernel,
    random_walk_kernel,
    single_skill_kernel,
)
from pipeline.graph.transitions import TransitionGraph

HUB_DEGREE = 64          # out-degree from which inverse frequency samples by snapshot + rejection
MAX_RETRIES = 16         # attempts per path to reach min_len before keeping a short path


@dataclass
class Paths:
    """Sampled paths as flat step arrays: path i is steps ``ptr[i]:ptr[i+1]``."""
    ptr: np.ndarray    # int64, n_paths + 1
    src: np.ndarray    # int32 per step
    skill: np.ndarray  # int32 per step
    dst: np.ndarray    # int32 per step

    def __len__(self) -> int:
        return int(self.ptr.size) - 1

    @property
    def n_steps(self) -> int:
        return int(self.ptr[-1])

    def lengths(self) -> np.ndarray:
        return np.diff(self.ptr)

    def path(self, i: int) -> list[tuple[int, int, int]]:
        if not 0 <= i < len(self):
            raise IndexError(i)
        a, b = int(self.ptr[i]), int(self.ptr[i + 1])
        return list(zip(self.src[a:b].tolist(), self.skill[a:b].tolist(), self.dst[a:b].tolist()))

    @classmethod
    def empty(cls) -> "Paths":
        z = np.zeros(0, dtype=np.int32)
        return cls(np.zeros(1, dtype=np.int64), z, z.copy(), z.copy())


@dataclass(frozen=True)
class ShortPaths:
    """Paths shorter than ``min_len`` and why each walk stopped there."""
    min_len: int
    count: int = 0
    dead_end: int = 0          # the last cluster reached has no out-transition at all
    dead_end_clusters: int = 0  # how many distinct clusters those walks ended in
    revisit: int = 0           # every way on from the last cluster leads back onto the path
    other: int = 0             # neither (a sampler that ignores connectivity ran out of transitions)


def short_paths(g: TransitionGraph, paths: Paths, min_len: int) -> ShortPaths:
    """Count the paths of fewer than ``min_len`` steps and say, per path, why the walk could
    not go on from where it ended (used by `workbench sample` to report short paths)."""
    ptr = np.asarray(paths.ptr)
    lengths = np.diff(ptr)
    short = np.flatnonzero(lengths < min_len)
    if short.size == 0:
        return ShortPaths(int(min_len))
    deg = g.out_degree()
    dead, revisit, other, ends = 0, 0, 0, set()
    for i in short.tolist():
        a, b = int(ptr[i]), int(ptr[i + 1])
        if a == b:
            other += 1
            continue
        last = int(paths.dst[b - 1])
        if deg[last] == 0:
            dead += 1
            ends.add(last)
            continue
        on_path = {int(paths.src[a]), *np.asarray(paths.dst[a:b]).tolist()}
        if set(g.dest[g.indptr[last]:g.indptr[last + 1]].tolist()) <= on_path:
            revisit += 1
        else:
            other += 1
    return ShortPaths(int(min_len), int(short.size), dead, len(ends), revisit, other)


# --------------------------------------------------------------------------- public API

def _seed32(seed) -> int:
    return int(seed) & 0xFFFFFFFF


def _check_lengths(min_len: int, max_len: int) -> tuple[int, int]:
    min_len, max_len = int(min_len), int(max_len)
    if min_len < 1 or max_len < min_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got {min_len}, {max_len}")
    return min_len, max_len


def _check_startable(g: TransitionGraph, n_paths: int) -> int:
    n_paths = int(n_paths)
    if n_paths < 0:
        raise ValueError("n_paths must be >= 0")
    if n_paths and g.n_edges == 0:
        raise ValueError("the graph has no transitions to sample")
    return n_paths


def _paths(ptr, src, skill, dst) -> Paths:
    return Paths(np.asarray(ptr, dtype=np.int64), np.array(src, dtype=np.int32),
                 np.array(skill, dtype=np.int32), np.array(dst, dtype=np.int32))


def _counts(counts, n: int, what: str) -> np.ndarray:
    if counts is None:
        return np.zeros(n, dtype=np.int64)
    c = np.array(counts, dtype=np.int64)  # a copy: the caller's array is never changed
    if c.shape != (n,):
        raise ValueError(f"{what} must have shape ({n},), got {c.shape}")
    if c.size and c.min() < 0:
        raise ValueError(f"{what} must be non-negative")
    return c


def sample_inverse_frequency(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2, max_len: int = 6,
                             node_counts=None, skill_counts=None,
                             ) -> tuple[Paths, np.ndarray, np.ndarray]:
    """Algorithm 1 (see the module docstring). Returns the paths and updated copies of the
    node counts ν and skill counts μ; pass those to the next call to continue the same
    sampling run."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    nu = _counts(node_counts, g.n_nodes, "node_counts")
    mu = _counts(skill_counts, g.n_skills, "skill_counts")
    if n_paths == 0:
        return Paths.empty(), nu, mu
    ptr, src, sk, dst = inverse_frequency_kernel(
        g.indptr, g.skill, g.dest, g.n_nodes, n_paths, _seed32(seed), min_len, max_len,
        nu, mu, HUB_DEGREE, MAX_RETRIES)
    return _paths(ptr, src, sk, dst), nu, mu


def sample_random_walk(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2, max_len: int = 6) -> Paths:
    """Uniform random walk without revisits (baseline that favours high-degree nodes)."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*random_walk_kernel(g.indptr, g.skill, g.dest, g.n_nodes, n_paths, _seed32(seed),
                                       min_len, max_len, MAX_RETRIES))


def sample_single_skill(g: TransitionGraph, n_paths: int, seed: int) -> Paths:
    """Each path is one transition drawn uniformly among all transitions."""
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*single_skill_kernel(g.edge_src(), g.skill, g.dest, n_paths, _seed32(seed)))


def sample_random_multi_skill(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2,
                              max_len: int = 6) -> Paths:
    """Chains of distinct transitions drawn uniformly among all transitions, ignoring
    connectivity: ``src`` of step t+1 need not equal ``dst`` of step t. A path has at most
    as many steps as the graph has transitions."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*random_multi_skill_kernel(g.edge_src(), g.skill, g.dest, n_paths, _seed32(seed),
                                              min_len, max_len))


def networkx_random_walk(G, n_paths: int, seed: int, min_len: int = 2, max_len: int = 6) -> Paths:
    """The random walk of :func:`sample_random_walk`, written plainly on a networkx
    MultiDiGraph (edge attribute ``skill``) with ``random.Random(seed)``: the benchmark
    baseline. Same rules (no revisit, target length, bounded retries); a different random
    stream, so different paths."""
    min_len, max_len = _check_lengths(min_len, max_len)
    rng = random.Random(seed)
    starts = [n for n in G.nodes if G.out_degree(n) > 0]
    if n_paths and not starts:
        raise ValueError("the graph has no transitions to sample")
    ptr, src, sk, dst = [0], [], [], []
    for _ in range(n_paths):
        target_len = rng.randint(min_len, max_len)
        best: list = []
        for _r in range(MAX_RETRIES):
            u = rng.choice(starts)
            visited = {u}
            steps = []
            while len(steps) < target_len:
                cands = [(v, d["skill"]) for _, v, d in G.out_edges(u, data=True) if v not in visited]
                if not cands:
                    break
                v, s = rng.choice(cands)
                steps.append((u, s, v))
                visited.add(v)
                u = v
            if len(steps) > len(best) or not best:
                best = steps
            if len(steps) >= min_len:
                break
        for u, s, v in best:
            src.append(u)
            sk.append(s)
            dst.append(v)
        ptr.append(len(src))
    return _paths(ptr, src, sk, dst)
