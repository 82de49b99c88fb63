from __future__ import annotations

import numpy as np
import pytest

from workbench.embeddings import get_embedder
from workbench.embeddings.cache import EmbeddingCache, embed_cached
from workbench.embeddings.openai_backend import OpenAIEmbedder
from workbench.llm.replay_server import ReplayServer, embedding_vector


@pytest.fixture
def server():
    with ReplayServer() as s:
        yield s


@pytest.mark.parametrize("encoding_format", [None, "float", "base64"])
def test_embeds_in_batches_with_dimensions(server, encoding_format):
    e = OpenAIEmbedder(base_url=server.base_url, api_key="sk-test", model="emb-model",
                       dimensions=48, batch_size=4, encoding_format=encoding_format)
    assert e.model_id == "openai:emb-model@48d" and e.dim == 48
    texts = [f"text {i}" for i in range(10)] + [""]
    out = e.embed(texts)
    assert out.shape == (11, 48) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert server.stats.embedding_requests == 3  # ceil(11 / 4)
    assert np.allclose(out[3], embedding_vector("text 3", 48), atol=1e-6)


def test_default_width_from_server_and_model_id(server):
    e = OpenAIEmbedder(base_url=server.base_url, api_key="sk-test", model="emb-model")
    assert e.model_id == "openai:emb-model"
    out = e.embed(["a", "b"])
    assert out.shape == (2, 64) and e.dim == 64
    assert server.stats.embedding_requests == 1
    assert e.embed([]).shape == (0, 64)


def test_cached_through_embed_cached(server, tmp_path):
    e = get_embedder("openai", base_url=server.base_url, api_key="sk-test", model="emb-model",
                     dimensions=32, batch_size=8)
    texts = [f"s{i % 20}" for i in range(50)]
    with EmbeddingCache(tmp_path / "e.sqlite") as cache:
        first = embed_cached(e, texts, cache, batch_size=8)
        assert server.stats.embedding_requests == 3  # 20 unique texts in batches of 8
        second = embed_cached(e, texts, cache)
        assert server.stats.embedding_requests == 3
    assert np.array_equal(first, second)


def test_get_embedder_reads_the_llm_settings(server, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("WORKBENCH_EMBED_MODEL", "emb-small")
    monkeypatch.setenv("WORKBENCH_EMBED_DIMENSIONS", "16")
    e = get_embedder("openai")
    assert e.model_id == "openai:emb-small@16d"
    assert e.embed(["x"]).shape == (1, 16)
    assert server.stats.embedding_requests == 1
