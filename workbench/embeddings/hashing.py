"""A no-model fallback embedder: hashed n-gram features and a fixed sparse random projection.

Per text: word unigrams and bigrams (``\\w+`` tokens of the lower-cased text) and
character 3-, 4- and 5-grams (of the lower-cased, whitespace-collapsed text padded with a
space on each side) are hashed into ``2**18`` features; each feature gets the sublinear
term frequency ``1 + log(tf)``; the word part and the character part are each scaled to
unit length and added.  That sparse vector is projected to ``dim`` (256) dimensions by a
fixed very sparse random projection (Achlioptas / Li et al.): feature ``j`` adds ``±1/√k``
to ``k`` = 8 output dimensions, both chosen by a seeded 64-bit hash of ``j``.  Only the
``2**18 × k`` table of (dimension, sign) pairs is ever built (~2.6 MB), never a dense
``2**18 × 256`` matrix.  Rows are L2-normalised.

Everything is integer hashing (splitmix64, BLAKE2b) and one fixed order of float sums,
so a text's vector depends on nothing but the text: the same on every machine and in any
batch, and so cacheable under ``model_id`` ``"hashing-v1"``.  The character n-grams are
hashed for a whole batch at once in numpy (a rolling polynomial hash over code points),
word hashes are memoised, and the projection is one ``bincount``: well over 5,000 texts/s.
"""
from __future__ import annotations

import hashlib
import re
import threading

import numpy as np

from .base import l2_normalise

__all__ = ["HashingEmbedder"]

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_WORD_RE = re.compile(r"\w+")
_WS_RE = re.compile(r"\s+")
_MAX_WORD_MEMO = 1 << 20


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on a uint64 array (wrapping arithmetic), a new array."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


_tables: dict[tuple[int, int, int, int], tuple[np.ndarray, np.ndarray]] = {}
_tables_lock = threading.Lock()


def _projection_table(dim: int, k: int, seed: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Feature j -> k (output dimension, ±1/√k) pairs, from splitmix64 of (seed, j, r)."""
    key = (dim, k, seed, bits)
    with _tables_lock:
        table = _tables.get(key)
        if table is None:
            j = np.arange(1 << bits, dtype=np.uint64)[:, None] * np.uint64(k)
            j = j + np.arange(k, dtype=np.uint64)[None, :]
            h = _splitmix64(j ^ _splitmix64(np.array([seed], dtype=np.uint64)))
            dims = ((h >> np.uint64(33)) % np.uint64(dim)).astype(np.int64)
            signs = (np.where((h & np.uint64(1)) == 1, 1.0, -1.0) / np.sqrt(k)).astype(np.float32)
            table = _tables[key] = (dims, signs)
    return table


class HashingEmbedder:
    """Deterministic hashed-n-gram vectors; no model, no network."""

    N_FEATURES_BITS = 18
    CHAR_NGRAMS = (3, 4, 5)
    BLOCK = 256  # texts per internal block

    def __init__(self, dim: int = 256, *, nnz_per_feature: int = 8, seed: int = 1,
                 word_weight: float = 1.0, char_weight: float = 1.0):
        if not 1 <= dim <= 65535:
            raise ValueError("dim must be in 1..65535")
        self.dim = int(dim)
        self.k = int(nnz_per_feature)
        self.seed = int(seed)
        self.word_weight = float(word_weight)
        self.char_weight = float(char_weight)
        defaults = (self.dim, self.k, self.seed, self.word_weight, self.char_weight) == (256, 8, 1, 1.0, 1.0)
        self.model_id = "hashing-v1" if defaults else (
            f"hashing-v1-d{self.dim}-k{self.k}-s{self.seed}-w{self.word_weight:g}-c{self.char_weight:g}")
        self._n_features = 1 << self.N_FEATURES_BITS
        self._proj_dims: np.ndarray | None = None
        self._proj_signs: np.ndarray | None = None
        self._lock = threading.Lock()
        self._word_memo: dict[str, int] = {}

    # ------------------------------------------------------------------ projection table
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        """(dims, signs) of shape (2**18, k): built on first use, shared by all instances
        with the same (dim, k, seed)."""
        if self._proj_dims is None:
            self._proj_dims, self._proj_signs = _projection_table(self.dim, self.k, self.seed,
                                                                  self.N_FEATURES_BITS)
        return self._proj_dims, self._proj_signs  # type: ignore[return-value]

    # ------------------------------------------------------------------ features
    def _word_hash(self, word: str) -> int:
        h = self._word_memo.get(word)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogatepass"),
                                               digest_size=8).digest(), "little")
            if len(self._word_memo) >= _MAX_WORD_MEMO:
                self._word_memo.clear()
            self._word_memo[word] = h
        return h

    def _word_features(self, lowered: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(text index, 64-bit hash) of every word unigram and bigram."""
        rows: list[int] = []
        hashes: list[int] = []
        wh = self._word_hash
        for r, text in enumerate(lowered):
            words = _WORD_RE.findall(text)
            if not words:
                continue
            hs = [wh(w) for w in words]
            rows.extend([r] * len(hs))
            hashes.extend(hs)
        if not hashes:
            return np.zeros(0, np.int64), np.zeros(0, np.uint64)
        h = np.array(hashes, dtype=np.uint64)
        row = np.array(rows, dtype=np.int64)
        uni = _splitmix64(h ^ np.uint64(0x1111111111111111))
        same = row[1:] == row[:-1]  # bigrams: consecutive words of the same text
        bi = _splitmix64((h[:-1] * np.uint64(0x100000001B3)) ^ _splitmix64(h[1:] ^ np.uint64(0x2222222222222222)))
        return (np.concatenate([row, row[:-1][same]]),
                np.concatenate([uni, bi[same]]))

    def _char_features(self, normalised: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(text index, 64-bit hash) of every character 3/4/5-gram, for the whole batch."""
        padded = [f" {t} " for t in normalised]
        joined = "\x00".join(padded)
        cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        n = cps.shape[0]
        is_sep = np.zeros(n + 1, dtype=np.int64)
        is_sep[1:] = np.cumsum(cps == 0)  # separators before position i: is_sep[i]
        row_of = is_sep[:n]               # text index of position i (separators belong to the next)
        rows, hashes = [], []
        h = np.zeros(n, dtype=np.uint64)
        mult = np.uint64(0x100000001B3)
        for size in range(1, max(self.CHAR_NGRAMS) + 1):
            m = n - size + 1
            if m <= 0:
                break
            # h[i] = hash of cps[i : i+size], built from the (size-1)-gram hash
            h = h[:m] * mult + cps[size - 1: size - 1 + m] + np.uint64(1)
            if size in self.CHAR_NGRAMS:
                ok = is_sep[size - 1 + 1: m + size] - is_sep[1: m + 1] == 0  # no separator inside
                ok &= cps[:m] != 0
                rows.append(row_of[:m][ok])
                hashes.append(_splitmix64(h[ok] ^ np.uint64(0x3333333333333333 + size)))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.uint64)
        return np.concatenate(rows), np.concatenate(hashes)

    def _sparse(self, rows: np.ndarray, hashes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique (row, feature) pairs with sublinear TF weights, each row scaled to unit norm."""
        if rows.size == 0:
            return rows, rows, np.zeros(0, np.float32)
        feat = (hashes >> np.uint64(64 - self.N_FEATURES_BITS)).astype(np.int64)
        keys = rows * self._n_features + feat
        uniq, counts = np.unique(keys, return_counts=True)
        w = 1.0 + np.log(counts.astype(np.float64))
        urow = uniq // self._n_features
        ufeat = uniq % self._n_features
        norms = np.sqrt(np.bincount(urow, weights=w * w, minlength=n))
        w = w / norms[urow]
        return urow, ufeat, w

    # ------------------------------------------------------------------ public
    def embed(self, texts: list[str]) -> np.ndarray:
        n = len(texts)
        if n <= self.BLOCK:
            return self._embed_block(list(texts))
        # blocks keep the sort and the bincount in cache: ~4x faster than one huge pass
        return np.concatenate([self._embed_block(list(texts[i:i + self.BLOCK]))
                               for i in range(0, n, self.BLOCK)])

    def _embed_block(self, texts: list[str]) -> np.ndarray:
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        lowered = [str(t).lower() for t in texts]
        normalised = [_WS_RE.sub(" ", t).strip() for t in lowered]
        with self._lock:  # the word memo is shared
            wrow, wh = self._word_features(lowered)
        crow, ch = self._char_features(normalised)
        dims, signs = self._table()
        out = np.zeros(n * self.dim, dtype=np.float64)
        for (rows, hashes), weight in (((wrow, wh), self.word_weight), ((crow, ch), self.char_weight)):
            urow, ufeat, w = self._sparse(rows, hashes, n)
            if urow.size == 0 or weight == 0:
                continue
            idx = (urow[:, None] * self.dim + dims[ufeat]).ravel()
            val = ((w * weight)[:, None] * signs[ufeat]).ravel()
            out += np.bincount(idx, weights=val, minlength=n * self.dim)
        out = out.reshape(n, self.dim)
        empty = ~out.any(axis=1)
        if empty.any():  # no word and no 3-gram (e.g. ""): the projection of one fixed feature
            out[empty] = 0.0
            out[np.nonzero(empty)[0][:, None], dims[0][None, :]] += signs[0][None, :]
        return l2_normalise(out.astype(np.float32))
