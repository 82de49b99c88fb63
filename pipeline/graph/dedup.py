"""Semantic dedup of scenario texts (SkillSynth stage 3) on arrays.

Average-linkage agglomerative clustering on the sparse kNN similarity graph, stopped at
a cosine threshold. The similarity of two clusters A, B is

    avg(A, B) = (sum of known edge similarities between A and B) / (|A| * |B|)

with pairs missing from the kNN lists counted as 0. That is a lower bound on exact
average linkage and equals it whenever every pair that matters is a known edge.

Why it stays cheap: avg(A u B, X) is a weighted mean of avg(A, X) and avg(B, X), so a
cluster pair can only reach the threshold if some single pair of members does. Merges
therefore happen only inside connected components of the graph of edges with
similarity >= threshold (plus must-link groups); everything else stays a singleton and
never enters the Python loop, and the heap holds only pairs already at the threshold.
"""
from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from pipeline.graph.knn import EXACT_MAX, knn_self


class ConstraintError(ValueError):
    """The must-link groups already join two groups that a cannot-link pair separates."""


def _edges(idx: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric, deduplicated undirected edges (u < v, similarity = max of both lists)."""
    idx = np.asarray(idx, dtype=np.int64)
    sims = np.asarray(sims, dtype=np.float64)
    if idx.shape != sims.shape or idx.ndim != 2:
        raise ValueError("idx and sims must be 2-D arrays of the same shape")
    n, k = idx.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols, s = idx.ravel(), sims.ravel()
    if (cols >= n).any():
        raise ValueError("neighbour index out of range")
    ok = (cols >= 0) & (cols != rows) & np.isfinite(s)
    rows, cols, s = rows[ok], cols[ok], s[ok]
    u, v = np.minimum(rows, cols), np.maximum(rows, cols)
    key = u * n + v
    order = np.argsort(key, kind="stable")
    key, s = key[order], s[order]
    if key.size == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0)
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    s = np.maximum.reduceat(s, first)
    key = key[first]
    return key // n, key % n, s


def _find(parent: np.ndarray, i: int) -> int:
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        parent[i], i = root, parent[i]
    return root


def _labels_from_roots(roots: np.ndarray) -> np.ndarray:
    """Number clusters 0..C-1 in the order of their smallest member."""
    _, first, inverse = np.unique(roots, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()]


def average_linkage(idx: np.ndarray, sims: np.ndarray, threshold: float,
                    must_link: Sequence[Sequence[int]] = (),
                    cannot_link: Sequence[tuple[Sequence[int], Sequence[int]]] = ()
                    ) -> np.ndarray:
    """Cluster labels (0..C-1, by smallest member) for rows with kNN lists idx/sims.

    Repeatedly merges the most similar pair of adjacent clusters while their average
    similarity is >= ``threshold`` (ties: the pair with the smaller members first).
    Every ``must_link`` group ends in one cluster (merged first, whatever its
    similarities); for each ``(A, B)`` in ``cannot_link`` no member of A ever shares a
    cluster with a member of B (such merges are refused; the rest go on).
    """
    if not threshold > 0:
        raise ValueError("threshold must be > 0 (unknown pairs count as similarity 0)")
    u, v, s = _edges(idx, sims)
    n = np.asarray(idx).shape[0]

    # must-link: union-find over the groups
    parent = np.arange(n, dtype=np.int64)
    ml_u: list[int] = []
    ml_v: list[int] = []
    for group in must_link:
        g = [int(x) for x in group]
        if any(x < 0 or x >= n for x in g):
            raise ValueError("must_link index out of range")
        for a, b in zip(g, g[1:]):
            ml_u.append(a)
            ml_v.append(b)
            ra, rb = _find(parent, a), _find(parent, b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    root = np.array([_find(parent, i) for i in range(n)], dtype=np.int64) if must_link \
        else np.arange(n, dtype=np.int64)

    # cannot-link tags per initial cluster: (pair number, side)
    tags: dict[int, set[tuple[int, int]]] = {}
    for j, pair in enumerate(cannot_link):
        a_side, b_side = pair
        for side, group in enumerate((a_side, b_side)):
            for x in group:
                x = int(x)
                if x < 0 or x >= n:
                    raise ValueError("cannot_link index out of range")
                tags.setdefault(int(root[x]), set()).add((j, side))
    for c, t in tags.items():
        if any((j, 1 - side) in t for j, side in t):
            raise ConstraintError(f"row {c}'s must_link cluster (or a row named on both sides) "
                                  f"holds both sides of a cannot_link pair")

    # only components of (edges >= threshold) + must-link can ever merge
    strong = s >= threshold
    cu = np.r_[u[strong], np.asarray(ml_u, dtype=np.int64)]
    cv = np.r_[v[strong], np.asarray(ml_v, dtype=np.int64)]
    graph = coo_matrix((np.ones(cu.size, dtype=np.int32), (cu, cv)), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    keep = comp[u] == comp[v]
    ru, rv, s = root[u[keep]], root[v[keep]], s[keep]
    keep = ru != rv
    ru, rv, s = ru[keep], rv[keep], s[keep]
    a, b = np.minimum(ru, rv), np.maximum(ru, rv)
    key = a * n + b
    ukey, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=s, minlength=ukey.size)
    ea, eb = ukey // n, ukey % n

    size = np.bincount(root, minlength=n).astype(np.int64).tolist()
    rep = list(range(n))  # smallest member of each cluster, keyed by cluster id (a root)
    adj: dict[int, dict[int, float]] = {}
    for x, y, w in zip(ea.tolist(), eb.tolist(), sums.tolist()):
        adj.setdefault(x, {})[y] = w
        adj.setdefault(y, {})[x] = w
    version = [0] * n
    merged_into = list(range(n))

    def forbidden(p: int, q: int) -> bool:
        tp, tq = tags.get(p), tags.get(q)
        if not tp or not tq:
            return False
        if len(tp) > len(tq):
            tp, tq = tq, tp
        return any((j, 1 - side) in tq for j, side in tp)

    heap: list[tuple[float, int, int, int, int, int, int]] = []
    for x, y, w in zip(ea.tolist(), eb.tolist(), sums.tolist()):
        avg = w / (size[x] * size[y])
        if avg >= threshold:
            heap.append((-avg, x, y, x, y, 0, 0))  # x, y are roots = smallest members
    heapq.heapify(heap)

    while heap:
        _, _, _, p, q, vp, vq = heapq.heappop(heap)
        if version[p] != vp or version[q] != vq or merged_into[p] != p or merged_into[q] != q:
            continue
        if forbidden(p, q):
            continue
        adj_p, adj_q = adj[p], adj[q]
        if len(adj_p) < len(adj_q):
            p, q, adj_p, adj_q = q, p, adj_q, adj_p
        # fold q into p: p keeps its id and its (larger) neighbour dict
        del adj_p[q]
        for x, w in adj_q.items():
            if x == p:
                continue
            adj_x = adj[x]
            del adj_x[q]
            adj_x[p] = adj_x.get(p, 0.0) + w
            adj_p[x] = adj_p.get(x, 0.0) + w
        del adj[q]
        size[p] += size[q]
        rep[p] = min(rep[p], rep[q])
        merged_into[q] = p
        version[p] += 1
        tq = tags.pop(q, None)
        if tq:
            tags.setdefault(p, set()).update(tq)
        sp, vp, rp = size[p], version[p], rep[p]
        for x, w in adj_p.items():
            avg = w / (sp * size[x])
            if avg >= threshold:
                rx = rep[x]
                if rp < rx:
                    heapq.heappush(heap, (-avg, rp, rx, p, x, vp, version[x]))
                else:
                    heapq.heappush(heap, (-avg, rx, rp, x, p, version[x], vp))

    final = np.array(merged_into, dtype=np.int64)
    # follow chains of merges to the surviving cluster id
    while True:
        nxt = final[final]
        if np.array_equal(nxt, final):
            break
        final = nxt
    return _labels_from_roots(final[root])


def medoids(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per cluster label 0..C-1, the row closest (cosine) to the cluster's mean direction.

    Ties go to the smaller row index. Returns int64 row indices of shape (C,); a label
    with no rows (labels not dense) gets -1.
    """
    x = np.asarray(vectors, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.int64).ravel()
    if labels.shape[0] != x.shape[0]:
        raise ValueError("one label per row is needed")
    if labels.size == 0:
        return np.zeros(0, dtype=np.int64)
    c = int(labels.max()) + 1
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    means = np.zeros((c, x.shape[1]), dtype=np.float32)
    sums = np.add.reduceat(x[order], starts, axis=0, dtype=np.float64)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means[sorted_labels[starts]] = sums / np.where(norms > 0, norms, 1.0)
    score = np.empty(x.shape[0], dtype=np.float32)
    block = 8192
    for i in range(0, x.shape[0], block):
        score[i:i + block] = np.einsum("ij,ij->i", x[i:i + block], means[labels[i:i + block]])
    best = np.lexsort((np.arange(x.shape[0]), -score, labels))
    lb = labels[best]
    firsts = np.flatnonzero(np.r_[True, lb[1:] != lb[:-1]])
    out = np.full(c, -1, dtype=np.int64)
    out[lb[firsts]] = best[firsts]
    return out


def identical_groups(texts: Sequence[str],
                     cannot_link: Sequence[tuple[Sequence[int], Sequence[int]]] = ()) -> list[list[int]]:
    """Must-link groups of scenarios whose texts are the same, so they are always one node.

    Needed because missing kNN pairs count as 0: 31 copies of one sentence with k = 16 do
    not all see each other, and the lower bound scattered them over 11 clusters. Copies a
    cannot-link pair (a user's split) keeps apart go to different groups."""
    tags: dict[int, set[tuple[int, int]]] = {}
    for n, pair in enumerate(cannot_link):
        for side, members in enumerate(pair):
            for i in members:
                tags.setdefault(int(i), set()).add((n, side))
    by_text: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        by_text.setdefault(text, []).append(i)
    out: list[list[int]] = []
    for members in by_text.values():
        if len(members) < 2:
            continue
        groups: list[tuple[list[int], set[tuple[int, int]]]] = []
        for i in members:
            t = tags.get(i, set())
            for g, seen in groups:
                if not any((n, 1 - side) in seen for n, side in t):
                    g.append(i)
                    seen |= t
                    break
            else:
                groups.append(([i], set(t)))
        out.extend(g for g, _ in groups if len(g) > 1)
    return out


def cluster_scenarios(vectors: np.ndarray, threshold: float = 0.88, k: int = 16,
                      must_link: Sequence[Sequence[int]] = (),
                      cannot_link: Sequence[tuple[Sequence[int], Sequence[int]]] = (),
                      *, exact_max: int = EXACT_MAX, deterministic: bool = True) -> np.ndarray:
    """Dedup labels for L2-normalised scenario embeddings: kNN graph + average linkage."""
    idx, sims = knn_self(vectors, k, exact_max=exact_max, deterministic=deterministic)
    return average_linkage(idx, sims, threshold, must_link=must_link, cannot_link=cannot_link)
