import pytest

from workbench.embeddings import Embedder, get_embedder


def test_get_embedder_names():
    assert isinstance(get_embedder("hashing"), Embedder)
    with pytest.raises(ValueError):
        get_embedder("nope")


def test_minilm_is_default():
    e = get_embedder()
    assert e.model_id == "minilm-l6-v2-numpy" and e is get_embedder("minilm")
