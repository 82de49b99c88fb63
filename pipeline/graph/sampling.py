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
attempt updates the counts.

Hubs. Scenarios such as "a git repository" have thousands of out-transitions; scanning
all of them at every step costs ~100x a normal step. Here:

- random walk: rejection sampling — draw a uniform out-transition and redraw if its
  destination is already on the path (O(1) expected per step); after ``_REJECT_TRIES``
  rejections fall back to one exact scan over the allowed transitions. Both branches are
  uniform over the allowed set, so the result is exact.
- inverse frequency: the weights change after every path, so cumulative weights computed
  once would go stale — but they only ever go down (counts only grow within a call).
  Every node with out-degree >= ``HUB_DEGREE`` therefore keeps a snapshot of its
  transition weights and their running sums; a step proposes a transition from the
  snapshot by binary search (O(log d)) and accepts it with probability
  w_now / w_snapshot <= 1 (a destination already on the path is rejected outright). The
  accepted draw is exactly ∝ the current weights among allowed transitions. When a hub's
  acceptance rate since its last snapshot falls below 1/2 (after >= 32 proposals), its
  snapshot is recomputed from the current counts (O(d), rare: the total weight has to halve
  first). Nothing is updated per path for hubs, so popular destinations with hundreds of
  hub in-edges cost nothing either. After ``_REJECT_TRIES`` failed proposals one exact scan
  over the hub's allowed transitions decides. Nodes below ``HUB_DEGREE`` are scanned
  directly from the counts. The start node is drawn the same way from a snapshot over all
  nodes (weights (ν+1)^-1), so a path costs O(log N) for its start and no per-path update
  of any sampling structure, only the count increments.

The kernels are compiled with numba (``cache=True``) and seed numba's own generator inside
the jitted function (``np.random.seed``), so a seed fixes the paths and the counts; numba's
stream differs from NumPy's, so results differ from a pure-NumPy implementation.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from numba import njit

from pipeline.graph.transitions import TransitionGraph

HUB_DEGREE = 64          # out-degree from which inverse frequency samples by snapshot + rejection
MAX_RETRIES = 16         # attempts per path to reach min_len before keeping a short path
_REJECT_TRIES = 32       # rejected proposals in one step before an exact scan decides


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


# --------------------------------------------------------------------------- kernels

@njit(cache=True)
def _bsearch(cum, base, d, x):
    """Smallest i in [0, d) with cum[base + i] > x (d - 1 if none, through rounding)."""
    lo = 0
    hi = d - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[base + mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _inv_weight(mu, nu, s, v):
    return 1.0 / ((mu[s] + 1.0) * (nu[v] + 1.0))


@njit(cache=True)
def _hub_rebuild(u, indptr, skill, dest, mu, nu, w_stale, cum, props, accs):
    """Snapshot hub u's current weights and their running sums."""
    acc = 0.0
    for e in range(indptr[u], indptr[u + 1]):
        wt = _inv_weight(mu, nu, skill[e], dest[e])
        w_stale[e] = wt
        acc += wt
        cum[e] = acc
    props[u] = 0
    accs[u] = 0


@njit(cache=True)
def _inv_next(u, indptr, skill, dest, deg, mu, nu, stamp, attempt, hub_deg, w_stale, cum, props, accs,
              buf_e, buf_w):
    """Draw u's next transition for Algorithm 1, or -1 at a dead end."""
    base = indptr[u]
    d = deg[u]
    if d == 0:
        return -1
    if d >= hub_deg:
        # Propose from the snapshot (binary search over its running sums), then accept
        # with probability w_now / w_snapshot <= 1: counts only grow, so the snapshot
        # bounds every current weight and the accepted draw is exactly ∝ w_now among the
        # transitions whose destination is not on the path yet.
        for _ in range(_REJECT_TRIES):
            e = base + _bsearch(cum, base, d, np.random.random() * cum[base + d - 1])
            if stamp[dest[e]] == attempt:
                continue
            props[u] += 1
            wn = _inv_weight(mu, nu, skill[e], dest[e])
            if np.random.random() * w_stale[e] < wn:
                accs[u] += 1
                return e
            if props[u] >= 32 and 2 * accs[u] < props[u]:  # snapshot too stale: refresh it
                _hub_rebuild(u, indptr, skill, dest, mu, nu, w_stale, cum, props, accs)
        # many redraws (most weight on nodes already on the path): one exact scan
        s = 0.0
        for e in range(base, base + d):
            if stamp[dest[e]] != attempt:
                s += _inv_weight(mu, nu, skill[e], dest[e])
        if s <= 0.0:
            return -1
        x = np.random.random() * s
        last = -1
        for e in range(base, base + d):
            if stamp[dest[e]] != attempt:
                last = e
                x -= _inv_weight(mu, nu, skill[e], dest[e])
                if x < 0.0:
                    return e
        return last
    k = 0
    s = 0.0
    for e in range(base, base + d):
        v = dest[e]
        if stamp[v] != attempt:
            wt = _inv_weight(mu, nu, skill[e], v)
            buf_e[k] = e
            buf_w[k] = wt
            s += wt
            k += 1
    if k == 0:
        return -1
    x = np.random.random() * s
    for j in range(k):
        x -= buf_w[j]
        if x < 0.0:
            return buf_e[j]
    return buf_e[k - 1]


@njit(cache=True)
def _start_rebuild(n_nodes, deg, nu, s_w, s_cum):
    """Snapshot of the start weights (ν+1)^-1 (0 without out-edges) and their running sums."""
    acc = 0.0
    for v in range(n_nodes):
        wt = 1.0 / (nu[v] + 1.0) if deg[v] > 0 else 0.0
        s_w[v] = wt
        acc += wt
        s_cum[v] = acc


@njit(cache=True)
def _inverse_frequency_kernel(indptr, skill, dest, n_nodes, n_paths, seed, min_len, max_len,
                              nu, mu, hub_deg, max_retries):
    np.random.seed(seed)
    n_edges = skill.size
    deg = indptr[1:] - indptr[:-1]
    # start node: same snapshot + rejection scheme as the hubs, over all nodes
    s_w = np.zeros(n_nodes)
    s_cum = np.zeros(n_nodes)
    _start_rebuild(n_nodes, deg, nu, s_w, s_cum)
    s_props = 0
    s_accs = 0
    w_stale = np.zeros(n_edges)
    cum = np.zeros(n_edges)
    props = np.zeros(n_nodes, dtype=np.int64)
    accs = np.zeros(n_nodes, dtype=np.int64)
    for u in range(n_nodes):
        if deg[u] >= hub_deg:
            _hub_rebuild(u, indptr, skill, dest, mu, nu, w_stale, cum, props, accs)

    stamp = np.full(n_nodes, -1, dtype=np.int64)
    buf_e = np.empty(max(hub_deg, 1), dtype=np.int64)
    buf_w = np.empty(max(hub_deg, 1))
    o_src = np.empty(n_paths * max_len, dtype=np.int32)
    o_sk = np.empty(n_paths * max_len, dtype=np.int32)
    o_dst = np.empty(n_paths * max_len, dtype=np.int32)
    ptr = np.zeros(n_paths + 1, dtype=np.int64)
    c_src = np.empty(max_len, dtype=np.int32)
    c_sk = np.empty(max_len, dtype=np.int32)
    c_dst = np.empty(max_len, dtype=np.int32)
    b_src = np.empty(max_len, dtype=np.int32)
    b_sk = np.empty(max_len, dtype=np.int32)
    b_dst = np.empty(max_len, dtype=np.int32)
    attempt = 0
    out = 0
    for p in range(n_paths):
        target_len = min_len + np.random.randint(0, max_len - min_len + 1)
        best_len = -1
        best_start = -1
        for _r in range(max_retries):
            attempt += 1
            # start node ∝ (ν+1)^-1 among nodes with out-edges: propose from the snapshot,
            # accept with probability (ν_snapshot+1)/(ν_now+1)
            while True:
                u = _bsearch(s_cum, 0, n_nodes, np.random.random() * s_cum[n_nodes - 1])
                s_props += 1
                if s_w[u] > 0.0 and np.random.random() * s_w[u] * (nu[u] + 1.0) < 1.0:
                    s_accs += 1
                    break
                if s_props >= 32 and 2 * s_accs < s_props:
                    _start_rebuild(n_nodes, deg, nu, s_w, s_cum)
                    s_props = 0
                    s_accs = 0
            start = u
            stamp[u] = attempt
            k = 0
            while k < target_len:
                e = _inv_next(u, indptr, skill, dest, deg, mu, nu, stamp, attempt, hub_deg, w_stale, cum,
                              props, accs, buf_e, buf_w)
                if e < 0:
                    break
                c_src[k] = u
                c_sk[k] = skill[e]
                c_dst[k] = dest[e]
                k += 1
                u = dest[e]
                stamp[u] = attempt
            if k > best_len:
                best_len = k
                best_start = start
                for j in range(k):
                    b_src[j] = c_src[j]
                    b_sk[j] = c_sk[j]
                    b_dst[j] = c_dst[j]
            if k >= min_len:
                break
        # append the kept attempt
        for j in range(best_len):
            o_src[out] = b_src[j]
            o_sk[out] = b_sk[j]
            o_dst[out] = b_dst[j]
            out += 1
        ptr[p + 1] = out
        # update the global counts (the snapshots stay valid upper bounds: refreshed lazily)
        for j in range(best_len + 1):
            v = best_start if j == 0 else b_dst[j - 1]
            nu[v] += 1
        for j in range(best_len):
            mu[b_sk[j]] += 1
    return ptr, o_src[:out], o_sk[:out], o_dst[:out]


@njit(cache=True)
def _rw_next(u, indptr, dest, deg, stamp, attempt):
    """Uniform among u's transitions to nodes not yet on the path, or -1."""
    base = indptr[u]
    d = deg[u]
    if d == 0:
        return -1
    for _ in range(_REJECT_TRIES):
        e = base + np.random.randint(0, d)
        if stamp[dest[e]] != attempt:
            return e
    k = 0
    for e in range(base, base + d):
        if stamp[dest[e]] != attempt:
            k += 1
    if k == 0:
        return -1
    j = np.random.randint(0, k)
    for e in range(base, base + d):
        if stamp[dest[e]] != attempt:
            if j == 0:
                return e
            j -= 1
    return -1


@njit(cache=True)
def _random_walk_kernel(indptr, skill, dest, n_nodes, n_paths, seed, min_len, max_len, max_retries):
    np.random.seed(seed)
    deg = indptr[1:] - indptr[:-1]
    n_start = 0
    for v in range(n_nodes):
        if deg[v] > 0:
            n_start += 1
    starts = np.empty(n_start, dtype=np.int64)
    k = 0
    for v in range(n_nodes):
        if deg[v] > 0:
            starts[k] = v
            k += 1
    stamp = np.full(n_nodes, -1, dtype=np.int64)
    o_src = np.empty(n_paths * max_len, dtype=np.int32)
    o_sk = np.empty(n_paths * max_len, dtype=np.int32)
    o_dst = np.empty(n_paths * max_len, dtype=np.int32)
    ptr = np.zeros(n_paths + 1, dtype=np.int64)
    c_e = np.empty(max_len, dtype=np.int64)
    c_u = np.empty(max_len, dtype=np.int64)
    b_e = np.empty(max_len, dtype=np.int64)
    b_u = np.empty(max_len, dtype=np.int64)
    attempt = 0
    out = 0
    for p in range(n_paths):
        target_len = min_len + np.random.randint(0, max_len - min_len + 1)
        best_len = -1
        for _r in range(max_retries):
            attempt += 1
            u = starts[np.random.randint(0, n_start)]
            stamp[u] = attempt
            k = 0
            while k < target_len:
                e = _rw_next(u, indptr, dest, deg, stamp, attempt)
                if e < 0:
                    break
                c_e[k] = e
                c_u[k] = u
                k += 1
                u = dest[e]
                stamp[u] = attempt
            if k > best_len:
                best_len = k
                for j in range(k):
                    b_e[j] = c_e[j]
                    b_u[j] = c_u[j]
            if k >= min_len:
                break
        for j in range(best_len):
            e = b_e[j]
            o_src[out] = b_u[j]
            o_sk[out] = skill[e]
            o_dst[out] = dest[e]
            out += 1
        ptr[p + 1] = out
    return ptr, o_src[:out], o_sk[:out], o_dst[:out]


@njit(cache=True)
def _single_skill_kernel(edge_src, skill, dest, n_paths, seed):
    np.random.seed(seed)
    n_edges = skill.size
    ptr = np.arange(n_paths + 1).astype(np.int64)
    o_src = np.empty(n_paths, dtype=np.int32)
    o_sk = np.empty(n_paths, dtype=np.int32)
    o_dst = np.empty(n_paths, dtype=np.int32)
    for p in range(n_paths):
        e = np.random.randint(0, n_edges)
        o_src[p] = edge_src[e]
        o_sk[p] = skill[e]
        o_dst[p] = dest[e]
    return ptr, o_src, o_sk, o_dst


@njit(cache=True)
def _random_multi_skill_kernel(edge_src, skill, dest, n_paths, seed, min_len, max_len):
    np.random.seed(seed)
    n_edges = skill.size
    o_src = np.empty(n_paths * max_len, dtype=np.int32)
    o_sk = np.empty(n_paths * max_len, dtype=np.int32)
    o_dst = np.empty(n_paths * max_len, dtype=np.int32)
    ptr = np.zeros(n_paths + 1, dtype=np.int64)
    chosen = np.empty(max_len, dtype=np.int64)
    out = 0
    for p in range(n_paths):
        target_len = min_len + np.random.randint(0, max_len - min_len + 1)
        if target_len > n_edges:
            target_len = n_edges
        for k in range(target_len):
            while True:  # distinct transitions within a path; terminates since target_len <= n_edges
                e = np.random.randint(0, n_edges)
                dup = False
                for j in range(k):
                    if chosen[j] == e:
                        dup = True
                        break
                if not dup:
                    break
            chosen[k] = e
            o_src[out] = edge_src[e]
            o_sk[out] = skill[e]
            o_dst[out] = dest[e]
            out += 1
        ptr[p + 1] = out
    return ptr, o_src[:out], o_sk[:out], o_dst[:out]


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
    ptr, src, sk, dst = _inverse_frequency_kernel(
        g.indptr, g.skill, g.dest, g.n_nodes, n_paths, _seed32(seed), min_len, max_len,
        nu, mu, HUB_DEGREE, MAX_RETRIES)
    return _paths(ptr, src, sk, dst), nu, mu


def sample_random_walk(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2, max_len: int = 6) -> Paths:
    """Uniform random walk without revisits (baseline that favours high-degree nodes)."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*_random_walk_kernel(g.indptr, g.skill, g.dest, g.n_nodes, n_paths, _seed32(seed),
                                       min_len, max_len, MAX_RETRIES))


def sample_single_skill(g: TransitionGraph, n_paths: int, seed: int) -> Paths:
    """Each path is one transition drawn uniformly among all transitions."""
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*_single_skill_kernel(g.edge_src(), g.skill, g.dest, n_paths, _seed32(seed)))


def sample_random_multi_skill(g: TransitionGraph, n_paths: int, seed: int, min_len: int = 2,
                              max_len: int = 6) -> Paths:
    """Chains of distinct transitions drawn uniformly among all transitions, ignoring
    connectivity: ``src`` of step t+1 need not equal ``dst`` of step t. A path has at most
    as many steps as the graph has transitions."""
    min_len, max_len = _check_lengths(min_len, max_len)
    n_paths = _check_startable(g, n_paths)
    if n_paths == 0:
        return Paths.empty()
    return _paths(*_random_multi_skill_kernel(g.edge_src(), g.skill, g.dest, n_paths, _seed32(seed),
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
