"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama…).

Uses the ``openai`` package's sync client.  Recent ``openai`` releases ask the server for
base64 when no ``encoding_format`` is given and decode it back to floats themselves; a
server that ignores the request answers with float lists; an explicit
``encoding_format="base64"`` leaves base64 strings in the response.  All three are
accepted here.  Rows are L2-normalised (OpenAI's already are; other servers' may not be).
"""
from __future__ import annotations

import base64
import os
from typing import Any

import numpy as np

from .base import l2_normalise

__all__ = ["OpenAIEmbedder", "KNOWN_DIMS"]

#: Native widths of well-known models, so that ``dim`` needs no request.
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def _as_vector(data: Any) -> np.ndarray:
    if isinstance(data, str):
        return np.frombuffer(base64.b64decode(data), dtype="<f4").astype(np.float32)
    return np.asarray(data, dtype=np.float32)


class OpenAIEmbedder:
    """``model_id`` is ``"openai:<model>"``, plus ``"@<dimensions>d"`` when ``dimensions``
    is set (a shortened vector is a different vector, so it must not share cache rows)."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None,
                 model: str = "text-embedding-3-small", dimensions: int | None = None,
                 batch_size: int = 128, *, encoding_format: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 5, client: Any | None = None):
        if dimensions is not None and int(dimensions) < 1:
            raise ValueError("dimensions must be a positive integer")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if encoding_format not in (None, "float", "base64"):
            raise ValueError("encoding_format must be None, 'float' or 'base64'")
        self.model = model
        self.dimensions = int(dimensions) if dimensions is not None else None
        self.batch_size = int(batch_size)
        self.encoding_format = encoding_format
        self.model_id = f"openai:{model}" + (f"@{self.dimensions}d" if self.dimensions else "")
        self._dim: int | None = self.dimensions or KNOWN_DIMS.get(model)
        if client is None:
            import openai
            client = openai.OpenAI(base_url=base_url,
                                   api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
                                   timeout=timeout_s, max_retries=max_retries)
        self._client = client
        self.requests = 0
        self.prompt_tokens = 0

    @property
    def dim(self) -> int:
        """The vector width: ``dimensions``, a known model's width, or (once) asked of the server."""
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _request(self, texts: list[str]) -> np.ndarray:
        kwargs: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        if self.encoding_format is not None:
            kwargs["encoding_format"] = self.encoding_format
        resp = self._client.embeddings.create(**kwargs)
        self.requests += 1
        usage = getattr(resp, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None):
            self.prompt_tokens += int(usage.prompt_tokens)
        items = sorted(resp.data, key=lambda d: d.index)
        if len(items) != len(texts):
            raise ValueError(f"{self.model_id}: asked for {len(texts)} embeddings, got {len(items)}")
        vecs = np.stack([_as_vector(d.embedding) for d in items])
        if self._dim is None:
            self._dim = int(vecs.shape[1])
        return vecs

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for i in range(0, len(texts), self.batch_size):
            # OpenAI refuses empty strings: embed a single space for them
            batch = [t if t else " " for t in texts[i:i + self.batch_size]]
            parts.append(self._request(batch))
        vecs = np.concatenate(parts)
        if vecs.shape[1] != self.dim:
            raise ValueError(f"{self.model_id}: expected {self.dim}-d vectors, got {vecs.shape[1]}")
        return l2_normalise(np.ascontiguousarray(vecs, dtype=np.float32))
