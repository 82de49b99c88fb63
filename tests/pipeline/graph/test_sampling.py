"""Path samplers: determinism, path validity, count persistence, exactness of the hub
draws, and a statistical check that inverse-frequency sampling covers more than a random
walk."""
from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.coverage import normalized_entropy, unique_pairs
from pipeline.graph import sampling as S
from pipeline.graph.sampling import (
    Paths,
    networkx_random_walk,
    sample_inverse_frequency,
    sample_random_multi_skill,
    sample_random_walk,
    sample_single_skill,
)
from pipeline.graph.transitions import TransitionGraph


def skewed_graph(seed: int = 0, n_nodes: int = 3000, n_skills: int = 2000, n_bridges: int = 7000,
                 n_hubs: int = 3) -> TransitionGraph:
    """Heavy-tailed scenario popularity (independent for the start and end of a skill),
    bridges reusing popular skills, and a few hubs with hundreds of out-transitions."""
    rng = np.random.default_rng(seed)

    def zipf(n, a, share):
        p = (1.0 / np.arange(1, n + 1) ** a)[rng.permutation(n)]
        return share * p / p.sum() + (1 - share) / n

    p_pre, p_post, p_sk = zipf(n_nodes, 0.85, 0.5), zipf(n_nodes, 0.9, 0.6), zipf(n_skills, 1.0, 0.7)
    pre = rng.choice(n_nodes, n_skills, p=p_pre)
    post = rng.choice(n_nodes, n_skills, p=p_post)
    hubs = rng.choice(n_nodes, n_hubs, replace=False)
    sizes = rng.integers(150, 400, n_hubs)
    b_src = np.concatenate([np.repeat(hubs, sizes), rng.choice(n_nodes, n_bridges - sizes.sum(), p=p_pre)])
    b_sk = rng.choice(n_skills, n_bridges, p=p_sk)
    src = np.concatenate([pre, b_src])
    sk = np.concatenate([np.arange(n_skills), b_sk])
    dst = post[sk]
    keep = src != dst
    return TransitionGraph.from_edges(n_nodes, n_skills, src[keep], sk[keep], dst[keep])


def ring_graph(n: int = 40, n_skills: int = 120, seed: int = 0) -> TransitionGraph:
    """Every node u has transitions to u+1, u+2 (and random others): no dead ends, and a
    forward step is always free, so every path can reach its target length."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([np.arange(n), np.arange(n), rng.integers(0, n, 2 * n)])
    dst = np.concatenate([(np.arange(n) + 1) % n, (np.arange(n) + 2) % n, rng.integers(0, n, 2 * n)])
    keep = src != dst
    sk = rng.integers(0, n_skills, keep.sum())
    return TransitionGraph.from_edges(n, n_skills, src[keep], sk, dst[keep])


@pytest.fixture(scope="module")
def graph() -> TransitionGraph:
    return skewed_graph()


def _triples(g: TransitionGraph) -> set[tuple[int, int, int]]:
    return set(zip(g.edge_src().tolist(), g.skill.tolist(), g.dest.tolist()))


def _same(a: Paths, b: Paths) -> bool:
    return all(np.array_equal(x, y) for x, y in [(a.ptr, b.ptr), (a.src, b.src), (a.skill, b.skill), (a.dst, b.dst)])


SAMPLERS = {
    "inverse_frequency": lambda g, n, seed: sample_inverse_frequency(g, n, seed, 2, 6)[0],
    "random_walk": lambda g, n, seed: sample_random_walk(g, n, seed, 2, 6),
    "single_skill": lambda g, n, seed: sample_single_skill(g, n, seed),
    "random_multi_skill": lambda g, n, seed: sample_random_multi_skill(g, n, seed, 2, 6),
    "networkx_walk": lambda g, n, seed: networkx_random_walk(g.to_networkx(), n, seed, 2, 6),
}
CONNECTED = ["inverse_frequency", "random_walk", "networkx_walk"]


# ------------------------------------------------------------------ graph structure

def test_from_edges_builds_stable_csr():
    g = TransitionGraph.from_edges(4, 5, src=[2, 0, 2, 1, 0], skill=[0, 1, 2, 3, 4], dest=[3, 1, 0, 2, 3])
    assert g.indptr.tolist() == [0, 2, 3, 5, 5]
    assert g.skill.tolist() == [1, 4, 3, 0, 2]  # stable within a source
    assert g.dest.tolist() == [1, 3, 2, 3, 0]
    assert g.indptr.dtype == np.int64 and g.skill.dtype == np.int32 and g.dest.dtype == np.int32
    assert g.out_degree().tolist() == [2, 1, 2, 0]
    assert g.edge_src().tolist() == [0, 0, 1, 2, 2]
    G = g.to_networkx()
    assert G.number_of_nodes() == 4 and G.number_of_edges() == 5
    assert sorted((u, v, d["skill"]) for u, v, d in G.edges(data=True)) == sorted(
        [(2, 3, 0), (0, 1, 1), (2, 0, 2), (1, 2, 3), (0, 3, 4)])


def test_pair_universe_counts_distinct_node_skill_pairs():
    # (0, s1) appears twice (two destinations); (1, s1) is a different pair
    g = TransitionGraph.from_edges(3, 3, src=[0, 0, 1, 1], skill=[1, 1, 1, 2], dest=[1, 2, 2, 0])
    assert g.pair_universe() == 3


def test_rejects_malformed_graphs():
    with pytest.raises(ValueError):
        TransitionGraph.from_edges(2, 2, src=[0], skill=[0], dest=[5])
    with pytest.raises(ValueError):
        TransitionGraph.from_edges(2, 2, src=[0], skill=[3], dest=[1])
    with pytest.raises(ValueError):
        TransitionGraph.from_edges(2, 2, src=[2], skill=[0], dest=[1])


# ------------------------------------------------------------------ determinism and validity

@pytest.mark.parametrize("name", list(SAMPLERS))
def test_same_seed_same_paths(graph, name):
    a, b = SAMPLERS[name](graph, 300, 11), SAMPLERS[name](graph, 300, 11)
    assert _same(a, b)
    assert not _same(a, SAMPLERS[name](graph, 300, 12))


def test_inverse_frequency_counts_are_deterministic(graph):
    p1, nu1, mu1 = sample_inverse_frequency(graph, 500, 3)
    p2, nu2, mu2 = sample_inverse_frequency(graph, 500, 3)
    assert _same(p1, p2) and np.array_equal(nu1, nu2) and np.array_equal(mu1, mu2)


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_steps_are_real_transitions(graph, name):
    paths = SAMPLERS[name](graph, 400, 5)
    assert len(paths) == 400
    real = _triples(graph)
    steps = list(zip(paths.src.tolist(), paths.skill.tolist(), paths.dst.tolist()))
    assert steps and all(s in real for s in steps)


@pytest.mark.parametrize("name", CONNECTED)
def test_connected_paths_do_not_revisit(graph, name):
    paths = SAMPLERS[name](graph, 400, 6)
    for i in range(len(paths)):
        p = paths.path(i)
        assert all(p[t][2] == p[t + 1][0] for t in range(len(p) - 1)), p
        nodes = [p[0][0]] + [d for _, _, d in p]
        assert len(nodes) == len(set(nodes)), p


def test_random_multi_skill_ignores_connectivity(graph):
    paths = sample_random_multi_skill(graph, 300, 1, 2, 6)
    breaks = sum(paths.dst[paths.ptr[i] + t] != paths.src[paths.ptr[i] + t + 1]
                 for i in range(len(paths)) for t in range(paths.lengths()[i] - 1))
    assert breaks > 0.9 * (paths.n_steps - len(paths))
    for i in range(len(paths)):  # distinct transitions within a path
        p = paths.path(i)
        assert len(p) == len(set(p))


@pytest.mark.parametrize("name", ["inverse_frequency", "random_walk", "random_multi_skill", "networkx_walk"])
def test_lengths_within_bounds_when_reachable(name):
    g = ring_graph()
    paths = SAMPLERS[name](g, 500, 2)
    lengths = paths.lengths()
    assert lengths.min() >= 2 and lengths.max() <= 6
    assert set(lengths.tolist()) == {2, 3, 4, 5, 6}  # the target length is uniform over [2, 6]


def test_single_skill_paths_have_one_step(graph):
    assert set(sample_single_skill(graph, 200, 0).lengths().tolist()) == {1}


def test_max_len_is_never_exceeded_on_skewed_graph(graph):
    p, _, _ = sample_inverse_frequency(graph, 2000, 9, 3, 5)
    assert p.lengths().max() <= 5
    # dead ends are retried: shorter paths are rare even on a graph full of sinks
    assert (p.lengths() < 3).mean() < 0.01


def test_short_path_is_kept_after_bounded_retries():
    # the only transition is 0 -> 1: min_len 3 is impossible; the sampler must not hang
    g = TransitionGraph.from_edges(3, 1, src=[0], skill=[0], dest=[1])
    p, nu, mu = sample_inverse_frequency(g, 5, 0, 3, 4)
    assert p.lengths().tolist() == [1] * 5
    assert nu.tolist() == [5, 5, 0] and mu.tolist() == [5]
    assert sample_random_walk(g, 5, 0, 3, 4).lengths().tolist() == [1] * 5
    assert networkx_random_walk(g.to_networkx(), 5, 0, 3, 4).lengths().tolist() == [1] * 5


def test_argument_checks(graph):
    with pytest.raises(ValueError):
        sample_inverse_frequency(graph, 10, 0, 3, 2)
    with pytest.raises(ValueError):
        sample_random_walk(graph, 10, 0, 0, 2)
    with pytest.raises(ValueError):
        sample_inverse_frequency(graph, 10, 0, node_counts=np.zeros(3))
    empty = TransitionGraph.from_edges(3, 1, [], [], [])
    with pytest.raises(ValueError):
        sample_random_walk(empty, 1, 0)
    assert len(sample_inverse_frequency(graph, 0, 0)[0]) == 0


# ------------------------------------------------------------------ counts across batches

def test_counts_persist_and_match_the_paths(graph):
    p1, nu1, mu1 = sample_inverse_frequency(graph, 300, 1)
    assert nu1.sum() == p1.n_steps + len(p1)  # each path: its start and every destination
    assert mu1.sum() == p1.n_steps
    assert np.array_equal(mu1, np.bincount(p1.skill, minlength=graph.n_skills))
    given_nu, given_mu = nu1.copy(), mu1.copy()
    p2, nu2, mu2 = sample_inverse_frequency(graph, 300, 2, node_counts=nu1, skill_counts=mu1)
    assert np.array_equal(nu1, given_nu) and np.array_equal(mu1, given_mu)  # inputs untouched
    assert nu2.sum() - nu1.sum() == p2.n_steps + len(p2)
    assert np.array_equal(mu2 - mu1, np.bincount(p2.skill, minlength=graph.n_skills))


def _visited(p: Paths) -> np.ndarray:
    starts = p.src[p.ptr[:-1][p.lengths() > 0]]
    return np.concatenate([starts, p.dst])


def test_carried_counts_shift_later_batches_to_rarely_visited_nodes(graph):
    _, nu1, mu1 = sample_inverse_frequency(graph, 1500, 1)
    carried, _, _ = sample_inverse_frequency(graph, 1500, 2, node_counts=nu1, skill_counts=mu1)
    fresh, _, _ = sample_inverse_frequency(graph, 1500, 2)
    # knowing the counts, a batch starts at nodes the first batch visited less, and reaches
    # more nodes the first batch never saw (same seed, so only the counts differ)
    starts = lambda p: p.src[p.ptr[:-1]]  # noqa: E731
    assert nu1[starts(carried)].mean() < 0.8 * nu1[starts(fresh)].mean()
    assert (nu1[_visited(carried)] == 0).mean() > 1.25 * (nu1[_visited(fresh)] == 0).mean()
    new_pairs = lambda p: len(set(zip(p.src.tolist(), p.skill.tolist()))  # noqa: E731
                              - set(zip(first.src.tolist(), first.skill.tolist())))
    first, _, _ = sample_inverse_frequency(graph, 1500, 1)
    assert new_pairs(carried) > new_pairs(fresh)


def test_heavily_counted_nodes_are_avoided(graph):
    deg = graph.out_degree()
    crowded = np.flatnonzero(deg > 0)[::2]
    nu = np.zeros(graph.n_nodes, dtype=np.int64)
    nu[crowded] = 1000
    p, _, _ = sample_inverse_frequency(graph, 1000, 4, node_counts=nu)
    starts = p.src[p.ptr[:-1]]
    assert np.isin(starts, crowded).mean() < 0.01  # weight 1/1001 vs 1 for half of the nodes


# ------------------------------------------------------------------ exactness of the draws

def _chi2_ok(observed: np.ndarray, expected_p: np.ndarray, n: int) -> bool:
    """Pearson chi-square against expected probabilities, 5-sigma normal bound on the
    statistic (dof k-1): a loose but sampler-breaking check."""
    exp = expected_p * n
    stat = float(((observed - exp) ** 2 / exp).sum())
    k = expected_p.size
    return stat < (k - 1) + 5 * math.sqrt(2 * (k - 1))


@pytest.mark.parametrize("degree", [40, 300])  # below and above HUB_DEGREE
def test_next_step_distribution_is_exact(degree):
    assert (40 < S.HUB_DEGREE) and (300 >= S.HUB_DEGREE)
    # star: node 0 -> leaves 1..degree, skill i on edge to leaf i+1; only node 0 can start
    n = degree + 1
    g = TransitionGraph.from_edges(n, degree, src=np.zeros(degree, int), skill=np.arange(degree),
                                   dest=np.arange(1, n))
    mu = (np.arange(degree) % 5) * 3          # skill counts 0, 3, 6, 9, 12
    nu = np.zeros(n, dtype=np.int64)
    nu[1:] = (np.arange(degree) % 4)          # leaf counts 0..3
    w = 1.0 / ((mu + 1.0) * (nu[1:] + 1.0))
    draws = 4000
    chosen = np.array([sample_inverse_frequency(g, 1, s, 1, 1, node_counts=nu, skill_counts=mu)[0].skill[0]
                       for s in range(draws)])
    cls = (np.arange(degree) % 5) * 4 + (np.arange(degree) % 4)  # 20 weight classes
    obs = np.bincount(cls[chosen], minlength=20)
    exp = np.bincount(cls, weights=w, minlength=20) / w.sum()
    assert _chi2_ok(obs, exp, draws)


def test_hub_excludes_nodes_on_the_path_exactly():
    # 0 -> 1 only; hub 1 has 150 transitions back to 0 (heavy: counts 0) and 50 to leaves
    # (light: skill counts 9). From 1 after 0, only leaves are allowed; they are drawn
    # in proportion to their weights although most proposals hit the visited node.
    n_leaves = 50
    src = [0] + [1] * (150 + n_leaves)
    dest = [1] + [0] * 150 + list(range(2, 2 + n_leaves))
    skill = list(range(1 + 150 + n_leaves))
    g = TransitionGraph.from_edges(2 + n_leaves, len(skill), src, skill, dest)
    mu = np.zeros(len(skill), dtype=np.int64)
    mu[151:] = 9
    mu[151::2] = 19  # half the leaves at half the weight
    nu = np.zeros(g.n_nodes, dtype=np.int64)
    nu[1] = 10**6  # start at 0 almost surely
    leaf_hits = np.zeros(n_leaves, dtype=np.int64)
    for s in range(600):
        p, _, _ = sample_inverse_frequency(g, 1, s, 2, 2, node_counts=nu, skill_counts=mu)
        if p.lengths()[0] == 2 and p.src[0] == 0:
            assert p.dst[1] >= 2  # never back to 0
            leaf_hits[p.dst[1] - 2] += 1
    n = leaf_hits.sum()
    assert n > 550
    heavy = leaf_hits[1::2].sum() / n  # weight 1/10 vs 1/20: expect 2/3
    assert abs(heavy - 2 / 3) < 0.08


def test_start_distribution_is_exact():
    g = ring_graph(n=30)
    nu = (np.arange(30) % 3) * 4  # counts 0, 4, 8 -> weights 1, 1/5, 1/9
    starts = np.array([sample_inverse_frequency(g, 1, s, 1, 1, node_counts=nu)[0].src[0] for s in range(3000)])
    w = 1.0 / (nu + 1.0)
    obs = np.bincount(np.arange(30)[starts] % 3, minlength=3)
    exp = np.bincount(np.arange(30) % 3, weights=w) / w.sum()
    assert _chi2_ok(obs, exp, 3000)


# ------------------------------------------------------------------ coverage: statistics

def test_inverse_frequency_beats_random_walk_in_every_seed():
    """On a fixed skewed graph, over 12 seeds at the same budget of paths, inverse-frequency
    sampling has more unique (scenario, skill) pairs and a higher normalised entropy than a
    random walk in every seed (a sign test on 12/12 wins: p = 2^-12 < 0.01)."""
    g = skewed_graph(seed=42)
    U = g.pair_universe()
    wins_u = wins_h = 0
    ratios = []
    for seed in range(12):
        inv, _, _ = sample_inverse_frequency(g, 600, seed)
        rw = sample_random_walk(g, 600, seed)
        u_inv, u_rw = unique_pairs(inv), unique_pairs(rw)
        ratios.append(u_inv / u_rw)
        wins_u += u_inv > u_rw
        wins_h += normalized_entropy(inv, U) > normalized_entropy(rw, U)
    assert wins_u == 12 and wins_h == 12, (wins_u, wins_h, ratios)
    assert np.mean(ratios) > 1.05


def test_multi_step_samplers_cover_more_than_single_skill(graph):
    single = unique_pairs(sample_single_skill(graph, 500, 0))
    assert unique_pairs(sample_inverse_frequency(graph, 500, 0)[0]) > 1.5 * single


# ------------------------------------------------------------------ distinct paths within a batch

def _keys(p: Paths) -> list[tuple]:
    return [tuple(p.path(i)) for i in range(len(p))]


@pytest.mark.parametrize("name", ["random_walk", "inverse_frequency"])
def test_a_repeated_path_is_drawn_again(name):
    from pipeline.graph.sample_run import distinct_paths
    n = 5    # a one-way ring: 5 starts x lengths 2..4 = 15 distinct paths in all
    g = TransitionGraph.from_edges(n, n, src=np.arange(n), skill=np.arange(n), dest=(np.arange(n) + 1) % n)
    draw = lambda k, s: SAMPLERS[name](g, k, s)   # noqa: E731
    plain = _keys(draw(12, 3))
    assert len(set(plain)) < 12, "the graph is meant to make a plain draw repeat itself"
    paths, redrawn, short = distinct_paths(draw, 12, 3)
    keys = _keys(paths)
    assert len(keys) == len(set(keys)) == 12 and short == 0
    assert redrawn == 12 - len(set(plain))
    assert keys[:len(set(plain))] == list(dict.fromkeys(plain))     # first draws kept, in order
    assert all(t in _triples(g) for k in keys for t in k)
    assert _same(paths, distinct_paths(draw, 12, 3)[0])              # same seed, same batch


def test_a_graph_with_too_few_paths_says_how_many_it_gave():
    from pipeline.graph.sample_run import REDRAW_ROUNDS, SampleReport, distinct_paths
    g = TransitionGraph.from_edges(4, 3, src=[0, 1, 2], skill=[0, 1, 2], dest=[1, 2, 3])   # 3 transitions
    paths, redrawn, short = distinct_paths(lambda k, s: sample_single_skill(g, k, s), 10, 0)
    assert sorted(_keys(paths)) == [((0, 0, 1),), ((1, 1, 2),), ((2, 2, 3),)]
    assert short == 7 and redrawn == 7
    note = SampleReport("b", "single-skill", len(paths), paths.n_steps, 3, redrawn, short).note
    assert note == f"the graph gave only 3 distinct paths of the 10 asked ({REDRAW_ROUNDS} redraw rounds); the batch has 3"


def test_stored_batches_have_no_repeats_and_count_only_kept_paths(graph_workspace):
    from pipeline.graph.sample_run import sample
    from workbench.store import graph as store
    nodes_before, skills_before = store.visit_counts(graph_workspace.db)
    report = sample(graph_workspace, "inverse-frequency", 300, seed=4)
    steps = store.path_steps(graph_workspace.db, report.batch_id)
    paths = steps.sort_values(["idx", "step"]).groupby("path_id")[["src_anchor", "skill_id", "dst_anchor"]].apply(
        lambda f: tuple(map(tuple, f.to_numpy())))
    assert len(paths) == report.n_paths == 300 - report.short and paths.is_unique
    assert report.redrawn > 0          # on the demo graph a plain draw of 300 repeats paths
    nodes_after, skills_after = store.visit_counts(graph_workspace.db)
    assert sum(skills_after.values()) - sum(skills_before.values()) == len(steps)
    assert sum(nodes_after.values()) - sum(nodes_before.values()) == len(steps) + len(paths)


# ------------------------------------------------------------------ paths shorter than min_len, said

def test_short_paths_say_whether_the_walk_hit_a_dead_end_or_could_only_go_back():
    # 0 -> 1 (1 has no out-edge: a dead end); 2 -> 3 -> 2 (from 3 the only way on is back to 2)
    g = TransitionGraph.from_edges(4, 3, src=[0, 2, 3], skill=[0, 1, 2], dest=[1, 3, 2])
    paths, _, _ = sample_inverse_frequency(g, 40, 5, min_len=2, max_len=3)
    assert set(paths.lengths().tolist()) == {1}
    said = S.short_paths(g, paths, 2)
    ends = np.asarray(paths.dst)
    assert said.count == 40 and said.other == 0
    assert said.dead_end == int((ends == 1).sum()) > 0 and said.dead_end_clusters == 1
    assert said.revisit == int((ends != 1).sum()) > 0
    assert S.short_paths(g, paths, 1) == S.ShortPaths(1)    # none is shorter than one step


def test_a_path_that_reaches_min_len_is_not_short():
    g = TransitionGraph.from_edges(5, 4, src=[0, 1, 2, 3], skill=[0, 1, 2, 3], dest=[1, 2, 3, 4])
    paths, _, _ = sample_inverse_frequency(g, 50, 1, min_len=2, max_len=2)
    said = S.short_paths(g, paths, 2)
    # only a walk started at 3 (one step left before the end at 4) can stay short
    assert said.count == int((paths.lengths() < 2).sum()) and said.count == said.dead_end
