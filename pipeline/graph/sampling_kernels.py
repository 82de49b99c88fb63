"""The numba kernels behind :mod:`pipeline.graph.sampling`: one per sampler, each drawing
all paths of one call in a single jitted loop and returning them as flat step arrays
``(ptr, src, skill, dst)``. The samplers' rules (start, no revisit, target length,
retries, count updates) are described in :mod:`pipeline.graph.sampling`; this module is
how the kernels keep a step cheap. ``HUB_DEGREE`` and ``MAX_RETRIES`` are set there and
reach the kernels as arguments (``hub_deg``, ``max_retries``).

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

import numpy as np
from numba import njit

_REJECT_TRIES = 32       # rejected proposals in one step before an exact scan decides


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
def inverse_frequency_kernel(indptr, skill, dest, n_nodes, n_paths, seed, min_len, max_len,
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
def random_walk_kernel(indptr, skill, dest, n_nodes, n_paths, seed, min_len, max_len, max_retries):
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
def single_skill_kernel(edge_src, skill, dest, n_paths, seed):
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
def random_multi_skill_kernel(edge_src, skill, dest, n_paths, seed, min_len, max_len):
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
