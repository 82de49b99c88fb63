"""Health figures on tiny graphs drawn by hand, each figure counted on paper first."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import graph_health as gh
from pipeline.graph.transitions import TransitionGraph


def _edges(pairs) -> pd.DataFrame:
    src, dst = zip(*pairs) if pairs else ((), ())
    return pd.DataFrame({"src": np.array(src, dtype=np.int64), "dst": np.array(dst, dtype=np.int64)})


def test_self_loop_share_counts_skills_whose_pre_and_post_share_a_cluster():
    # skills: 0->0 (loop), 1->2, 3->3 (loop), 2->1
    assert gh.self_loop_share([0, 1, 3, 2], [0, 2, 3, 1]) == pytest.approx(0.5)
    assert gh.self_loop_share([0, 1], [1, 2]) == 0.0
    assert math.isnan(gh.self_loop_share([], []))


def test_largest_component_ignores_direction_and_counts_only_carrying_clusters():
    # 7 clusters: 0->1, 2->1 (one component of 3, direction ignored), 3->4, 5 alone, 6 carries nothing
    carrying = np.array([1, 1, 1, 1, 1, 1, 0], dtype=bool)
    e = _edges([(0, 1), (2, 1), (3, 4)])
    assert gh.component_sizes(7, e["src"], e["dst"], carrying).tolist() == [3, 2, 1]
    assert gh.largest_wcc_share(7, e["src"], e["dst"], carrying) == pytest.approx(3 / 6)


def test_a_self_loop_joins_nothing_and_leaves_its_cluster_isolated():
    carrying = np.ones(4, dtype=bool)
    e = _edges([(0, 0), (1, 2), (3, 3)])
    assert gh.isolated_clusters(4, e["src"], e["dst"], carrying).tolist() == [True, False, False, True]
    assert gh.isolated_share(4, e["src"], e["dst"], carrying) == pytest.approx(0.5)
    assert gh.largest_wcc_share(4, e["src"], e["dst"], carrying) == pytest.approx(0.5)


def test_cluster_shares_and_scenario_counts():
    # 3 skills, 6 scenarios: cluster 0 holds three (a self-loop's two and one pre), cluster 3 none
    pre, post = np.array([0, 0, 1]), np.array([0, 2, 2])
    sizes = gh.scenarios_per_cluster(pre, post, 4)
    assert sizes.tolist() == [3, 1, 2, 0]
    assert gh.max_cluster_share(sizes) == pytest.approx(0.5)
    assert gh.clusters_per_accepted_skill(3, 4) == pytest.approx(0.75)
    assert math.isnan(gh.clusters_per_accepted_skill(0, 0))


def test_mean_path_len_of_a_fresh_sample_on_a_chain():
    # a one-way chain 0->1->2->3->4: every walk is as long as the target length allows, or hits 4
    g = TransitionGraph.from_edges(5, 4, src=[0, 1, 2, 3], skill=[0, 1, 2, 3], dest=[1, 2, 3, 4])
    lengths = gh.fresh_path_lengths(g, 300, seed=3, min_len=1, max_len=1)
    assert lengths.tolist() == [1] * 300 and gh.mean_path_len(lengths) == 1.0
    long = gh.fresh_path_lengths(g, 300, seed=3, min_len=2, max_len=6)
    assert 2.0 <= gh.mean_path_len(long) <= 4.0 and long.max() == 4   # no walk passes the chain's end
    assert (gh.fresh_path_lengths(g, 300, seed=3) == long).all()       # same seed, same sample
    empty = TransitionGraph.from_edges(3, 0, src=[], skill=[], dest=[])
    assert gh.fresh_path_lengths(empty, 10).size == 0 and math.isnan(gh.mean_path_len([]))


def _health(pre, post, n, pairs, lengths, min_len=2) -> gh.GraphHealth:
    return gh.health(np.array(pre), np.array(post), n, _edges(pairs), np.array(lengths), min_len=min_len)


def test_health_of_a_sparse_graph_misses_its_targets_and_says_what_to_do():
    # 10 skills, 8 of them self-loops in clusters of their own; one edge 8->9 and one bridge 9->10
    pre = list(range(8)) + [8, 9]
    post = list(range(8)) + [9, 10]
    pairs = [(8, 9), (9, 10), (9, 10)]          # skill edges + a bridge on the same pair
    h = _health(pre, post, 11, pairs, [1, 1, 2, 1])
    assert h.self_loop_share == pytest.approx(0.8) and h.self_loop_skills == 8
    assert h.clusters == 11 and h.largest_wcc_clusters == 3 and h.largest_wcc_share == pytest.approx(3 / 11)
    assert h.isolated_clusters == 8 and h.isolated_share == pytest.approx(8 / 11)
    assert h.edges == 2 and h.scenarios == 20 and h.largest_cluster_scenarios == 2
    assert h.max_cluster_share == pytest.approx(0.1) and h.clusters_per_accepted_skill == pytest.approx(1.1)
    assert h.mean_path_len == pytest.approx(1.25) and h.paths_below_min_len == 3 and h.sample_paths == 4
    assert gh.too_sparse(h)
    said = " ".join(gh.advice(h))
    assert "Paths average 1.25 steps (target ≥ 2.30); 3 of 4 sampled paths stop before 2 steps" in said
    assert "8 of 10 skills start and end in the same cluster" in said and "--provider llm" in said
    assert "largest connected part holds 3 of 11 clusters" in said and "Scenarios page" in said
    assert "ingest more skills" in said                      # only 10 skills


def test_a_hub_and_a_collapse_get_their_own_advice():
    # 40 skills all from cluster 0 to clusters 1..4: a hub holding half the scenarios, 5 clusters for 40 skills
    pre, post = [0] * 40, [1 + i % 4 for i in range(40)]
    h = _health(pre, post, 5, [(0, k) for k in range(1, 5)], [3] * 10)
    assert h.max_cluster_share == pytest.approx(0.5) and h.clusters_per_accepted_skill == pytest.approx(5 / 40)
    assert h.largest_wcc_share == 1.0 and h.self_loop_share == 0.0 and h.mean_path_len == 3.0
    said = gh.advice(h)
    assert any("One cluster holds 40 of 80 scenarios (a hub)" in s for s in said)
    assert any("5 clusters for 40 skills" in s for s in said)
    assert not any("Paths average" in s or "same cluster" in s for s in said)


def test_a_connected_graph_meets_every_target_and_needs_no_advice():
    # 100 skills on a ring of 100 clusters: no self-loop, one component, no hub
    n = 100
    pre, post = list(range(n)), [(i + 1) % n for i in range(n)]
    h = _health(pre, post, n, list(zip(pre, post)), [3, 2, 4, 2])
    assert not gh.too_sparse(h) and gh.advice(h) == []
    assert all(item.ok in (True, None) for item in gh.card(h))
    d = h.as_dict()
    for key in ("self_loop_share", "largest_wcc_share", "isolated_share", "mean_path_len",
                "clusters_per_accepted_skill", "max_cluster_share", "skills", "clusters", "paths_below_min_len"):
        assert key in d
    assert d["targets"]["self_loop_share"] == {"op": "<=", "value": 0.25} and all(d["meets"].values())


def test_card_shows_each_target_and_marks_the_missed_ones():
    h = _health([0, 1], [0, 2], 3, [(1, 2)], [1])
    items = {i.figure: i for i in gh.card(h)}
    assert items["self_loop_share"].value == "50.0%" and items["self_loop_share"].target == "≤ 25.0%"
    assert items["self_loop_share"].ok is False
    assert items["mean_path_len"].value == "1.00" and items["mean_path_len"].ok is False
    assert items["isolated_share"].ok is None and items["isolated_share"].target == ""


def test_an_empty_sample_is_not_a_figure():
    h = _health([0], [1], 2, [(0, 1)], [])
    assert math.isnan(h.mean_path_len) and not gh.TARGETS["mean_path_len"].met(h.mean_path_len)
    assert {i.figure: i.value for i in gh.card(h)}["mean_path_len"] == "n/a"


def test_measure_needs_a_sample():
    with pytest.raises(ValueError, match="at least one path"):
        gh.measure(None, n=0)
