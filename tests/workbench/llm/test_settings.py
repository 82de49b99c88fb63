"""Settings: environment over workspace config; the key is stored encrypted and never shown."""
from __future__ import annotations

import json

import pytest

from tests.workbench.llm.replay_calls import workspace_call as call_once
from workbench.llm import secrets
from workbench.llm.settings import KeyConfirmationError, endpoint_origin, load_settings, save_settings


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


# --- the stored key is bound to its endpoint ------------------------------------------------

KEY = "sk-bound-to-a"


@pytest.fixture
def two_servers():
    from workbench.llm.replay_server import ReplayServer
    a, b = ReplayServer().start(), ReplayServer().start()
    yield a, b
    a.stop()
    b.stop()


def bearer_seen(srv) -> bool:
    return srv.stats.authorizations[f"Bearer {KEY}"] > 0


def save(ws, base_url, **kw):
    save_settings(ws.root, base_url=base_url, model="replay-model", concurrency=1, budget_usd=None, **kw)


def test_a_changed_endpoint_never_receives_the_stored_key_without_confirmation(workspace, two_servers):
    a, b = two_servers
    save(workspace, a.base_url, api_key=KEY)
    call_once(workspace, "first")
    assert bearer_seen(a)
    save(workspace, b.base_url)  # the key field left empty: the stored key stays bound to a
    s = load_settings(workspace.root, env={})
    assert s.api_key is None and s.stored_key_withheld
    assert s.stored_key_endpoint == f"http://127.0.0.1:{a.port}"
    call_once(workspace, "second")
    assert b.stats.chat_requests == 1 and not bearer_seen(b)  # probes (/props, /models) carry no key either
    # A confirmation must name the endpoint being saved; one naming another host changes nothing.
    with pytest.raises(KeyConfirmationError, match=f"names http://127.0.0.1:{a.port}, but the endpoint"):
        save(workspace, b.base_url, send_key_to=a.base_url)
    call_once(workspace, "third")
    assert not bearer_seen(b)
    save(workspace, b.base_url, send_key_to=f"http://127.0.0.1:{b.port}")
    call_once(workspace, "fourth")
    assert bearer_seen(b)


def test_switching_back_to_the_keys_own_endpoint_uses_it_again(workspace, two_servers):
    a, b = two_servers
    save(workspace, a.base_url, api_key=KEY)
    save(workspace, b.base_url)
    save(workspace, a.base_url.rstrip("/") + "/")
    call_once(workspace, "back")
    assert bearer_seen(a) and not bearer_seen(b)


def test_editing_the_config_file_cannot_re_point_the_key(workspace, two_servers):
    a, b = two_servers
    save(workspace, a.base_url, api_key=KEY)
    path = workspace.root / "config.json"
    config = json.loads(path.read_text())
    config["llm"].update(base_url=b.base_url, stored_key_endpoint=f"http://127.0.0.1:{b.port}")
    path.write_text(json.dumps(config))
    call_once(workspace, "tampered")
    assert b.stats.chat_requests == 1 and not bearer_seen(b)  # probes (/props, /models) carry no key either


def test_an_endpoint_from_the_environment_does_not_get_the_stored_key(tmp_path):
    save_settings(tmp_path, base_url="http://a.example/v1", model="m", concurrency=1, budget_usd=None,
                  api_key=KEY)
    s = load_settings(tmp_path, env={"WORKBENCH_LLM_BASE_URL": "http://b.example/v1"})
    assert s.api_key is None and s.stored_key_withheld and s.stored_key_endpoint == "http://a.example:80"
    own = load_settings(tmp_path, env={"WORKBENCH_LLM_BASE_URL": "HTTP://A.example:80/v1/"})
    assert own.api_key.get_secret_value() == KEY and not own.stored_key_withheld


def test_endpoint_origin_spells_out_what_a_key_is_bound_to():
    assert endpoint_origin("https://API.openai.com/v1") == "https://api.openai.com:443"
    assert endpoint_origin("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000"
    assert endpoint_origin("http://user:pw@evil.example/v1") == "http://evil.example:80"
    assert endpoint_origin("") is None and endpoint_origin(None) is None


def test_a_key_stored_before_binding_belongs_to_the_saved_endpoint(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"llm": {
        "base_url": "http://a.example/v1", "api_key_encrypted": secrets.encrypt(KEY)}}))
    assert load_settings(tmp_path, env={}).api_key.get_secret_value() == KEY
    save_settings(tmp_path, base_url="http://b.example/v1", model="m", concurrency=1, budget_usd=None)
    s = load_settings(tmp_path, env={})
    assert s.api_key is None and s.stored_key_endpoint == "http://a.example:80"
