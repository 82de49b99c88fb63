"""The one interface every embedding backend implements (DESIGN.md §1 step 3, §8).

An embedder turns texts into L2-normalised float32 row vectors.  ``model_id`` is a
stable name of *what* produces the vectors (model and any setting that changes them):
it is part of every cache key, so two embedders with the same ``model_id`` must give the
same vector for the same text.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "l2_normalise"]


@runtime_checkable
class Embedder(Protocol):
    #: Stable id used in cache keys, e.g. ``"minilm-l6-v2-numpy"``, ``"hashing-v1"``,
    #: ``"openai:text-embedding-3-small"``.
    model_id: str
    #: Width of every vector.
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts``: float32, shape ``(len(texts), dim)``, rows L2-normalised.

        An empty list gives an array of shape ``(0, dim)``.
        """
        ...


def l2_normalise(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Rows of ``x`` scaled to unit length (all-zero rows stay zero), as float32, in place
    when ``x`` already is a float32 array."""
    x = np.asarray(x, dtype=np.float32)
    if x.size == 0:
        return x
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    np.maximum(norms, eps, out=norms)
    x /= norms[:, None]
    return x
