"""The sampler study's numbers on planted paths (unique pairs, entropy, ratios at equal
paths and equal steps, growth), and a real draw of every sampler at one budget."""
from __future__ import annotations

import math

import numpy as np
import pytest

from analysis import sampler_study as ss
from pipeline.graph.samplers import SAMPLERS
from pipeline.graph.sampling import Paths
from tests.pipeline.graph.test_sampling import ring_graph


def paths(*steps_per_path: list[tuple[int, int]]) -> Paths:
    """Paths from (src, skill) steps; destinations do not matter to coverage."""
    lengths = [len(p) for p in steps_per_path]
    flat = [s for p in steps_per_path for s in p]
    src = np.array([s for s, _ in flat], dtype=np.int32)
    skill = np.array([k for _, k in flat], dtype=np.int32)
    return Paths(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), src, skill, src + 1)


@pytest.fixture
def planted() -> ss.StudyDraws:
    # two paths each; universe 10 pairs
    walk = paths([(0, 0), (1, 1)], [(0, 0), (2, 2)])                  # 3 unique, one pair twice
    aware = paths([(0, 0), (1, 1)], [(2, 2), (3, 3)])                 # 4 unique
    single = paths([(5, 5)], [(5, 5)])                                 # 1 unique
    single_long = paths(*[[(i % 4, i % 4)] for i in range(12)])        # 1, 2, 3, 4, 4, ... unique
    # steps 2, 4, 6 after each path; unique pairs 2, 3, 5
    walk_long = paths([(0, 0), (1, 1)], [(0, 0), (2, 2)], [(6, 6), (7, 7)])
    return ss.StudyDraws(2, 10, {"random-walk": [walk], "coverage-aware": [aware], "single-skill": [single]},
                         [single_long], [walk_long])


def test_table_counts_pairs_entropy_and_ratios(planted):
    t = ss.study_table(planted)
    assert list(t.columns) == ss.COLUMNS and t.index.name == "sampler"
    assert t.loc["random-walk", "unique_pairs"] == 3 and t.loc["coverage-aware", "unique_pairs"] == 4
    assert t.loc["coverage-aware", "vs_random_walk"] == pytest.approx(4 / 3)
    assert t.loc["coverage-aware", "vs_single_skill"] == pytest.approx(4.0)
    assert t.loc["coverage-aware", "coverage"] == pytest.approx(0.4)
    assert t.loc["random-walk", "mean_length"] == 2 and t.loc["single-skill", "steps"] == 2
    # 4 steps of single-skill (the long draw) reach 4 pairs, as many as coverage-aware's 4 steps
    assert t.loc["coverage-aware", "vs_single_skill_equal_steps"] == pytest.approx(1.0)
    assert t.loc["random-walk", "vs_single_skill_equal_steps"] == pytest.approx(3 / 4)
    # 4 steps of the long random walk (its first two paths) reach 3 pairs: coverage-aware's 4 are 4/3
    assert t.loc["coverage-aware", "vs_random_walk_equal_steps"] == pytest.approx(4 / 3)
    assert t.loc["random-walk", "vs_random_walk_equal_steps"] == pytest.approx(1.0)
    assert t.loc["single-skill", "vs_random_walk_equal_steps"] == pytest.approx(1 / 2)   # 2 steps: 1 vs 2
    # entropy: pairs 2/4, 1/4, 1/4 over a universe of 10
    h = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)) / math.log(10)
    assert t.loc["random-walk", "normalized_entropy"] == pytest.approx(h)
    assert t.loc["coverage-aware", "normalized_entropy"] == pytest.approx(math.log(4) / math.log(10))


def test_means_over_seeds_and_their_spread(planted):
    planted.draws["coverage-aware"].append(paths([(0, 0)], [(0, 0)]))   # a second seed: 1 unique
    t = ss.study_table(planted)
    assert t.loc["coverage-aware", "unique_pairs"] == pytest.approx(2.5)
    assert t.loc["coverage-aware", "unique_pairs_sd"] == pytest.approx(1.5)


def test_unique_at_steps_takes_the_first_prefix_with_that_many_steps(planted):
    long = planted.walk_long
    assert [ss.unique_at_steps(long, k) for k in (0, 1, 2, 3, 4, 6, 99)] == [0, 2, 2, 3, 3, 5, 5]
    assert math.isnan(ss.unique_at_steps([], 4))


def test_a_ratio_without_its_reference_is_nan(planted):
    del planted.draws["random-walk"]
    planted.walk_long = []
    t = ss.study_table(planted)
    assert t["vs_random_walk"].isna().all() and t["vs_random_walk_equal_steps"].isna().all()
    growth = ss.growth_frame(planted)
    assert growth["vs_random_walk"].isna().all()


def test_growth_is_unique_pairs_after_each_path(planted):
    g = ss.growth_frame(planted)
    aware = g[g["sampler"] == "coverage-aware"]
    assert aware["paths"].tolist() == [1, 2] and aware["unique_pairs"].tolist() == [2, 4]
    walk = g[g["sampler"] == "random-walk"]
    assert walk["unique_pairs"].tolist() == [2, 3]
    assert ss.ratio_at(g, "coverage-aware", 2) == pytest.approx(4 / 3)
    assert ss.ratio_at(g, "coverage-aware", 1) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no growth point for 'coverage-aware' at 3 paths"):
        ss.ratio_at(g, "coverage-aware", 3)


def test_ratio_table_reads_the_growth_at_each_budget(planted):
    t = ss.ratio_table(ss.growth_frame(planted), [1, 2, 50])
    assert list(t.columns) == ["1 paths", "2 paths"]
    assert t.loc["coverage-aware", "2 paths"] == pytest.approx(4 / 3) and t.loc["random-walk", "1 paths"] == 1


def test_a_real_study_draws_every_sampler_at_the_same_budget():
    g = ring_graph()
    study = ss.draw_study(g, 30, seeds=(0, 1))
    assert set(study.draws) == set(SAMPLERS) and study.universe == g.pair_universe()
    assert all(len(p) == 30 for runs in study.draws.values() for p in runs)
    again = ss.draw_study(g, 30, seeds=(0, 1))
    assert ss.study_table(study).equals(ss.study_table(again))     # seeded: the same study twice
    t = ss.study_table(study)
    assert t.loc["random-walk", "vs_random_walk"] == 1 and t.loc["single-skill", "vs_single_skill"] == 1
    assert t.loc["coverage-aware", "vs_random_walk"] > 1
    growth = ss.growth_frame(study)
    assert len(growth) == 30 * len(SAMPLERS)
    assert (growth.groupby("sampler")["unique_pairs"].diff().dropna() >= 0).all()


def test_bad_study_requests_say_what_is_wrong():
    g = ring_graph()
    with pytest.raises(ValueError, match="budget must be >= 1"):
        ss.draw_study(g, 0)
    with pytest.raises(ValueError, match="at least one seed"):
        ss.draw_study(g, 5, seeds=())
    from pipeline.graph.transitions import TransitionGraph
    with pytest.raises(ValueError, match="no transitions"):
        ss.draw_study(TransitionGraph.from_edges(2, 1, [], [], []), 5)


def test_the_paper_reference_holds_the_reported_figures():
    ref = ss.paper_reference()
    assert ref["ratio"].tolist() == [1.31, 1.10, 1.3]
