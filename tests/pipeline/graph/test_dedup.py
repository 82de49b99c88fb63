"""kNN search and sparse average-linkage dedup against brute force and scipy."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage

from pipeline.graph.dedup import (ConstraintError, average_linkage, cluster_scenarios, identical_groups,
                                  medoids)
from pipeline.graph.knn import knn_query, knn_self


def unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, centres: int, dim: int, seed: int, noise=(0.1, 0.6)) -> np.ndarray:
    """Noisy copies of random centres; per-centre noise so some clusters are loose."""
    rng = np.random.default_rng(seed)
    c = unit(rng.standard_normal((centres, dim)))
    lab = rng.integers(0, centres, n)
    sigma = rng.uniform(*noise, centres)[lab]
    return unit(c[lab] + sigma[:, None] * rng.standard_normal((n, dim)) / np.sqrt(dim))


def canonical(labels) -> np.ndarray:
    """Relabel 0..C-1 by smallest member, as average_linkage does."""
    _, first, inv = np.unique(np.asarray(labels), return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.ravel()]


def scipy_average(x: np.ndarray, threshold: float) -> np.ndarray:
    z = linkage(x.astype(np.float64), "average", metric="cosine")
    return canonical(fcluster(z, 1 - threshold, "distance"))


def brute_knn(x: np.ndarray, q: np.ndarray, k: int, mask=None):
    s = q.astype(np.float64) @ x.T.astype(np.float64)
    if mask is not None:
        s[mask] = -np.inf
    order = np.argsort(-s, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(s, order, axis=1)


# ---------------------------------------------------------------- kNN


def test_knn_self_exact_path_matches_brute_force():
    x = clustered(400, 40, 32, seed=1)
    idx, sims = knn_self(x, 10)
    s = x.astype(np.float64) @ x.T.astype(np.float64)
    np.fill_diagonal(s, -np.inf)
    ref_idx, ref_sims = brute_knn(x, x, 10, mask=np.eye(400, dtype=bool))
    assert idx.dtype == np.int64 and sims.dtype == np.float32 and idx.shape == (400, 10)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, ref_sims, atol=1e-5)
    assert not (idx == np.arange(400)[:, None]).any()


def test_knn_self_pads_when_fewer_rows_than_k():
    x = clustered(5, 2, 8, seed=2)
    idx, sims = knn_self(x, 8)
    assert idx.shape == (5, 8)
    assert (idx[:, :4] >= 0).all() and (idx[:, 4:] == -1).all()
    assert np.isneginf(sims[:, 4:]).all() and np.isfinite(sims[:, :4]).all()
    for i in range(5):
        assert sorted(idx[i, :4]) == [j for j in range(5) if j != i]
    one_idx, one_sims = knn_self(x[:1], 3)
    assert (one_idx == -1).all() and np.isneginf(one_sims).all()


def test_knn_self_hnsw_path_recall_and_determinism():
    x = clustered(3000, 300, 48, seed=3)
    exact_idx, _ = knn_self(x, 10)
    idx, sims = knn_self(x, 10, exact_max=100)
    hits = sum(len(set(a) & set(b)) for a, b in zip(idx.tolist(), exact_idx.tolist()))
    assert hits / exact_idx.size >= 0.95
    assert not (idx == np.arange(3000)[:, None]).any()
    assert (np.diff(sims, axis=1) <= 0).all()  # best first
    again_idx, again_sims = knn_self(x, 10, exact_max=100)
    np.testing.assert_array_equal(idx, again_idx)
    np.testing.assert_array_equal(sims, again_sims)


@pytest.mark.parametrize("exact_max", [100_000, 50])
def test_knn_query_never_returns_same_group_pairs(exact_max):
    rng = np.random.default_rng(4)
    index = clustered(600, 60, 32, seed=5)
    index_groups = np.repeat(np.arange(200), 3)  # three rows per skill
    take = rng.choice(600, 150, replace=False)
    # queries sit right on a row of their own group, so that row would be the top hit
    query = unit(index[take] + 0.01 * rng.standard_normal((150, 32)))
    query_groups = index_groups[take]
    query_groups[:10] = -1  # no group: nothing excluded
    idx, sims = knn_query(index, query, 8, query_groups=query_groups,
                          index_groups=index_groups, exact_max=exact_max)
    assert idx.shape == (150, 8) and (idx >= 0).all()
    same = index_groups[idx] == query_groups[:, None]
    assert not same[10:].any()
    assert (idx[:10, 0] == take[:10]).all()  # ungrouped queries still find their row
    mask = (query_groups[:, None] == index_groups[None, :]) & (query_groups[:, None] >= 0)
    ref_idx, ref_sims = brute_knn(index, query, 8, mask=mask)
    if exact_max >= 600:
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_allclose(sims, ref_sims, atol=1e-5)
    else:
        hits = sum(len(set(a) & set(b)) for a, b in zip(idx.tolist(), ref_idx.tolist()))
        assert hits / ref_idx.size >= 0.95
    # `exclude` is the positional spelling of query_groups
    idx2, _ = knn_query(index, query, 8, query_groups, index_groups=index_groups,
                        exact_max=exact_max)
    np.testing.assert_array_equal(idx, idx2)


def test_knn_query_hnsw_skips_a_large_own_group():
    index = clustered(800, 20, 32, seed=13)
    groups = np.where(np.arange(800) < 400, 0, np.arange(800))  # group 0 holds 400 rows
    query = index[:50]
    idx, _ = knn_query(index, query, 12, query_groups=np.zeros(50, dtype=np.int64),
                       index_groups=groups, exact_max=10)
    assert (idx >= 400).all()
    ref_idx, _ = knn_query(index, query, 12, query_groups=np.zeros(50, dtype=np.int64),
                           index_groups=groups)
    hits = sum(len(set(a) & set(b)) for a, b in zip(idx.tolist(), ref_idx.tolist()))
    assert hits / ref_idx.size >= 0.95


def test_knn_query_pads_when_groups_leave_too_few_rows():
    index = clustered(6, 2, 8, seed=6)
    groups = np.array([0, 0, 0, 0, 1, 2])
    idx, sims = knn_query(index, index[:1], 4, query_groups=np.array([0]),
                          index_groups=groups)
    assert sorted(idx[0, :2]) == [4, 5] and (idx[0, 2:] == -1).all()
    assert np.isneginf(sims[0, 2:]).all()


# ---------------------------------------------------------------- average linkage


@pytest.mark.parametrize("threshold", [0.5, 0.75, 0.88, 0.95])
def test_average_linkage_equals_scipy_with_full_neighbour_lists(threshold):
    x = clustered(300, 40, 24, seed=7, noise=(0.1, 0.9))
    idx, sims = knn_self(x, 299)
    labels = average_linkage(idx, sims, threshold)
    np.testing.assert_array_equal(labels, scipy_average(x, threshold))


def test_average_linkage_equals_scipy_with_short_lists_on_separated_clusters():
    x = clustered(400, 50, 64, seed=8, noise=(0.1, 0.7))
    labels = cluster_scenarios(x, threshold=0.85, k=40)
    ref = scipy_average(x, 0.85)
    np.testing.assert_array_equal(labels, ref)
    assert 50 <= ref.max() + 1 < 400  # the threshold actually merged and split things


def test_unknown_pairs_count_as_zero():
    # three rows, only 0-1 and 1-2 are known edges (0.9 each); 0-2 unknown
    idx = np.array([[1, -1], [0, 2], [1, -1]])
    sims = np.array([[0.9, -np.inf], [0.9, 0.9], [0.9, -np.inf]], dtype=np.float32)
    # after {0,1}: avg({0,1},{2}) = (0 + 0.9) / 2 = 0.45
    np.testing.assert_array_equal(average_linkage(idx, sims, 0.5), [0, 0, 1])
    np.testing.assert_array_equal(average_linkage(idx, sims, 0.4), [0, 0, 0])


def _pairs():
    """Five tight pairs far apart: rows 2i and 2i+1 are near-duplicates."""
    rng = np.random.default_rng(9)
    c = unit(rng.standard_normal((5, 32)))
    x = np.repeat(c, 2, axis=0) + 0.05 * rng.standard_normal((10, 32)) / np.sqrt(32)
    return unit(x)


def test_must_link_joins_distant_rows():
    x = _pairs()
    idx, sims = knn_self(x, 9)
    free = average_linkage(idx, sims, 0.9)
    np.testing.assert_array_equal(free, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    joined = average_linkage(idx, sims, 0.9, must_link=[[0, 4], [8, 2]])
    assert joined[0] == joined[4] and joined[2] == joined[8]
    # a twin's average to a forced pair is about (0.99 + ~0) / 2 < 0.9: twins stay out
    np.testing.assert_array_equal(joined, [0, 1, 2, 3, 0, 4, 5, 5, 2, 6])


def test_must_link_group_survives_low_similarity_and_overlapping_groups_union():
    x = _pairs()
    idx, sims = knn_self(x, 9)
    labels = average_linkage(idx, sims, 0.99, must_link=[[0, 2], [2, 4], [6]])
    assert labels[0] == labels[2] == labels[4]


def test_cannot_link_keeps_near_duplicates_apart():
    x = _pairs()
    idx, sims = knn_self(x, 9)
    labels = average_linkage(idx, sims, 0.9, cannot_link=[([0], [1]), ([4, 5], [8])])
    assert labels[0] != labels[1]
    assert labels[4] == labels[5] and labels[8] == labels[9]  # untouched pairs still merge
    assert labels[2] == labels[3]


def test_cannot_link_refuses_a_merge_through_an_intermediary():
    # a chain 0 ~ 1 ~ 2 where everything would end in one cluster
    rng = np.random.default_rng(10)
    base = unit(rng.standard_normal((1, 16)))
    x = unit(np.repeat(base, 3, axis=0) + 0.02 * rng.standard_normal((3, 16)))
    idx, sims = knn_self(x, 2)
    assert len(set(average_linkage(idx, sims, 0.5))) == 1
    labels = average_linkage(idx, sims, 0.5, cannot_link=[([0], [2])])
    assert labels[0] != labels[2]
    assert labels[1] in (labels[0], labels[2])


def test_must_link_and_cannot_link_together():
    x = _pairs()
    idx, sims = knn_self(x, 9)
    # 0 is forced to 2; 2's twin 3 may not join 0's cluster; 1 (0's twin) may not join 3
    free = average_linkage(idx, sims, 0.3, must_link=[[0, 2]])
    assert free[0] == free[1] == free[2] == free[3]
    labels = average_linkage(idx, sims, 0.3, must_link=[[0, 2]],
                             cannot_link=[([0], [3]), ([1], [3])])
    assert labels[0] == labels[2]
    assert labels[3] != labels[0] and labels[3] != labels[1]
    with pytest.raises(ConstraintError):
        average_linkage(idx, sims, 0.9, must_link=[[0, 2], [2, 6]],
                        cannot_link=[([6], [0])])


def test_labels_deterministic_and_numbered_by_smallest_member():
    x = clustered(500, 60, 32, seed=11, noise=(0.1, 0.8))
    runs = [cluster_scenarios(x, threshold=0.8, k=12) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    labels = runs[0]
    assert labels.dtype == np.int64 and labels[0] == 0
    _, first = np.unique(labels, return_index=True)
    assert (np.diff(first) > 0).all()  # label c's smallest member < label c+1's
    assert set(labels.tolist()) == set(range(labels.max() + 1))


def test_ties_break_by_smallest_members():
    # 0-1 and 1-2 both at 0.9: {0,1} forms first, then avg({0,1},2) = 0.45 < 0.5
    idx = np.array([[1, -1], [0, 2], [1, -1]])
    sims = np.array([[0.9, 0], [0.9, 0.9], [0.9, 0]], dtype=np.float32)
    np.testing.assert_array_equal(average_linkage(idx, sims, 0.5), [0, 0, 1])


def test_empty_and_edge_inputs():
    empty = average_linkage(np.zeros((0, 3), dtype=np.int64), np.zeros((0, 3)), 0.9)
    assert empty.shape == (0,)
    single = average_linkage(np.full((1, 2), -1), np.full((1, 2), -np.inf), 0.9)
    np.testing.assert_array_equal(single, [0])
    with pytest.raises(ValueError):
        average_linkage(np.zeros((2, 1), dtype=np.int64), np.zeros((2, 1)), 0.0)


# ---------------------------------------------------------------- medoids


def test_medoids_pick_the_member_nearest_the_mean_direction():
    x = clustered(300, 30, 24, seed=12)
    labels = cluster_scenarios(x, threshold=0.85, k=20)
    m = medoids(x, labels)
    assert m.shape == (labels.max() + 1,)
    for c in range(labels.max() + 1):
        members = np.flatnonzero(labels == c)
        assert labels[m[c]] == c
        mean = x[members].astype(np.float64).sum(axis=0)
        score = x[members] @ (mean / np.linalg.norm(mean))
        assert score[members.tolist().index(m[c])] >= score.max() - 1e-6


def test_copies_of_one_sentence_are_one_node_whatever_k():
    # 31 copies of one sentence (template scenarios) among near neighbours: with k = 16 the
    # copies do not all see each other and the missing pairs' zeros scattered them
    rng = np.random.default_rng(3)
    base = rng.normal(size=32)
    near = [base + rng.normal(scale=0.25, size=32) for _ in range(12)]
    vectors = np.array([base] * 31 + near)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = ["A CSV table is in the working directory."] * 31 + [f"near {i}" for i in range(12)]
    labels = cluster_scenarios(vectors, threshold=0.88, k=16, must_link=identical_groups(texts))
    assert len(set(labels[:31])) == 1


def test_copies_a_split_keeps_apart_stay_apart():
    texts = ["same"] * 5 + ["other"]
    groups = identical_groups(texts, cannot_link=[([0, 1], [2]), ([2], [0, 1, 3, 4, 5])])
    assert groups == [[0, 1, 3, 4]]
