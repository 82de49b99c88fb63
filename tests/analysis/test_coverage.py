"""Coverage metrics over sampled paths: known values on hand-made paths and consistency
with the samplers' output."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import coverage
from pipeline.graph.sampling import Paths, sample_inverse_frequency, sample_random_walk, sample_single_skill
from pipeline.graph.transitions import TransitionGraph


def make_paths(paths: list[list[tuple[int, int, int]]]) -> Paths:
    steps = [s for p in paths for s in p]
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    arr = np.array(steps, dtype=np.int32).reshape(-1, 3)
    return Paths(ptr, arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy())


def uniform_paths(universe: int, times: int = 1) -> Paths:
    """Every pair (i, i) of a universe of `universe` pairs, each `times` times."""
    return make_paths([[(i, i, i + 1)] for i in range(universe)] * times)


def test_uniform_distribution_is_perfectly_even():
    P = uniform_paths(50, times=3)
    assert coverage.unique_pairs(P) == 50
    assert coverage.normalized_entropy(P, 50) == pytest.approx(1.0)
    assert coverage.gini(P, 50) == pytest.approx(0.0, abs=1e-12)
    assert coverage.kl_to_uniform(P, 50) == pytest.approx(0.0, abs=1e-12)


def test_single_repeated_pair_is_maximally_uneven():
    P = make_paths([[(3, 7, 4)]] * 20)
    U = 10
    assert coverage.unique_pairs(P) == 1
    assert coverage.normalized_entropy(P, U) == pytest.approx(0.0)
    assert coverage.gini(P, U) == pytest.approx((U - 1) / U)
    assert coverage.kl_to_uniform(P, U) == pytest.approx(math.log(U))


def test_uncovered_pairs_count_against_evenness():
    P = uniform_paths(50)  # even over what it covers, but only half of the universe
    assert coverage.normalized_entropy(P, 100) == pytest.approx(math.log(50) / math.log(100))
    assert coverage.gini(P, 100) == pytest.approx(0.5)
    assert coverage.kl_to_uniform(P, 100) == pytest.approx(math.log(2))


def test_gini_known_value():
    # counts [0, 0, 1, 3] over a universe of 4: mean absolute difference gives 0.625
    P = make_paths([[(0, 0, 1)], [(1, 1, 2)], [(1, 1, 2)], [(1, 1, 2)]])
    assert coverage.gini(P, 4) == pytest.approx(0.625)


def test_kl_equals_log_universe_minus_entropy():
    P = make_paths([[(0, 0, 1), (1, 1, 2)], [(0, 0, 1)], [(2, 5, 0), (0, 0, 1)]])
    U = 7
    H = coverage.normalized_entropy(P, U) * math.log(U)
    assert coverage.kl_to_uniform(P, U) == pytest.approx(math.log(U) - H)


def test_pair_counts_keys_are_source_node_and_skill():
    P = make_paths([[(0, 2, 1), (1, 0, 2)], [(0, 2, 3)], [(1, 0, 0)]])
    assert coverage.pair_counts(P, n_nodes=4, n_skills=3) == {(0, 2): 2, (1, 0): 2}
    assert coverage.unique_pairs(P) == 2
    with pytest.raises(ValueError):
        coverage.pair_counts(P, n_nodes=1, n_skills=3)


def test_coverage_growth_counts_new_pairs_after_each_path():
    P = make_paths([[(0, 0, 1), (1, 1, 2)], [(0, 0, 1)], [], [(2, 2, 0), (0, 0, 1), (5, 5, 6)]])
    assert coverage.coverage_growth(P).tolist() == [2, 2, 2, 4]
    assert coverage.coverage_growth(Paths.empty()).tolist() == []


def test_empty_paths_and_bad_universe():
    E = Paths.empty()
    assert coverage.unique_pairs(E) == 0 and coverage.pair_counts(E, 3, 3) == {}
    assert math.isnan(coverage.normalized_entropy(E, 5))
    assert math.isnan(coverage.gini(E, 5)) and math.isnan(coverage.kl_to_uniform(E, 5))
    with pytest.raises(ValueError):
        coverage.gini(uniform_paths(5), 4)  # more distinct pairs than the universe holds
    with pytest.raises(ValueError):
        coverage.normalized_entropy(uniform_paths(1), 0)


def _graph(seed: int = 0) -> TransitionGraph:
    rng = np.random.default_rng(seed)
    n, k, e = 400, 300, 1600
    return TransitionGraph.from_edges(n, k, rng.integers(0, n, e), rng.integers(0, k, e),
                                      (rng.integers(1, n, e) + np.arange(e)) % n)


def test_metrics_on_sampled_paths_are_consistent():
    g = _graph()
    U = g.pair_universe()
    P, _, _ = sample_inverse_frequency(g, 400, 1)
    growth = coverage.coverage_growth(P)
    assert growth.shape == (400,) and np.all(np.diff(growth) >= 0)
    assert growth[-1] == coverage.unique_pairs(P) == len(coverage.pair_counts(P, g.n_nodes, g.n_skills)) <= U
    assert sum(coverage.pair_counts(P, g.n_nodes, g.n_skills).values()) == P.n_steps
    assert 0 < coverage.normalized_entropy(P, U) <= 1 and 0 <= coverage.gini(P, U) < 1


def test_compare_samplers_has_one_row_per_sampler_with_every_metric():
    g = _graph()
    U = g.pair_universe()
    results = {"inverse_frequency": sample_inverse_frequency(g, 300, 2)[0],
               "random_walk": sample_random_walk(g, 300, 2),
               "single_skill": sample_single_skill(g, 300, 2)}
    df = coverage.compare_samplers(results, U)
    assert isinstance(df, pd.DataFrame)
    assert list(df.index) == list(results)
    for col in ["paths", "steps", "mean_length", "unique_pairs", "coverage", "normalized_entropy", "gini",
                "kl_to_uniform"]:
        assert col in df.columns
    row = df.loc["random_walk"]
    P = results["random_walk"]
    assert row["unique_pairs"] == coverage.unique_pairs(P)
    assert row["coverage"] == pytest.approx(coverage.unique_pairs(P) / U)
    assert row["gini"] == pytest.approx(coverage.gini(P, U))
    assert df.loc["single_skill", "mean_length"] == 1.0
