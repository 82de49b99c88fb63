"""Knowing the server's context window, and refusing up front a prompt that cannot fit."""
from __future__ import annotations

import asyncio

import pytest

from tests.workbench.llm.conftest import make_settings
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMCallError, LLMClient
from workbench.llm.context_window import (ContextWindow, estimate_prompt_tokens, from_llama_props,
                                          from_models_list, overflow)
from workbench.llm.replay_server import ReplayServer
from workbench.llm.settings import load_settings

LONG = [{"role": "user", "content": "word " * 400}]  # 2,000 characters: about 500 tokens by estimate


def _ask(client, messages, stage="s"):
    return asyncio.run(client.complete(stage=stage, item="i", messages=messages))


def test_a_prompt_over_the_llama_cpp_slot_is_refused_before_it_is_sent(workspace):
    with ReplayServer(context_window=600, slots=2) as srv:
        client = LLMClient(make_settings(srv, answer_budgets={"s": 200}), log=CallLog(workspace.db))
        with pytest.raises(LLMCallError) as info:
            _ask(client, LONG)
        message = str(info.value)
        assert info.value.error_class == "prompt_too_long" and not info.value.endpoint_fault
        assert "prompt ≈" in message and "answer budget 200" in message and "> context window 600" in message
        assert "llama.cpp /props n_ctx per slot" in message
        assert srv.stats.chat_requests == 0
        assert client._window == ContextWindow(600, "llama.cpp /props n_ctx per slot", 2)
        # the same prompt with a budget that leaves room goes out
        client.settings.answer_budgets["s"] = 50
        assert _ask(client, LONG).text and srv.stats.chat_requests == 1
        client.log.flush()
        with workspace.db.read() as con:
            rows = con.execute("SELECT error_class, prompt_tokens FROM llm_calls ORDER BY created_at").fetchall()
        assert rows[0][0] == "prompt_too_long" and rows[0][1] == estimate_prompt_tokens(LONG)


def test_the_window_is_probed_once_per_endpoint():
    with ReplayServer(context_window=100_000) as srv:
        client = LLMClient(make_settings(srv))

        async def many():
            await asyncio.gather(*(client.complete(stage="s", item=str(i), messages=[{"role": "user",
                                   "content": f"q{i}"}]) for i in range(8)))
            await client.aclose()
        asyncio.run(many())
        assert srv.stats.requests_total == 8 + 1  # eight calls and one /props


def test_without_a_server_answer_the_workspace_setting_is_the_window(server):
    client = LLMClient(make_settings(server, context_window=256, answer_budgets={"s": 100}))
    with pytest.raises(LLMCallError, match=r"> context window 256 \(workspace setting llm.context_window\)"):
        _ask(client, LONG)
    unknown = LLMClient(make_settings(server))  # no setting either: nothing refused here
    assert _ask(unknown, LONG).text and unknown._window.tokens is None


def test_the_servers_own_context_error_is_named_and_not_retried(server):
    server.inject("context_error")
    client = LLMClient(make_settings(server))
    with pytest.raises(LLMCallError, match="exceeds the available context size") as info:
        _ask(client, LONG)
    assert info.value.error_class == "context_exceeded" and not info.value.endpoint_fault
    assert server.stats.chat_requests == 1


def test_vllm_and_llama_cpp_answers_are_read():
    vllm = {"object": "list", "data": [{"id": "other", "max_model_len": 4096},
                                       {"id": "qwen", "max_model_len": 32768}]}
    assert from_models_list(vllm, "qwen") == ContextWindow(32768, "/v1/models max_model_len")
    assert from_models_list({"data": [{"id": "only", "max_model_len": 2048}]}, "alias").tokens == 2048
    assert from_models_list({"data": [{"id": "qwen"}]}, "qwen") is None  # OpenAI's list says nothing
    assert from_llama_props({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 4}).slots == 4
    assert from_llama_props({"error": "x"}) is None and from_llama_props([]) is None


def test_overflow_names_the_numbers_and_lets_what_fits_pass():
    window = ContextWindow(4096, "llama.cpp /props n_ctx per slot")
    assert overflow(2000, 2096, window) is None
    why = overflow(5400, 2048, window)
    assert why.startswith("prompt ≈5400 tokens") and "answer budget 2048 = 7448 > context window 4096" in why
    assert overflow(10**6, 10**6, ContextWindow(None, "unknown")) is None


def test_timeouts_and_window_come_from_the_environment(tmp_path):
    s = load_settings(tmp_path, env={"WORKBENCH_LLM_IDLE_TIMEOUT_S": "45", "WORKBENCH_LLM_CONTEXT_WINDOW": "8192",
                                     "WORKBENCH_LLM_FIRST_TOKEN_TIMEOUT_S": "900"})
    assert (s.idle_timeout_s, s.first_token_timeout_s, s.context_window) == (45.0, 900.0, 8192)
