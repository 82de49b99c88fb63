"""2-D map of scenario embeddings (UMAP) with topics (HDBSCAN), computed at build time.

UMAP costs tens of seconds of numba compilation in a fresh process, so it runs in
`graph build`, never in a page's script run; pages read the stored coordinates.
"""
from __future__ import annotations

import numpy as np

MAX_FIT_POINTS = 20_000  # fit on a sample beyond this, then place the rest with transform


def project(vectors: np.ndarray, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2)), np.zeros(0, dtype=int)
    if n < 8:  # too few for a manifold: spread them on a line, one topic
        return np.column_stack([np.arange(n, dtype=float), np.zeros(n)]), np.zeros(n, dtype=int)
    import umap  # heavy import: only here
    reducer = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), min_dist=0.1, metric="cosine",
                        random_state=seed, n_jobs=1)
    if n > MAX_FIT_POINTS:
        rng = np.random.default_rng(seed)
        fit_rows = np.sort(rng.choice(n, MAX_FIT_POINTS, replace=False))
        reducer.fit(vectors[fit_rows])
        xy = reducer.transform(vectors)
    else:
        xy = reducer.fit_transform(vectors)
    return xy.astype(float), topics(xy)


def topics(xy: np.ndarray) -> np.ndarray:
    import hdbscan
    size = max(5, len(xy) // 60)
    return hdbscan.HDBSCAN(min_cluster_size=size, min_samples=3).fit_predict(xy).astype(int)
