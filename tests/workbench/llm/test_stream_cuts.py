"""The client against replay behaviours of a slow small model: cut on silence, never on
length; runaway repetition stopped; every cut call stored with what it produced."""
from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from tests.workbench.llm.conftest import make_settings
from workbench.llm.cache import ResponseCache
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMCallError, LLMClient, StructuredOutputError
from workbench.llm.replay_server import ReplayServer, Rule

WORDS = " ".join(f"w{i}" for i in range(40))
MSG = [{"role": "user", "content": "Tell me a story"}]


class Goal(BaseModel):
    goal: str


def _client(server, workspace=None, tmp_path=None, **kw):
    return LLMClient(make_settings(server, **kw), log=CallLog(workspace.db if workspace else None),
                     cache=ResponseCache(tmp_path / "c.sqlite") if tmp_path else None)


def _rows(client, workspace):
    client.log.flush()
    with workspace.db.read() as con:
        return con.execute("SELECT error_class, completion_tokens, prompt_tokens FROM llm_calls "
                           "ORDER BY created_at").fetchall()


def _wait_hung_up(server, n=1):
    deadline = time.monotonic() + 5
    while server.stats.hung_up < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.stats.hung_up


def test_a_long_answer_that_keeps_coming_is_not_cut(server):
    # 40 words 0.04 s apart: 1.6 s in all, longer than the whole-request timeout and four
    # times the idle timeout, but never silent for long.
    server.add_rule(Rule(match="story", reply=WORDS))
    server.inject("slow_stream", pause_s=0.04)
    client = _client(server, timeout_s=0.5, idle_timeout_s=0.4)
    t0 = time.monotonic()
    res = asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert time.monotonic() - t0 >= 1.5
    assert res.text == WORDS and res.completion_tokens == 40 and res.attempts == 1
    assert server.stats.bodies[-1]["stream"] is True


def test_a_stream_that_stalls_is_cut_stored_with_its_partial_size_and_not_retried(server, workspace):
    server.add_rule(Rule(match="story", reply=WORDS))
    server.inject("stall", after_tokens=5, delay_s=3.0)
    client = _client(server, workspace, idle_timeout_s=0.3)
    t0 = time.monotonic()
    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert time.monotonic() - t0 < 2.0
    assert info.value.error_class == "idle_timeout" and info.value.endpoint_fault
    assert "no token for 0.3 s after 5 tokens" in str(info.value) and info.value.raw_text.split() == WORDS.split()[:5]
    assert server.stats.chat_requests == 1  # not asked again from scratch
    assert _rows(client, workspace)[0][:2] == ("idle_timeout", 5)
    assert _wait_hung_up(server) == 1  # the connection was closed, so the server stops generating


def test_no_first_token_within_its_timeout_is_cut(server, workspace):
    server.inject("delay", delay_s=3.0)
    client = _client(server, workspace, first_token_timeout_s=0.3)
    with pytest.raises(LLMCallError, match="no first token within 0.3 s") as info:
        asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert info.value.error_class == "idle_timeout" and server.stats.chat_requests == 1
    assert _rows(client, workspace)[0][:2] == ("idle_timeout", 0)


def test_runaway_repetition_is_stopped_long_before_the_budget(server, workspace):
    server.inject("repeat", pause_s=0.001)
    client = _client(server, workspace, answer_budgets={"s": 3000})
    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.complete(stage="s", item="i", messages=MSG, schema=Goal))
    assert info.value.error_class == "repetition" and not info.value.endpoint_fault
    assert server.stats.chat_requests == 1 and _wait_hung_up(server) == 1
    [(reason, completion, _)] = _rows(client, workspace)
    assert reason == "repetition" and 20 < completion < 300  # of a 3,000-token answer


def test_every_call_asks_for_at_most_its_stage_budget(server):
    client = _client(server, answer_budgets={"s": 77, "synth_repair_*": 99})
    for stage in ("s", "synth_plan", "synth_repair_tests", "never-heard-of"):
        asyncio.run(client.complete(stage=stage, item="i", messages=[{"role": "user", "content": stage}]))
    assert [b["max_tokens"] for b in server.stats.bodies] == [77, 2048, 99, 2048]
    asyncio.run(client.complete(stage="s", item="i", messages=MSG, params={"max_tokens": 5}))
    assert server.stats.bodies[-1]["max_tokens"] == 5  # a caller's own cap wins


def test_an_answer_cut_by_its_budget_is_stored_as_length_and_not_reasked(server, workspace, tmp_path):
    server.add_rule(Rule(match="story", reply='{"goal": "' + WORDS + '"}'))
    client = _client(server, workspace, tmp_path, answer_budgets={"s": 10})
    with pytest.raises(StructuredOutputError, match="reached its budget of 10 tokens") as info:
        asyncio.run(client.complete(stage="s", item="i", messages=MSG, schema=Goal))
    assert info.value.error_class == "length" and server.stats.chat_requests == 1
    text = asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert text.finish_reason == "length" and text.completion_tokens == 10
    assert [r[:2] for r in _rows(client, workspace)] == [("length", 10), ("length", 10)]
    assert client.cache.count() == 0  # a cut answer is never reused


def test_a_server_that_answers_a_stream_with_json_is_asked_whole_from_then_on(server):
    server.add_rule(Rule(match="story", reply=WORDS))
    server.inject("no_stream")
    client = _client(server)
    first = asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    second = asyncio.run(client.complete(stage="s", item="j", messages=MSG + [{"role": "user", "content": "2"}]))
    assert first.text == second.text == WORDS and first.completion_tokens == 40
    assert [b.get("stream") for b in server.stats.bodies] == [True, None]


def test_a_server_that_refuses_streaming_is_asked_again_whole(server, workspace):
    server.inject("stream_refused")
    client = _client(server, workspace)
    res = asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert res.text == "ok" and res.attempts == 2
    assert [b.get("stream") for b in server.stats.bodies] == [True, None]
    assert [r[0] for r in _rows(client, workspace)] == ["StreamingUnsupported", None]


def test_calls_in_flight_when_the_server_refuses_streaming_are_all_asked_again_whole(workspace):
    # Three streamed requests were out before the first 400 came back: none fails for it.
    with ReplayServer(latency_s=0.2) as srv:
        srv.inject("stream_refused", 3)
        client = _client(srv, workspace, concurrency=3)

        async def three():
            try:
                return await asyncio.gather(*(client.complete(stage="s", item=str(n), messages=MSG + [
                    {"role": "user", "content": str(n)}]) for n in range(3)))
            finally:
                await client.aclose()
        assert [r.text for r in asyncio.run(three())] == ["ok"] * 3
        assert [b.get("stream") for b in srv.stats.bodies] == [True] * 3 + [None] * 3
    assert sorted(r[0] or "" for r in _rows(client, workspace)) == [""] * 3 + ["StreamingUnsupported"] * 3


def test_a_whole_request_that_times_out_is_not_asked_again_from_scratch(server, workspace):
    # Without streaming the timeout is on length: the server was working on the answer, and
    # asking again would only start it over (issue 26: nine cancelled calls, none stored).
    server.inject("stream_refused")
    server.inject("delay", delay_s=2.0)
    client = _client(server, workspace, timeout_s=0.3, max_retries=3)
    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.complete(stage="s", item="i", messages=MSG))
    assert info.value.error_class == "APITimeoutError" and info.value.endpoint_fault
    assert server.stats.chat_requests == 2  # the refused stream, then one whole request
    assert [r[0] for r in _rows(client, workspace)] == ["StreamingUnsupported", "APITimeoutError"]


def test_a_call_cancelled_mid_stream_is_stored_with_what_it_produced(server, workspace):
    server.add_rule(Rule(match="story", reply=WORDS))
    server.inject("slow_stream", pause_s=0.1)  # 4 s in all
    client = _client(server, workspace)

    async def stop_after_a_while():
        task = asyncio.create_task(client.complete(stage="s", item="i", messages=MSG))
        await asyncio.sleep(1.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(stop_after_a_while())
    [(reason, completion, prompt)] = _rows(client, workspace)
    assert reason == "cancelled" and 1 <= completion < 40 and prompt > 0
    assert _wait_hung_up(server) == 1
