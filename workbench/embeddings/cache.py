"""A persistent embedding cache and the cached, deduplicating embed loop.

Vectors live in a SQLite file (WAL) under the workspace's ``cache/`` folder, keyed by
``(model_id, sha256(text))`` and stored as raw float32 bytes.  Like the LLM response cache
it is kept out of DuckDB: lookups and inserts come from workers and several processes and
must not queue behind the store's write gate (DESIGN.md §3).

Embedding is the cost centre of graph building (DESIGN.md §8: ~114k texts), so
:func:`embed_cached` removes exact duplicates first, asks the cache for all the unique
texts in batched ``IN (...)`` queries, and embeds only the misses.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .base import Embedder

__all__ = ["EmbeddingCache", "embed_cached", "text_key"]

#: Keys per ``IN (...)`` query: below SQLite's historic 999-variable limit (plus model_id).
_SQL_CHUNK = 900


def text_key(text: str) -> bytes:
    """The 32-byte sha256 of ``text`` (UTF-8; lone surrogates kept, not refused)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _chunks(seq: Sequence, n: int) -> Iterable[Sequence]:
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


class EmbeddingCache:
    """Vectors by ``(model_id, sha256(text))`` in one SQLite file; safe across threads
    (one connection behind a lock) and processes (WAL, busy timeout)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, check_same_thread=False, timeout=60,
                                    isolation_level=None)
        # 16 KiB pages (takes effect only in a new file): vectors are 1-1.5 KB each
        self._con.execute("PRAGMA page_size=16384")
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        # A rowid table plus the (model_id, key) index: with vectors this large a WITHOUT
        # ROWID table was 5x slower to fill (30k vectors: 5.3 s against 0.9 s).
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS embeddings ("
            " model_id TEXT NOT NULL, key BLOB NOT NULL, dim INTEGER NOT NULL,"
            " vec BLOB NOT NULL, created REAL, PRIMARY KEY (model_id, key))")

    # ------------------------------------------------------------------ reads
    def get_many(self, model_id: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (float32, read-only view) or None, in order."""
        keys = [text_key(t) for t in texts]
        found = self._lookup(model_id, list(dict.fromkeys(keys)))
        return [found.get(k) for k in keys]

    def _lookup(self, model_id: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for chunk in _chunks(keys, _SQL_CHUNK):
                marks = ",".join("?" * len(chunk))
                rows = self._con.execute(
                    f"SELECT key, dim, vec FROM embeddings WHERE model_id = ? AND key IN ({marks})",
                    (model_id, *chunk)).fetchall()
                for key, dim, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] == dim:
                        found[key] = vec
        return found

    def count(self, model_id: str | None = None) -> int:
        with self._lock:
            if model_id is None:
                return self._con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            return self._con.execute("SELECT count(*) FROM embeddings WHERE model_id = ?",
                                     (model_id,)).fetchone()[0]

    # ------------------------------------------------------------------ writes
    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text (rows of ``vectors``), replacing older ones."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"need one row per text: {len(texts)} texts, vectors {vectors.shape}")
        self._store(model_id, [text_key(t) for t in texts], vectors)

    def _store(self, model_id: str, keys: list[bytes], vectors: np.ndarray) -> None:
        if not keys:
            return
        dim = int(vectors.shape[1])
        now = time.time()
        rows = [(model_id, k, dim, vectors[i].tobytes(), now) for i, k in enumerate(keys)]
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany(
                    "INSERT OR REPLACE INTO embeddings (model_id, key, dim, vec, created)"
                    " VALUES (?, ?, ?, ?, ?)", rows)
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def embed_cached(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache | None,
                 batch_size: int = 256,
                 on_progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Vectors of ``texts`` in input order, shape ``(len(texts), embedder.dim)``, float32.

    Exact duplicate strings are embedded once; texts already in ``cache`` (under
    ``embedder.model_id``) are not embedded again; the misses are embedded in batches of
    ``batch_size`` and stored after every batch, so an interrupted run resumes where it
    stopped.  ``on_progress(done, total)`` is called with ``(0, total)`` before the first
    batch and after every batch, where ``total`` is the number of texts to embed (the
    unique cache misses).  ``cache=None`` only deduplicates and batches.
    """
    texts = list(texts)
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    index: dict[str, int] = {}
    inverse = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64,
                          count=len(texts))
    uniq = list(index)
    model_id = embedder.model_id

    if cache is not None and uniq:
        keys = [text_key(t) for t in uniq]
        found = cache._lookup(model_id, keys)
    else:
        keys, found = [], {}

    miss = [i for i, key in enumerate(keys) if key not in found] if keys else list(range(len(uniq)))
    if miss or not found:
        dim = int(embedder.dim)
    else:  # everything cached: no need to ask the embedder (an API backend may not know yet)
        dim = next(iter(found.values())).shape[0]
    out = np.empty((len(uniq), dim), dtype=np.float32)
    for i, key in enumerate(keys):
        vec = found.get(key)
        if vec is not None:
            if vec.shape[0] != dim:   # a stale width under this model_id: embed it again
                miss.append(i)
                continue
            out[i] = vec
    miss.sort()

    total = len(miss)
    if on_progress is not None and total:
        on_progress(0, total)
    done = 0
    for batch in _chunks(miss, batch_size):
        vecs = np.asarray(embedder.embed([uniq[i] for i in batch]), dtype=np.float32)
        if vecs.shape != (len(batch), dim):
            raise ValueError(f"{model_id}: expected vectors of shape {(len(batch), dim)}, "
                             f"got {vecs.shape}")
        out[batch] = vecs
        if cache is not None:
            cache._store(model_id, [keys[i] for i in batch], vecs)
        done += len(batch)
        if on_progress is not None:
            on_progress(done, total)
    return out[inverse]
