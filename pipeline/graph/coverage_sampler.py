"""The coverage-aware sampler: walks steered to the (scenario, skill) pairs not yet covered.

Algorithm 1 (:func:`pipeline.graph.sampling.sample_inverse_frequency`, kept as the paper has
it) evens out visits to nodes and skills separately; what training data should cover is
their product, the pair (u, s) a step ``u --s--> v`` applies. This sampler keeps a count
c(p) per pair p of the graph (``pair_index``) and weighs by it directly:

- pair weight ``w(c) = 1`` while a pair is uncovered, ``COVERED_WEIGHT / (c + 1)`` once
  covered, so uncovered pairs win by ~1000x and, when every pair is covered, draws fall
  back to inverse frequency over pairs;
- open mass ``S(u)`` = Σ w over u's out-transitions: how much is still to be had from u;
- two steps of look-ahead: ``O(u)`` = how many of u's uncovered out-transitions lead to a
  node that still has an uncovered pair; the reach of v is
  ``LOOKAHEAD + min(1, S(v)) + TWO_STEP · min(1, O(v))``;
- step u --e--> v (v not on the path) ∝ ``w(c(pair(e))) · reach(v)``: a walk prefers
  destinations from which uncovered pairs can still be taken, and then taken again, so it
  runs less often into covered or dead-end territory (where it has to repeat pairs to
  reach its length);
- start ∝ ``S(u) + TWO_STEP · O(u)`` among nodes with out-transitions.

Counts start from ``pair_counts`` (the batch so far; `workbench sample` can also pass the
pairs of every path stored in the workspace) and are updated after each kept path, like
Algorithm 1's. Length, no-revisit and retry rules are the random walk's (see
:mod:`pipeline.graph.sampling`), so budgets in paths compare like for like.

Speed: every weight above only goes down while a call runs (counts only grow), so the
snapshot + rejection scheme of :mod:`pipeline.graph.sampling_kernels` applies unchanged in
idea: hubs (out-degree >= ``HUB_DEGREE``) and the start draw propose from a snapshot of
their weights and accept with probability w_now / w_snapshot. S is kept up to date in O(1)
per counted step; O changes when a pair is first covered (its transitions leave O of its
node) and when a node's last uncovered pair goes (its uncovered in-transitions leave O of
their sources): each happens once per pair and node, so O costs O(E) over a whole call.
Seeded inside the jitted kernel, so a seed fixes paths and counts. The constants were set
on the demo and dev-corpus graphs (notebooks/sampler_study.ipynb, bench/README.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.graph.sampling import (
    HUB_DEGREE,
    MAX_RETRIES,
    Paths,
    _check_lengths,
    _check_startable,
    _paths,
    _seed32,
)
from pipeline.graph.sampling_kernels import _REJECT_TRIES, _bsearch
from pipeline.graph.transitions import TransitionGraph

COVERED_WEIGHT = 0.001   # a covered pair's weight relative to an uncovered one (before 1/(c + 1))
LOOKAHEAD = 0.05         # weight of a step whose destination has nothing uncovered left
TWO_STEP = 10.0          # weight of the second step of look-ahead, relative to the first (4.0 until the
                         # dev graph grew with issue 25's curation: 1.29x there at 200 paths, 1.32x with 10)


def pair_index(g: TransitionGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph's distinct (source node, skill) pairs: ``(pair_of_edge, pair_src, pair_skill)``
    — the pair id of every transition in CSR order, and each pair's node and skill, pairs
    numbered in (node, skill) order. ``pair_src.size == g.pair_universe()``."""
    if g.n_edges == 0:
        z = np.zeros(0, dtype=np.int32)
        return z, z.copy(), z.copy()
    keys = g.edge_src().astype(np.int64) * max(g.n_skills, 1) + g.skill
    uniq, pair_of = np.unique(keys, return_inverse=True)
    n_sk = max(g.n_skills, 1)
    return (pair_of.astype(np.int32), (uniq // n_sk).astype(np.int32), (uniq % n_sk).astype(np.int32))


def pair_counts_of(g: TransitionGraph, src, skill) -> np.ndarray:
    """Counts per pair id (``pair_index`` numbering) of the steps ``(src[i], skill[i])``;
    steps whose pair is not in the graph (a path from an older build) are left out."""
    _, p_src, p_skill = pair_index(g)
    counts = np.zeros(p_src.size, dtype=np.int64)
    src = np.asarray(src, dtype=np.int64)
    skill = np.asarray(skill, dtype=np.int64)
    if src.size == 0 or p_src.size == 0:
        return counts
    n_sk = max(g.n_skills, 1)
    keys = p_src.astype(np.int64) * n_sk + p_skill
    ok = (src >= 0) & (src < g.n_nodes) & (skill >= 0) & (skill < g.n_skills)
    want = src[ok] * n_sk + skill[ok]
    at = np.searchsorted(keys, want)
    hit = (at < keys.size) & (keys[np.minimum(at, keys.size - 1)] == want)
    np.add.at(counts, at[hit], 1)
    return counts


def sample_coverage_aware(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2, max_len: int = 6,
                          pair_counts=None) -> tuple[Paths, np.ndarray]:
    """Walks steered to uncovered pairs (see the module docstring). ``pair_counts`` (per pair
    id of :func:`pair_index`; default all zero) is not changed: an updated copy is returned
    with the paths, to pass to the next call of the same run."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    pair_of, pair_src, _ = pair_index(g)
    if pair_counts is None:
        counts = np.zeros(pair_src.size, dtype=np.int64)
    else:
        counts = np.array(pair_counts, dtype=np.int64)   # a copy: the caller's array is never changed
        if counts.shape != (pair_src.size,):
            raise ValueError(f"pair_counts must have shape ({pair_src.size},) (the graph's pairs), got {counts.shape}")
        if counts.size and counts.min() < 0:
            raise ValueError("pair_counts must be non-negative")
    if n_paths == 0:
        return Paths.empty(), counts
    # the transitions of each pair, and those into each node, as CSR over transition ids
    pair_edges = np.argsort(pair_of, kind="stable").astype(np.int64)
    pair_ptr = np.concatenate([[0], np.cumsum(np.bincount(pair_of, minlength=pair_src.size))]).astype(np.int64)
    in_edges = np.argsort(g.dest, kind="stable").astype(np.int64)
    in_ptr = np.concatenate([[0], np.cumsum(np.bincount(g.dest, minlength=g.n_nodes))]).astype(np.int64)
    ptr, src, sk, dst = coverage_kernel(
        g.indptr, g.skill, g.dest, g.edge_src(), pair_of, pair_src, pair_ptr, pair_edges, in_ptr, in_edges,
        g.n_nodes, n_paths, _seed32(seed), min_len, max_len, counts, HUB_DEGREE, MAX_RETRIES,
        COVERED_WEIGHT, LOOKAHEAD, TWO_STEP)
    return _paths(ptr, src, sk, dst), counts


# --------------------------------------------------------------------------- the kernel

@njit(cache=True)
def _pair_w(c, covered_w):
    return 1.0 if c == 0 else covered_w / (c + 1.0)


@njit(cache=True)
def _step_w(e, pair_of, dest, cnt, reach, covered_w):
    return _pair_w(cnt[pair_of[e]], covered_w) * reach[dest[e]]


@njit(cache=True)
def _snap(u, indptr, pair_of, dest, cnt, reach, covered_w, w_snap, cum, props, accs):
    """Snapshot hub u's current step weights and their running sums."""
    acc = 0.0
    for e in range(indptr[u], indptr[u + 1]):
        wt = _step_w(e, pair_of, dest, cnt, reach, covered_w)
        w_snap[e] = wt
        acc += wt
        cum[e] = acc
    props[u] = 0
    accs[u] = 0


@njit(cache=True)
def _next(u, indptr, pair_of, dest, deg, cnt, reach, covered_w, stamp, attempt, hub_deg,
          w_snap, cum, props, accs, buf_e, buf_w):
    """Draw u's next transition, or -1 when every way on leads back onto the path."""
    base = indptr[u]
    d = deg[u]
    if d == 0:
        return -1
    if d >= hub_deg:
        for _ in range(_REJECT_TRIES):
            e = base + _bsearch(cum, base, d, np.random.random() * cum[base + d - 1])
            if stamp[dest[e]] == attempt:
                continue
            props[u] += 1
            if np.random.random() * w_snap[e] < _step_w(e, pair_of, dest, cnt, reach, covered_w):
                accs[u] += 1
                return e
            if props[u] >= 32 and 2 * accs[u] < props[u]:   # snapshot too stale: refresh it
                _snap(u, indptr, pair_of, dest, cnt, reach, covered_w, w_snap, cum, props, accs)
        # many redraws (most weight on nodes already on the path): one exact scan decides
    k = 0
    s = 0.0
    for e in range(base, base + d):
        if stamp[dest[e]] != attempt:
            wt = _step_w(e, pair_of, dest, cnt, reach, covered_w)
            if k < buf_e.size:
                buf_e[k] = e
                buf_w[k] = wt
            s += wt
            k += 1
    if k == 0:
        return -1
    x = np.random.random() * s
    if k <= buf_e.size:
        for j in range(k):
            x -= buf_w[j]
            if x < 0.0:
                return buf_e[j]
        return buf_e[k - 1]
    last = -1
    for e in range(base, base + d):     # a hub's allowed set outgrew the buffer: scan again
        if stamp[dest[e]] != attempt:
            last = e
            x -= _step_w(e, pair_of, dest, cnt, reach, covered_w)
            if x < 0.0:
                return e
    return last


@njit(cache=True)
def _refresh(v, deg, open_mass, open2, reach, start_w, lookahead, two_step):
    """v's reach and start weight from its open mass S and two-step count O."""
    reach[v] = lookahead + min(1.0, open_mass[v]) + two_step * min(1.0, open2[v])
    start_w[v] = open_mass[v] + two_step * open2[v] if deg[v] > 0 else 0.0


@njit(cache=True)
def _start_snap(n_nodes, start_w, s_w, s_cum):
    acc = 0.0
    for v in range(n_nodes):
        s_w[v] = start_w[v]
        acc += start_w[v]
        s_cum[v] = acc


@njit(cache=True)
def _count(e, pair_of, pair_src, pair_ptr, pair_edges, in_ptr, in_edges, edge_src, dest, deg, cnt, n_open,
           open_mass, open2, reach, start_w, covered_w, lookahead, two_step):
    """Count the pair of transition e and bring S, O, reach and start weights up to date
    (every one of them only falls)."""
    q = pair_of[e]
    a = pair_src[q]
    before = _pair_w(cnt[q], covered_w)
    cnt[q] += 1
    mult = pair_ptr[q + 1] - pair_ptr[q]
    open_mass[a] = max(0.0, open_mass[a] + mult * (_pair_w(cnt[q], covered_w) - before))
    if cnt[q] == 1:      # first covered: its transitions leave O(a)
        for j in range(pair_ptr[q], pair_ptr[q + 1]):
            if n_open[dest[pair_edges[j]]] > 0:
                open2[a] -= 1.0
        n_open[a] -= 1
        if n_open[a] == 0:   # a's last uncovered pair: uncovered transitions into a leave O of their sources
            for j in range(in_ptr[a], in_ptr[a + 1]):
                f = in_edges[j]
                if cnt[pair_of[f]] == 0:
                    b = edge_src[f]
                    open2[b] -= 1.0
                    _refresh(b, deg, open_mass, open2, reach, start_w, lookahead, two_step)
    _refresh(a, deg, open_mass, open2, reach, start_w, lookahead, two_step)


@njit(cache=True)
def coverage_kernel(indptr, skill, dest, edge_src, pair_of, pair_src, pair_ptr, pair_edges, in_ptr, in_edges,
                    n_nodes, n_paths, seed, min_len, max_len, cnt, hub_deg, max_retries, covered_w, lookahead,
                    two_step):
    np.random.seed(seed)
    n_edges = skill.size
    deg = indptr[1:] - indptr[:-1]
    open_mass = np.zeros(n_nodes)
    n_open = np.zeros(n_nodes, dtype=np.int64)     # uncovered pairs per node
    for q in range(pair_src.size):
        if cnt[q] == 0:
            n_open[pair_src[q]] += 1
    open2 = np.zeros(n_nodes)
    for e in range(n_edges):
        u = edge_src[e]
        open_mass[u] += _pair_w(cnt[pair_of[e]], covered_w)
        if cnt[pair_of[e]] == 0 and n_open[dest[e]] > 0:
            open2[u] += 1.0
    reach = np.zeros(n_nodes)
    start_w = np.zeros(n_nodes)
    for v in range(n_nodes):
        _refresh(v, deg, open_mass, open2, reach, start_w, lookahead, two_step)
    s_w = np.zeros(n_nodes)
    s_cum = np.zeros(n_nodes)
    _start_snap(n_nodes, start_w, s_w, s_cum)
    s_props = 0
    s_accs = 0
    w_snap = np.zeros(n_edges)
    cum = np.zeros(n_edges)
    props = np.zeros(n_nodes, dtype=np.int64)
    accs = np.zeros(n_nodes, dtype=np.int64)
    for u in range(n_nodes):
        if deg[u] >= hub_deg:
            _snap(u, indptr, pair_of, dest, cnt, reach, covered_w, w_snap, cum, props, accs)

    stamp = np.full(n_nodes, -1, dtype=np.int64)
    buf_e = np.empty(max(hub_deg, 1), dtype=np.int64)
    buf_w = np.empty(max(hub_deg, 1))
    o_src = np.empty(n_paths * max_len, dtype=np.int32)
    o_sk = np.empty(n_paths * max_len, dtype=np.int32)
    o_dst = np.empty(n_paths * max_len, dtype=np.int32)
    ptr = np.zeros(n_paths + 1, dtype=np.int64)
    c_e = np.empty(max_len, dtype=np.int64)
    b_e = np.empty(max_len, dtype=np.int64)
    attempt = 0
    out = 0
    for p in range(n_paths):
        target_len = min_len + np.random.randint(0, max_len - min_len + 1)
        best_len = -1
        for _r in range(max_retries):
            attempt += 1
            # start ∝ start_w: propose from the snapshot, accept with now / snapshot
            while True:
                u = _bsearch(s_cum, 0, n_nodes, np.random.random() * s_cum[n_nodes - 1])
                s_props += 1
                if s_w[u] > 0.0 and np.random.random() * s_w[u] < start_w[u]:
                    s_accs += 1
                    break
                if s_props >= 32 and 2 * s_accs < s_props:
                    _start_snap(n_nodes, start_w, s_w, s_cum)
                    s_props = 0
                    s_accs = 0
            stamp[u] = attempt
            k = 0
            while k < target_len:
                e = _next(u, indptr, pair_of, dest, deg, cnt, reach, covered_w, stamp, attempt, hub_deg,
                          w_snap, cum, props, accs, buf_e, buf_w)
                if e < 0:
                    break
                c_e[k] = e
                k += 1
                u = dest[e]
                stamp[u] = attempt
            if k > best_len:
                best_len = k
                for j in range(k):
                    b_e[j] = c_e[j]
            if k >= min_len:
                break
        for j in range(best_len):
            e = b_e[j]
            o_src[out] = edge_src[e]
            o_sk[out] = skill[e]
            o_dst[out] = dest[e]
            out += 1
            _count(e, pair_of, pair_src, pair_ptr, pair_edges, in_ptr, in_edges, edge_src, dest, deg, cnt, n_open,
                   open_mass, open2, reach, start_w, covered_w, lookahead, two_step)
        ptr[p + 1] = out
    return ptr, o_src[:out], o_sk[:out], o_dst[:out]
