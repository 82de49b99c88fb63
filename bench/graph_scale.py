"""The scenario–skill graph at paper scale, from cached (synthetic) embeddings.

57,000 skills → 114,000 scenario vectors (pre and post) grouped into ~82,000 meanings →
dedup (kNN + sparse average linkage) → bridge candidates (each postcondition's nearest
preconditions of other skills, ~185,000 kept) → the transition graph (CSR, bridges folded)
→ path sampling. Each step prints time and peak memory next to a naive baseline measured
in the same run:
- dedup: scikit-learn's exact average linkage on a subsample, time scaled up by n²;
- bridges: brute-force numpy similarity on a subsample of queries, scaled up linearly;
- sampling: a networkx random walk (out_edges + random.choice).
Bridge verification (text- and LLM-bound) is not part of this run.
Last line: RESULT build_s=… peak_rss_gb=… paths_per_s=… sampler_speedup=… coverage_ratio=…
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dedup_scale import make_data, peak_rss_gb  # noqa: E402

from analysis.coverage import unique_pairs  # noqa: E402
from pipeline.graph.dedup import cluster_scenarios  # noqa: E402
from pipeline.graph.knn import knn_query  # noqa: E402
from pipeline.graph.sampling import (networkx_random_walk, sample_inverse_frequency,  # noqa: E402
                                     sample_random_walk)
from pipeline.graph.transitions import TransitionGraph  # noqa: E402


def step(name: str, fn):
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    print(f"{name}: {dt:.1f} s, peak rss {peak_rss_gb():.2f} GB", flush=True)
    return out, dt


def bridges_from_knn(x, labels, n_skills, k, target):
    pre, post = x[0::2], x[1::2]
    groups = np.arange(n_skills)
    idx, sims = knn_query(pre, post, k, query_groups=groups, index_groups=groups)
    q = np.repeat(np.arange(n_skills), k)
    j, s = idx.ravel(), sims.ravel()
    keep = (j >= 0) & (labels[2 * q + 1] != labels[2 * np.maximum(j, 0)])
    q, j, s = q[keep], j[keep], s[keep]
    if len(s) > target:  # the most similar `target` candidates stand in for the verified ones
        top = np.argpartition(-s, target)[:target]
        q, j, s = q[top], j[top], s[top]
    return q, j, s


def assemble(labels, n_skills, bq, bj):
    pre_c, post_c = labels[0::2], labels[1::2]
    skills = pd.DataFrame({"src": pre_c, "dst": post_c, "skill": np.arange(n_skills)})
    skills = skills[skills["src"] != skills["dst"]]
    bridges = pd.DataFrame({"src": post_c[bq], "dst": pre_c[bj]}).drop_duplicates()
    folded = bridges.merge(skills, left_on="dst", right_on="src", suffixes=("_b", ""))
    folded = pd.DataFrame({"src": folded["src_b"], "dst": folded["dst"], "skill": folded["skill"]})
    allt = pd.concat([skills, folded[folded["src"] != folded["dst"]]]).drop_duplicates()
    return TransitionGraph.from_edges(int(labels.max()) + 1, n_skills, allt["src"].to_numpy(np.int32),
                                      allt["skill"].to_numpy(np.int32), allt["dst"].to_numpy(np.int32))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=57_000)
    ap.add_argument("--meanings", type=int, default=82_000)
    ap.add_argument("--bridges", type=int, default=185_000)
    ap.add_argument("--threshold", type=float, default=0.88)
    ap.add_argument("--paths", type=int, default=200_000)
    ap.add_argument("--baseline-paths", type=int, default=5_000)
    ap.add_argument("--coverage-budget", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smoke run: 3,000 skills, 20,000 timed paths")
    args = ap.parse_args()
    if args.quick:
        args.skills, args.meanings, args.bridges = 3_000, 4_300, 9_700
        args.paths, args.baseline_paths, args.coverage_budget = 20_000, 500, 2_000
    n = 2 * args.skills
    x, _, topic = make_data(n, args.meanings, 2_000, 384, args.seed)
    print(f"{args.skills} skills, {n} scenario vectors (384-d), {args.meanings} meanings", flush=True)

    labels, dedup_s = step("dedup (kNN + average linkage)", lambda: cluster_scenarios(x, threshold=args.threshold))
    print(f"  {labels.max() + 1} scenarios after dedup", flush=True)
    (bq, bj, bs), bridge_s = step("bridge candidates", lambda: bridges_from_knn(x, labels, args.skills, 5, args.bridges))
    print(f"  {len(bq)} bridges", flush=True)
    g, graph_s = step("graph (CSR, bridges folded)", lambda: assemble(labels, args.skills, bq, bj))
    print(f"  {g.n_nodes} nodes, {len(g.skill)} transitions, {g.pair_universe()} (scenario, skill) pairs", flush=True)
    build_s = dedup_s + bridge_s + graph_s
    rss = peak_rss_gb()

    # baselines for the build
    from sklearn.cluster import AgglomerativeClustering
    sub = np.flatnonzero(np.isin(topic, np.unique(topic)[:100]))[:1_000 if args.quick else 5_000]
    t0 = time.perf_counter()
    AgglomerativeClustering(metric="cosine", linkage="average", n_clusters=None,
                            distance_threshold=1 - args.threshold).fit_predict(x[sub])
    dense_scaled = (time.perf_counter() - t0) * (n / len(sub)) ** 2
    t0 = time.perf_counter()
    qs = x[1::2][:2_000]
    np.argpartition(-(qs @ x[0::2].T), 5, axis=1)[:, :5]
    brute_scaled = (time.perf_counter() - t0) * args.skills / len(qs)
    print(f"baseline: dense exact average linkage scaled to {n}: {dense_scaled:.0f} s "
          f"(and ~{8 * n * n / 1e9:.0f} GB for the distance matrix); brute-force bridges scaled: {brute_scaled:.0f} s")
    print(f"build total {build_s:.1f} s (target ≤ 120 s) vs baseline {dense_scaled + brute_scaled:.0f} s: "
          f"{(dense_scaled + brute_scaled) / build_s:.1f}x; peak rss {rss:.2f} GB (target ≤ 4 GB)", flush=True)

    sample_inverse_frequency(g, 1_000, 0, max_len=6)  # compile
    sample_random_walk(g, 1_000, 0, 2, 6)
    t0 = time.perf_counter()
    paths, _, _ = sample_inverse_frequency(g, args.paths, args.seed, min_len=2, max_len=6)
    pps = args.paths / (time.perf_counter() - t0)
    G = g.to_networkx()
    t0 = time.perf_counter()
    networkx_random_walk(G, args.baseline_paths, args.seed, 2, 6)
    nx_pps = args.baseline_paths / (time.perf_counter() - t0)
    print(f"sampling: inverse-frequency {pps:,.0f} paths/s (≤ 6 steps, {args.paths} paths); networkx walk "
          f"{nx_pps:,.0f} paths/s: {pps / nx_pps:.1f}x (targets ≥ 20,000/s and ≥ 20x)", flush=True)
    inv, _, _ = sample_inverse_frequency(g, args.coverage_budget, args.seed + 1, 2, 6)
    rw = sample_random_walk(g, args.coverage_budget, args.seed + 1, 2, 6)
    ratio = unique_pairs(inv) / unique_pairs(rw)
    print(f"coverage at {args.coverage_budget} paths: inverse-frequency {unique_pairs(inv)} unique (scenario, skill) "
          f"pairs, random walk {unique_pairs(rw)}: {ratio:.2f}x (target ≥ 1.3x)")
    print(f"RESULT build_s={build_s:.1f} peak_rss_gb={rss:.2f} paths_per_s={pps:.0f} "
          f"sampler_speedup={pps / nx_pps:.1f} coverage_ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
