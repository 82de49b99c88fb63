"""k-nearest neighbours by cosine similarity over L2-normalised float32 rows.

Two paths, one contract:

- exact (``n <= exact_max``): blocked numpy matmul. Only a block of ``rows x n``
  similarities exists at any time (about 2048 rows, fewer when ``n`` is large so a block
  stays near 32M entries), never the ``n x n`` matrix.
- approximate (``n > exact_max``): faiss ``IndexHNSWFlat`` with inner product, ``M=16``.
  ``efConstruction=64`` and ``efSearch=max(64, 2k)`` gave recall 0.998 at k=16 on 114k
  synthetic 384-d vectors (``bench/dedup_scale.py``; efConstruction=40 stalls near 0.98
  whatever efSearch, 80 costs 1.5x the build time for +0.001). The graph is built
  on one thread because faiss's parallel insertion order depends on thread timing; the
  level generator has a fixed seed, and searching is read-only, so it uses all threads.

Both return ``(idx int64 (m, k), sims float32 (m, k))`` per query row, best first, ties
broken by the smaller row index, padded with ``-1`` / ``-inf`` when fewer than ``k``
candidates exist. faiss is imported only on the approximate path.
"""
from __future__ import annotations

import numpy as np

EXACT_MAX = 30_000
BLOCK_ROWS = 2048
BLOCK_ENTRIES = 1 << 25  # cap rows * n per block (128 MiB of float32 similarities)
HNSW_M = 16
EF_CONSTRUCTION = 64
EF_SEARCH = 64


def _as_rows(a: np.ndarray, name: str) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {a.shape}")
    return a


def _empty(m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full((m, k), -1, dtype=np.int64), np.full((m, k), -np.inf, dtype=np.float32)


def _sort_rows(idx: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each row by similarity descending, then index ascending; invalid entries last."""
    sims = np.where(idx < 0, -np.inf, sims).astype(np.float32, copy=False)
    key_idx = np.where(idx < 0, np.iinfo(np.int64).max, idx)
    order = np.lexsort((key_idx, -sims), axis=-1)
    idx = np.take_along_axis(idx, order, axis=1)
    sims = np.take_along_axis(sims, order, axis=1)
    idx[~np.isfinite(sims)] = -1
    return idx, sims


def _group_mask(qg: np.ndarray | None, xg: np.ndarray | None) -> np.ndarray | None:
    if qg is None or xg is None:
        return None
    # a negative group id means "no group": it never excludes anything
    return (qg[:, None] == xg[None, :]) & (qg[:, None] >= 0)


def _exact(x: np.ndarray, q: np.ndarray, k: int, *, self_offset: int | None,
           qgroups: np.ndarray | None, xgroups: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of ``q @ x.T`` per row. ``self_offset`` set: q is x itself, skip the diagonal."""
    n, m = x.shape[0], q.shape[0]
    out_idx, out_sims = _empty(m, k)
    kk = min(k, n)
    if kk == 0 or m == 0:
        return out_idx, out_sims
    rows = max(1, min(BLOCK_ROWS, BLOCK_ENTRIES // max(n, 1)))
    for start in range(0, m, rows):
        stop = min(start + rows, m)
        s = q[start:stop] @ x.T
        if self_offset is not None:
            r = np.arange(stop - start)
            s[r, r + start] = -np.inf
        mask = _group_mask(None if qgroups is None else qgroups[start:stop], xgroups)
        if mask is not None:
            s[mask] = -np.inf
        if kk < n:
            part = np.argpartition(s, n - kk, axis=1)[:, n - kk:]
        else:
            part = np.broadcast_to(np.arange(n), s.shape).copy()
        vals = np.take_along_axis(s, part, axis=1)
        part = part.astype(np.int64, copy=False)
        part[~np.isfinite(vals)] = -1
        i, v = _sort_rows(part, vals)
        out_idx[start:stop, :kk] = i
        out_sims[start:stop, :kk] = v
    return out_idx, out_sims


def _hnsw_index(x: np.ndarray, ef_construction: int, deterministic: bool):
    import faiss

    index = faiss.IndexHNSWFlat(x.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    if not deterministic:
        index.add(x)
        return index
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # insertion order independent of thread timing
    try:
        index.add(x)
    finally:
        faiss.omp_set_num_threads(threads)
    return index


def _hnsw_search(index, q: np.ndarray, kq: int, ef_search: int) -> tuple[np.ndarray, np.ndarray]:
    index.hnsw.efSearch = max(ef_search, 2 * kq)
    d, i = index.search(q, kq)
    return i.astype(np.int64, copy=False), d.astype(np.float32, copy=False)


def _filter_top(cand_idx: np.ndarray, cand_sims: np.ndarray, k: int,
                bad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop ``bad`` candidates, keep the best k per row (sorted, padded)."""
    cand_idx = np.where(bad | (cand_idx < 0), -1, cand_idx)
    i, s = _sort_rows(cand_idx, cand_sims)
    out_idx, out_sims = _empty(i.shape[0], k)
    w = min(k, i.shape[1])
    out_idx[:, :w], out_sims[:, :w] = i[:, :w], s[:, :w]
    return out_idx, out_sims


def knn_self(vectors: np.ndarray, k: int, *, exact_max: int = EXACT_MAX,
             ef_construction: int = EF_CONSTRUCTION,
             ef_search: int = EF_SEARCH,
             deterministic: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest OTHER rows of each row by cosine (inner product of unit rows).

    ``deterministic=False`` builds the HNSW graph on all threads: about half the build
    time on two cores, but neighbour lists may differ slightly from run to run.
    """
    x = _as_rows(vectors, "vectors")
    n = x.shape[0]
    if k < 0:
        raise ValueError("k must be >= 0")
    if n <= exact_max:
        return _exact(x, x, k, self_offset=0, qgroups=None, xgroups=None)
    index = _hnsw_index(x, ef_construction, deterministic)
    kq = min(k + 1, n)
    cand_idx, cand_sims = _hnsw_search(index, x, kq, ef_search)
    bad = cand_idx == np.arange(n)[:, None]
    return _filter_top(cand_idx, cand_sims, k, bad)


def knn_query(index_vectors: np.ndarray, query_vectors: np.ndarray, k: int,
              exclude: np.ndarray | None = None, *, query_groups: np.ndarray | None = None,
              index_groups: np.ndarray | None = None, exact_max: int = EXACT_MAX,
              ef_construction: int = EF_CONSTRUCTION,
              ef_search: int = EF_SEARCH,
              deterministic: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest index rows of each query row.

    With ``index_groups`` (one int per index row) and ``query_groups`` (one per query
    row; ``exclude`` is the same thing, positionally), a pair whose groups are equal is
    never returned, e.g. a skill's postcondition never matches its own precondition.
    Negative group ids mean "no group" and exclude nothing.
    """
    x = _as_rows(index_vectors, "index_vectors")
    q = _as_rows(query_vectors, "query_vectors")
    if x.shape[0] and q.shape[0] and x.shape[1] != q.shape[1]:
        raise ValueError(f"dimension mismatch: index {x.shape[1]} vs query {q.shape[1]}")
    if k < 0:
        raise ValueError("k must be >= 0")
    if exclude is not None and query_groups is not None:
        raise ValueError("give exclude or query_groups, not both")
    qg = query_groups if query_groups is not None else exclude
    xg = index_groups
    if (qg is None) != (xg is None):
        raise ValueError("query groups and index_groups go together")
    if qg is not None:
        qg = np.asarray(qg, dtype=np.int64).ravel()
        xg = np.asarray(xg, dtype=np.int64).ravel()
        if qg.shape[0] != q.shape[0] or xg.shape[0] != x.shape[0]:
            raise ValueError("one group id per row is needed")
    n, m = x.shape[0], q.shape[0]
    if n <= exact_max:
        return _exact(x, q, k, self_offset=None, qgroups=qg, xgroups=xg)

    index = _hnsw_index(x, ef_construction, deterministic)
    if qg is None:
        cand_idx, cand_sims = _hnsw_search(index, q, min(k, n), ef_search)
        return _filter_top(cand_idx, cand_sims, k, np.zeros(cand_idx.shape, dtype=bool))

    # Ask for k plus the most rows any one group holds, so that k remain after the
    # same-group rows are dropped; rows still short (approximate search) ask again, wider.
    counts = np.bincount(xg[xg >= 0]) if (xg >= 0).any() else np.zeros(0, dtype=np.int64)
    extra = int(counts.max()) if counts.size else 0
    out_idx, out_sims = _empty(m, k)
    todo = np.arange(m)
    kq = min(n, k + extra)
    while todo.size:
        cand_idx, cand_sims = _hnsw_search(index, q[todo], kq, ef_search)
        safe = np.where(cand_idx < 0, 0, cand_idx)
        bad = (xg[safe] == qg[todo][:, None]) & (qg[todo][:, None] >= 0)
        i, s = _filter_top(cand_idx, cand_sims, k, bad)
        out_idx[todo], out_sims[todo] = i, s
        if kq >= n:
            break
        g = qg[todo]
        inside = (g >= 0) & (g < counts.size)
        own = np.where(inside, counts[np.where(inside, g, 0)], 0)
        short = (i >= 0).sum(axis=1) < np.minimum(k, n - own)
        todo = todo[short]
        kq = min(n, 2 * kq)
    return out_idx, out_sims
