"""Semantic dedup at paper scale: kNN graph + sparse average linkage vs exact clustering.

Synthetic stand-in for scenario embeddings (seeded): ``--topics`` random topic
directions; ~``--centres`` scenario meanings spread around them (within-topic cosine
~0.45, like sentence embeddings of one domain); ``--n`` unit vectors drawn as noisy
paraphrases of the centres, so most meanings have 1-2 phrasings and a few have more.
Per-cluster noise varies so that some paraphrase pairs sit near the threshold.

Measured on the full set: ``knn_self`` (HNSW above 30k rows) and ``average_linkage``
separately, time and peak RSS, plus kNN recall on a sample of rows against exact search.
Baseline in the same run: scikit-learn's exact ``AgglomerativeClustering`` (average,
cosine, distance threshold) on a ``--sub`` subsample of whole topics, its time scaled
quadratically to ``--n``; our pipeline on the same subsample, compared by adjusted Rand
index. The peak RSS is read before the baseline runs. Wall and CPU seconds are both
printed, with the load average: on a shared 2-core machine other processes stretch the
wall time, the CPU time does not move.

Last line: ``RESULT knn_s=… linkage_s=… peak_rss_gb=… ari_vs_exact=… baseline_scaled_s=…``.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.graph.dedup import average_linkage, cluster_scenarios  # noqa: E402
from pipeline.graph.knn import knn_self  # noqa: E402


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # ru_maxrss is KiB


def unit(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def make_data(n: int, centres: int, topics: int, dim: int, seed: int):
    """Rows, their true meaning (centre) id and their topic id."""
    rng = np.random.default_rng(seed)
    sizes = rng.geometric(centres / n, size=centres)  # mean n / centres members
    diff = int(sizes.sum()) - n
    while diff:
        pick = rng.integers(0, centres, abs(diff))
        if diff > 0:
            pick = pick[sizes[pick] > 1]
            np.subtract.at(sizes, pick, 1)
            sizes = np.maximum(sizes, 1)
        else:
            np.add.at(sizes, pick, 1)
        diff = int(sizes.sum()) - n
    topic_dirs = unit(rng.standard_normal((topics, dim)))
    centre_topic = rng.integers(0, topics, centres)
    cvec = unit(topic_dirs[centre_topic] + 1.1 * rng.standard_normal((centres, dim)) / np.sqrt(dim))
    centre_of = np.repeat(np.arange(centres), sizes)
    sigma = rng.uniform(0.15, 0.5, centres)[centre_of]
    x = np.empty((n, dim), dtype=np.float32)
    for i in range(0, n, 16384):
        c = centre_of[i:i + 16384]
        noise = rng.standard_normal((c.size, dim)) / np.sqrt(dim)
        x[i:i + 16384] = unit(cvec[c] + sigma[i:i + 16384, None] * noise)
    perm = rng.permutation(n)
    return x[perm], centre_of[perm], centre_topic[centre_of[perm]]


def recall_at_k(x: np.ndarray, idx: np.ndarray, k: int, sample: int, seed: int) -> float:
    rng = np.random.default_rng(seed + 1)
    rows = np.sort(rng.choice(x.shape[0], min(sample, x.shape[0]), replace=False))
    s = x[rows] @ x.T
    s[np.arange(rows.size), rows] = -np.inf
    truth = np.argpartition(s, -k, axis=1)[:, -k:]
    hits = sum(len(set(t.tolist()) & set(a.tolist())) for t, a in zip(truth, idx[rows]))
    return hits / (rows.size * k)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=114_000)
    ap.add_argument("--centres", type=int, default=82_000)
    ap.add_argument("--topics", type=int, default=2_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--threshold", type=float, default=0.88)
    ap.add_argument("--sub", type=int, default=6_000)
    ap.add_argument("--recall-sample", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smoke run: 3,000 rows around 2,200 meanings in 60 topics")
    args = ap.parse_args()
    if args.quick:
        args.n, args.centres, args.topics, args.sub, args.recall_sample = 3_000, 2_200, 60, 600, 200

    x, centre, topic = make_data(args.n, args.centres, args.topics, args.dim, args.seed)
    print(f"data: {x.shape[0]} x {x.shape[1]} float32, {np.unique(centre).size} meanings, "
          f"{args.topics} topics; rss {peak_rss_gb():.2f} GB", flush=True)

    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    idx, sims = knn_self(x, args.k)
    knn_s, knn_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_knn = peak_rss_gb()
    print(f"knn_self k={args.k}: {knn_s:.1f} s wall, {knn_cpu:.1f} s cpu, peak rss "
          f"{rss_knn:.2f} GB", flush=True)

    t0, c0 = time.perf_counter(), time.process_time()
    labels = average_linkage(idx, sims, args.threshold)
    linkage_s, linkage_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = peak_rss_gb()
    sizes = np.bincount(labels)
    print(f"average_linkage t={args.threshold}: {linkage_s:.1f} s wall, {linkage_cpu:.1f} s cpu, "
          f"peak rss {rss:.2f} GB; "
          f"{sizes.size} clusters (largest {sizes.max()}, {np.sum(sizes == 1)} singletons)",
          flush=True)
    from sklearn.metrics import adjusted_rand_score

    recall = recall_at_k(x, idx, args.k, args.recall_sample, args.seed)
    print(f"knn recall@{args.k} on {args.recall_sample} rows vs exact: {recall:.4f}; "
          f"ARI vs true meanings: {adjusted_rand_score(centre, labels):.4f}", flush=True)

    # baseline on whole topics, so the subsample keeps the full set's local density
    rng = np.random.default_rng(args.seed + 2)
    chosen, total = [], 0
    counts = np.bincount(topic, minlength=args.topics)
    for t in rng.permutation(args.topics):
        if total >= args.sub:
            break
        chosen.append(t)
        total += counts[t]
    sub = np.flatnonzero(np.isin(topic, chosen))[:args.sub]
    xs = x[sub]
    from sklearn.cluster import AgglomerativeClustering

    t0 = time.perf_counter()
    exact = AgglomerativeClustering(metric="cosine", linkage="average", n_clusters=None,
                                    distance_threshold=1 - args.threshold).fit_predict(xs)
    base_s = time.perf_counter() - t0
    scaled = base_s * (args.n / sub.size) ** 2
    ours = cluster_scenarios(xs, threshold=args.threshold, k=args.k)
    ari = adjusted_rand_score(exact, ours)
    print(f"baseline sklearn exact average linkage on {sub.size}: {base_s:.1f} s, "
          f"scaled to {args.n}: {scaled:.0f} s; ours on the same rows: {ours.max() + 1} vs "
          f"{exact.max() + 1} clusters, ARI {ari:.4f}; "
          f"speed-up at full scale {scaled / (knn_s + linkage_s):.1f}x", flush=True)
    load1 = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cpus, 1-min load average {load0:.1f} before the kNN, "
          f"{load1:.1f} at the end (other processes competing inflate the wall times)")
    print(f"RESULT knn_s={knn_s:.1f} linkage_s={linkage_s:.1f} peak_rss_gb={rss:.2f} "
          f"ari_vs_exact={ari:.4f} baseline_scaled_s={scaled:.0f} knn_recall={recall:.4f} "
          f"total_s={knn_s + linkage_s:.1f} knn_cpu_s={knn_cpu:.1f} "
          f"linkage_cpu_s={linkage_cpu:.1f} speedup={scaled / (knn_s + linkage_s):.1f} load={load0:.1f}")


if __name__ == "__main__":
    main()
