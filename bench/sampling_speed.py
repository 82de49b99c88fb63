"""Path sampling speed and coverage on a synthetic graph at paper scale.

The graph (seeded): 82,000 scenarios, 57,000 skills — each an edge from its precondition
scenario to its postcondition scenario — plus 185,000 bridge-like transitions that apply an
existing skill from another scenario (scenario x --skill b--> post(b)). Scenario popularity
is heavy-tailed (Zipf-like, shared by the pre- and postcondition sides, so popular
scenarios have both many in- and many out-transitions), and a few hub scenarios get
thousands of extra out-transitions ("a git repository", "a CSV file in /data").

Prints paths/s of each numba sampler (after a warm-up call that compiles it) for
200,000 paths of length <= 6, the naive networkx random walk on 5,000 paths, their ratio,
and unique (scenario, skill) pairs of inverse-frequency vs random walk (and vs single
skill) at the same budget of 20,000 paths; the same for the coverage-aware sampler
(pipeline/graph/coverage_sampler.py). Last line:
``RESULT paths_per_s=… sampler_speedup=… coverage_ratio=… rw_speedup=… single_skill_ratio=…
coverage_aware_paths_per_s=… coverage_aware_speedup=… coverage_aware_ratio=…``
where paths_per_s is the inverse-frequency sampler's rate, sampler_speedup is that rate
over the networkx walk's (rw_speedup: the numba random walk's, the same algorithm as the
baseline), and coverage_ratio / single_skill_ratio are inverse-frequency unique pairs over
random-walk / single-skill unique pairs at the 20,000-path budget; coverage_aware_* are the
coverage-aware sampler's rate, that rate over the networkx walk's, and its unique pairs
over the random walk's at the same budget.

By default the popularity of a scenario as a precondition and as a postcondition are
independent (outcome scenarios that many skills end in need not start many skills);
``--correlated`` uses one popularity for both. Bridges reuse skills with a heavy-tailed
skill popularity (generic skills are applicable from many scenarios).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.coverage import normalized_entropy, unique_pairs  # noqa: E402
from pipeline.graph.coverage_sampler import sample_coverage_aware  # noqa: E402
from pipeline.graph.sampling import (  # noqa: E402
    networkx_random_walk,
    sample_inverse_frequency,
    sample_random_multi_skill,
    sample_random_walk,
    sample_single_skill,
)
from pipeline.graph.transitions import TransitionGraph  # noqa: E402


def make_graph(n_nodes: int = 82_000, n_skills: int = 57_000, n_bridges: int = 185_000,
               n_hubs: int = 8, hub_edges: tuple[int, int] = (1_500, 6_000), correlated: bool = False,
               seed: int = 0) -> TransitionGraph:
    """Synthetic scenario graph at paper scale (see the module docstring)."""
    rng = np.random.default_rng(seed)

    def zipf(n: int, a: float, share: float) -> np.ndarray:
        """``share`` of the mass Zipf(a) over a random order, the rest uniform."""
        p = (1.0 / np.arange(1, n + 1) ** a)[rng.permutation(n)]
        return share * p / p.sum() + (1.0 - share) / n

    p_pre = zipf(n_nodes, 0.85, 0.5)                            # scenarios skills start from
    p_post = p_pre if correlated else zipf(n_nodes, 0.85, 0.5)  # scenarios skills end in
    p_bridge_skill = zipf(n_skills, 1.0, 0.7)                   # generic skills bridge from many places

    pre = rng.choice(n_nodes, n_skills, p=p_pre)
    post = rng.choice(n_nodes, n_skills, p=p_post)
    clash = pre == post
    post[clash] = (post[clash] + 1 + rng.integers(0, n_nodes - 1, clash.sum())) % n_nodes

    # bridges: skill b applied from scenario x (x's state matches b's precondition) -> post(b)
    hubs = rng.choice(n_nodes, n_hubs, replace=False, p=p_pre)
    hub_sizes = rng.integers(hub_edges[0], hub_edges[1] + 1, n_hubs)
    b_src = np.concatenate([np.repeat(hubs, hub_sizes),
                            rng.choice(n_nodes, n_bridges - int(hub_sizes.sum()), p=p_pre)])
    b_skill = rng.choice(n_skills, n_bridges, p=p_bridge_skill)
    bad = (b_src == post[b_skill]) | (b_src == pre[b_skill])  # self-loop, or the skill's own edge
    b_skill[bad] = rng.integers(0, n_skills, bad.sum())

    src = np.concatenate([pre, b_src])
    skill = np.concatenate([np.arange(n_skills), b_skill])
    dst = post[skill]
    keep = src != dst
    return TransitionGraph.from_edges(n_nodes, n_skills, src[keep], skill[keep], dst[keep])


def rate(fn, n: int) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(n)
    return n / (time.perf_counter() - t0), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=200_000)
    ap.add_argument("--nx-paths", type=int, default=5_000)
    ap.add_argument("--budget", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="timing rounds; the best one counts")
    ap.add_argument("--correlated", action="store_true",
                    help="one popularity for both ends of a skill (default: independent pre/post popularity)")
    ap.add_argument("--quick", action="store_true", help="smoke run: a graph a tenth the size, 20,000 timed paths, one round")
    args = ap.parse_args()
    size = {}
    if args.quick:
        args.paths, args.nx_paths, args.budget, args.repeats = 20_000, 500, 2_000, 1
        size = {"n_nodes": 8_200, "n_skills": 5_700, "n_bridges": 18_500, "hub_edges": (150, 600)}

    t0 = time.perf_counter()
    g = make_graph(correlated=args.correlated, seed=args.seed, **size)
    deg = g.out_degree()
    indeg = np.bincount(g.dest, minlength=g.n_nodes)
    print(f"graph: {g.n_nodes} nodes, {g.n_skills} skills, {g.n_edges} transitions, "
          f"pair universe {g.pair_universe()}, nodes with out-edges {(deg > 0).sum()}, "
          f"max out-degree {deg.max()}, nodes with >=1000 out-edges {(deg >= 1000).sum()}, "
          f"max in-degree {indeg.max()} "
          f"({time.perf_counter() - t0:.1f}s)")

    samplers = {
        "inverse_frequency": lambda n, s=1: sample_inverse_frequency(g, n, s, 2, 6)[0],
        "random_walk": lambda n, s=1: sample_random_walk(g, n, s, 2, 6),
        "single_skill": lambda n, s=1: sample_single_skill(g, n, s),
        "random_multi_skill": lambda n, s=1: sample_random_multi_skill(g, n, s, 2, 6),
        "coverage_aware": lambda n, s=1: sample_coverage_aware(g, n, s, 2, 6)[0],
    }
    G = g.to_networkx()
    for fn in samplers.values():
        fn(100)  # warm-up: compile (or load the cache)
    # best of --repeats rounds, samplers and baseline interleaved so that load from other
    # processes hits both alike
    rates = {name: 0.0 for name in samplers}
    r_nx, big = 0.0, {}
    for _ in range(args.repeats):
        for name, fn in samplers.items():
            r, big[name] = rate(fn, args.paths)
            rates[name] = max(rates[name], r)
        r_nx = max(r_nx, rate(lambda n: networkx_random_walk(G, n, 1, 2, 6), args.nx_paths)[0])
    for name, r in rates.items():
        print(f"{name:>20}: {r:12,.0f} paths/s  ({args.paths} paths, mean length {big[name].lengths().mean():.2f})")
    print(f"{'networkx walk':>20}: {r_nx:12,.0f} paths/s  ({args.nx_paths} paths, baseline)")
    speedup = rates["inverse_frequency"] / r_nx
    print(f"inverse-frequency / networkx walk: {speedup:.1f}x; "
          f"numba random walk / networkx walk: {rates['random_walk'] / r_nx:.1f}x")

    b = args.budget
    u_if = unique_pairs(samplers["inverse_frequency"](b, 7))
    u_rw = unique_pairs(samplers["random_walk"](b, 7))
    u_ss = unique_pairs(samplers["single_skill"](b, 7))
    u_rm = unique_pairs(samplers["random_multi_skill"](b, 7))
    u_ca = unique_pairs(samplers["coverage_aware"](b, 7))
    cov = u_if / u_rw
    print(f"unique (scenario, skill) pairs at {b} paths: inverse-frequency {u_if}, random walk {u_rw}, "
          f"single skill {u_ss}, random multi-skill {u_rm}, coverage-aware {u_ca}")
    print(f"inverse-frequency / random walk: {cov:.2f}x; inverse-frequency / single skill: {u_if / u_ss:.2f}x; "
          f"coverage-aware / random walk: {u_ca / u_rw:.2f}x")
    U = g.pair_universe()
    big_if, big_rw = unique_pairs(big["inverse_frequency"]), unique_pairs(big["random_walk"])
    big_ca = unique_pairs(big["coverage_aware"])
    print(f"for reference at {args.paths} paths (the timed runs): inverse-frequency {big_if}, random walk {big_rw} "
          f"({big_if / big_rw:.2f}x), coverage-aware {big_ca} ({big_ca / big_rw:.2f}x); normalised entropy "
          f"{normalized_entropy(big['inverse_frequency'], U):.3f} vs {normalized_entropy(big['random_walk'], U):.3f} "
          f"(coverage-aware {normalized_entropy(big['coverage_aware'], U):.3f})")
    print(f"RESULT paths_per_s={rates['inverse_frequency']:.0f} sampler_speedup={speedup:.1f} "
          f"coverage_ratio={cov:.2f} rw_speedup={rates['random_walk'] / r_nx:.1f} "
          f"single_skill_ratio={u_if / u_ss:.2f} coverage_aware_paths_per_s={rates['coverage_aware']:.0f} "
          f"coverage_aware_speedup={rates['coverage_aware'] / r_nx:.1f} coverage_aware_ratio={u_ca / u_rw:.2f}")


if __name__ == "__main__":
    main()
