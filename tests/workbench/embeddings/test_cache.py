from __future__ import annotations

import threading

import numpy as np
import pytest

from workbench.embeddings.cache import EmbeddingCache, embed_cached
from workbench.embeddings.hashing import HashingEmbedder


class Counting:
    """Wraps an embedder and records every text it is asked to embed."""

    def __init__(self, inner, model_id: str | None = None):
        self.inner = inner
        self.model_id = model_id or inner.model_id
        self.dim = inner.dim
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture
def cache(tmp_path):
    c = EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite")
    yield c
    c.close()


def test_second_call_embeds_nothing_and_returns_identical_vectors(cache):
    texts = [f"scenario number {i}" for i in range(700)]
    e1 = Counting(HashingEmbedder())
    first = embed_cached(e1, texts, cache, batch_size=256)
    assert len(e1.embedded) == 700 and [len(c) for c in e1.calls] == [256, 256, 188]
    e2 = Counting(HashingEmbedder())
    second = embed_cached(e2, texts, cache)
    assert e2.calls == []
    assert np.array_equal(first, second)
    assert first.shape == (700, 256) and first.dtype == np.float32
    assert cache.count("hashing-v1") == 700


def test_duplicates_embedded_once_and_order_kept(cache):
    e = Counting(HashingEmbedder())
    texts = ["b", "a", "b", "c", "a", "a", ""]
    out = embed_cached(e, texts, cache)
    assert sorted(e.embedded) == ["", "a", "b", "c"]
    direct = HashingEmbedder().embed(texts)
    assert np.array_equal(out, direct)


def test_only_misses_are_embedded_and_progress_is_reported(cache):
    embed_cached(HashingEmbedder(), ["x1", "x2"], cache)
    e = Counting(HashingEmbedder())
    seen = []
    out = embed_cached(e, ["x1", "x3", "x2", "x4", "x5"], cache, batch_size=2,
                       on_progress=lambda d, t: seen.append((d, t)))
    assert e.embedded == ["x3", "x4", "x5"]
    assert seen == [(0, 3), (2, 3), (3, 3)]
    assert np.array_equal(out, HashingEmbedder().embed(["x1", "x3", "x2", "x4", "x5"]))


def test_model_id_separates_caches(cache):
    texts = ["same text", "another"]
    embed_cached(Counting(HashingEmbedder(), model_id="model-a"), texts, cache)
    b = Counting(HashingEmbedder(dim=64), model_id="model-b")
    out = embed_cached(b, texts, cache)
    assert b.embedded == texts and out.shape == (2, 64)
    assert cache.count("model-a") == 2 and cache.count("model-b") == 2
    assert cache.get_many("model-c", texts) == [None, None]


def test_get_put_many_round_trip_and_persistence(tmp_path):
    path = tmp_path / "e.sqlite"
    vecs = np.random.default_rng(0).standard_normal((2000, 32)).astype(np.float32)
    texts = [f"t{i}" for i in range(2000)]
    with EmbeddingCache(path) as c:
        c.put_many("m", texts, vecs)
    with EmbeddingCache(path) as c:  # reopened: persisted
        got = c.get_many("m", texts + ["missing"])
        assert got[-1] is None
        assert np.array_equal(np.stack(got[:-1]), vecs)
        with pytest.raises(ValueError):
            c.put_many("m", ["only one"], vecs[:2])


def test_empty_input(cache):
    e = Counting(HashingEmbedder())
    out = embed_cached(e, [], cache)
    assert out.shape == (0, 256) and e.calls == []


def test_thread_safe(cache):
    texts = [f"text {i % 300}" for i in range(900)]
    results, errors = [], []

    def work(offset):
        try:
            results.append(embed_cached(HashingEmbedder(), texts[offset:] + texts[:offset], cache,
                                        batch_size=50))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i * 100,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cache.count("hashing-v1") == 300


def test_scales_to_many_texts(cache):
    texts = [f"synthetic scenario {i} with some words" for i in range(30_000)]
    first = embed_cached(HashingEmbedder(), texts, cache)
    e = Counting(HashingEmbedder())
    second = embed_cached(e, texts, cache)
    assert e.calls == [] and np.array_equal(first, second)
