"""The replay server's injected faults, as the real ``openai`` client sees them."""
from __future__ import annotations

import json
import time

import openai
import pytest

from tests.workbench.llm.replay_calls import ask, client_for, content
from workbench.llm.replay_server import Rule


def test_rate_limit_raises_with_retry_after_header(server):
    server.inject("rate_limit", retry_after=2)
    server.inject("rate_limit")
    client = client_for(server)
    with pytest.raises(openai.RateLimitError) as info:
        ask(client, "hi")
    assert info.value.status_code == 429
    assert info.value.response.headers["Retry-After"] == "2"
    assert info.value.body["type"] == "rate_limit_error"  # the SDK unwraps {"error": {...}}
    with pytest.raises(openai.RateLimitError) as info:
        ask(client, "hi")
    assert "retry-after" not in info.value.response.headers
    assert content(ask(client, "hi")) == "ok"  # the faults are used up
    assert server.stats.faults_served == 2
    assert server.stats.by_status[429] == 2


def test_fractional_retry_after_is_honoured_by_client_retries(server):
    server.inject("rate_limit", 2, retry_after=0.05)
    done = ask(client_for(server, max_retries=2), "hi")
    assert content(done) == "ok"
    assert server.stats.chat_requests == 3


def test_server_error_raises_internal_server_error(server):
    server.inject("server_error")
    with pytest.raises(openai.InternalServerError) as info:
        ask(client_for(server), "hi")
    assert info.value.status_code == 500


def test_faults_are_fifo_and_only_hit_chat(server):
    server.inject("server_error")
    server.inject("rate_limit")
    client = client_for(server)
    client.embeddings.create(model="e", input="not faulted")
    with pytest.raises(openai.InternalServerError):
        ask(client, "1")
    with pytest.raises(openai.RateLimitError):
        ask(client, "2")
    assert server.pending_faults == 0


def test_malformed_content_is_unparseable(server):
    server.add_rule(Rule(reply={"goal": "fine"}))
    server.inject("malformed_content")
    client = client_for(server)
    broken = content(ask(client, "plan"))
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)
    assert json.loads(content(ask(client, "plan"))) == {"goal": "fine"}


def test_malformed_body_makes_the_client_raise(server):
    """openai 3.57 does not wrap it: the stdlib ``json.JSONDecodeError`` escapes, not an APIError."""
    server.inject("malformed_body")
    client = client_for(server)
    with pytest.raises(json.JSONDecodeError) as info:
        ask(client, "hi")
    assert not isinstance(info.value, openai.OpenAIError)
    assert content(ask(client, "hi")) == "ok"


def test_delay_makes_the_client_time_out(server):
    server.inject("delay", delay_s=1.0)
    client = client_for(server, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        ask(client, "slow")
    assert content(ask(client, "fast")) == "ok"
    deadline = time.monotonic() + 3
    while server.stats.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.stats.in_flight == 0  # the abandoned request is counted out when answered


def test_unknown_fault_kind_is_rejected(server):
    with pytest.raises(ValueError):
        server.inject("meltdown")
