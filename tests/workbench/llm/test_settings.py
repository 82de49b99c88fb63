"""Settings: environment over workspace config; the key is stored encrypted and never shown."""
from __future__ import annotations

import json

import pytest

from workbench.llm import secrets
from workbench.llm.settings import load_settings, save_settings


@pytest.fixture(autouse=True)
def key_file(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SECRET_KEY_FILE", str(tmp_path / "secret.key"))
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_no_endpoint_means_offline(tmp_path):
    s = load_settings(tmp_path, env={})
    assert not s.online and s.provider == "offline"


def test_key_is_encrypted_at_rest_and_never_in_public_view(tmp_path):
    save_settings(tmp_path, base_url="http://127.0.0.1:9/v1", model="m1", concurrency=3, budget_usd=2.5,
                  api_key="sk-very-secret-123")
    raw = (tmp_path / "config.json").read_text()
    assert "sk-very-secret-123" not in raw and "api_key_encrypted" in raw
    s = load_settings(tmp_path, env={})
    assert s.api_key.get_secret_value() == "sk-very-secret-123"
    assert "sk-very-secret-123" not in repr(s) and "sk-very-secret-123" not in json.dumps(s.public_dict())
    assert s.public_dict()["api_key_set"] is True and s.online and s.concurrency == 3
    # saving again without a key keeps it; clearing removes it
    save_settings(tmp_path, base_url="http://127.0.0.1:9/v1", model="m2", concurrency=3, budget_usd=None)
    assert load_settings(tmp_path, env={}).api_key.get_secret_value() == "sk-very-secret-123"
    save_settings(tmp_path, base_url=None, model="m2", concurrency=3, budget_usd=None, clear_key=True)
    assert load_settings(tmp_path, env={}).api_key is None


def test_environment_overrides_the_workspace(tmp_path):
    save_settings(tmp_path, base_url="http://a/v1", model="m1", concurrency=3, budget_usd=None)
    s = load_settings(tmp_path, env={"WORKBENCH_LLM_BASE_URL": "http://b/v1", "WORKBENCH_LLM_MODEL": "m9",
                                     "OPENAI_API_KEY": "k"})
    assert (s.base_url, s.model, s.api_key.get_secret_value()) == ("http://b/v1", "m9", "k")


def test_a_key_from_another_machine_gives_a_clear_error(tmp_path, monkeypatch):
    save_settings(tmp_path, base_url="http://a/v1", model="m", concurrency=1, budget_usd=None, api_key="k")
    monkeypatch.setenv("WORKBENCH_SECRET_KEY_FILE", str(tmp_path / "other.key"))
    with pytest.raises(ValueError, match="cannot be decrypted on this machine"):
        load_settings(tmp_path, env={})
    assert secrets.decrypt(secrets.encrypt("x")) == "x"


def test_broken_config_file_is_named(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json is not valid JSON"):
        load_settings(tmp_path, env={})
