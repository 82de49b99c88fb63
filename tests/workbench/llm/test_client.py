"""The LLM client against a real local HTTP server: cache, retries, re-ask, budget, concurrency."""
from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from tests.workbench.llm.conftest import make_settings
from workbench.llm.batch import map_bounded
from workbench.llm.budget import Budget
from workbench.llm.cache import ResponseCache
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMCallError, LLMClient, StructuredOutputError
from workbench.llm.replay_server import ReplayServer, Rule


class Answer(BaseModel):
    city: str
    population: int


MSG = [{"role": "user", "content": "Which city?"}]


def _client(server, tmp_path, workspace=None, **kw):
    return LLMClient(make_settings(server, **kw), cache=ResponseCache(tmp_path / "cache.sqlite"),
                     log=CallLog(workspace.db if workspace else None))


def _run(coro):
    return asyncio.run(coro)


def test_cache_hit_makes_no_http_call(server, tmp_path, workspace):
    server.add_rule(Rule(match="Which city", reply={"city": "Ghent", "population": 265000}))
    client = _client(server, tmp_path, workspace)
    first = _run(client.complete(stage="s", item="i", messages=MSG, schema=Answer))
    second = _run(client.complete(stage="s", item="i", messages=MSG, schema=Answer))
    assert first.parsed == second.parsed == Answer(city="Ghent", population=265000)
    assert not first.cached and second.cached and second.cost_usd == 0
    assert server.stats.chat_requests == 1
    # a new client on the same cache file (another process, say) also hits
    again = _run(_client(server, tmp_path).complete(stage="s", item="i", messages=MSG, schema=Answer))
    assert again.cached and server.stats.chat_requests == 1
    client.log.flush()
    with workspace.db.read() as con:
        rows = con.execute("SELECT cache_hit, attempt, cost_usd FROM llm_calls ORDER BY created_at").fetchall()
    assert [r[0] for r in rows] == [False, True]
    assert rows[0][2] > 0 and rows[1][2] == 0


def test_sampled_calls_bypass_the_cache_so_k_samples_differ(server, tmp_path):
    # k samples at temperature > 0: every draw goes to the endpoint and none is stored, or the
    # cache would hand the first draw back k times; a temperature-0 call still caches.
    draws = iter(f"draw {i}" for i in range(10))
    server.add_rule(Rule(match="Which city", reply=lambda body: next(draws)))
    client = _client(server, tmp_path)
    hot = [_run(client.complete(stage="s", item="i", messages=MSG, params={"temperature": 0.7}))
           for _ in range(3)]
    assert [r.text for r in hot] == ["draw 0", "draw 1", "draw 2"] and not any(r.cached for r in hot)
    assert client.cache.count() == 0 and server.stats.chat_requests == 3
    cold = [_run(client.complete(stage="s", item="i", messages=MSG, params={"temperature": 0})) for _ in range(2)]
    assert [r.text for r in cold] == ["draw 3", "draw 3"] and cold[1].cached
    assert server.stats.chat_requests == 4


def test_429_is_retried_after_the_retry_after_delay(server, tmp_path, workspace):
    server.inject("rate_limit", 1, retry_after=0.4)
    client = _client(server, tmp_path, workspace)
    t0 = time.perf_counter()
    res = _run(client.complete(stage="s", item="i", messages=MSG))
    assert time.perf_counter() - t0 >= 0.4
    assert res.text and res.attempts == 2 and server.stats.chat_requests == 2
    client.log.flush()
    with workspace.db.read() as con:
        errs = [r[0] for r in con.execute("SELECT error_class FROM llm_calls ORDER BY attempt").fetchall()]
    assert errs == ["RateLimitError", None]


def test_5xx_retried_with_backoff_then_given_up(server, tmp_path):
    server.inject("server_error", 10)
    client = _client(server, tmp_path, max_retries=2)
    with pytest.raises(LLMCallError) as info:
        _run(client.complete(stage="s", item="i", messages=MSG))
    assert info.value.error_class == "InternalServerError" and info.value.attempts == 3
    assert server.stats.chat_requests == 3


def test_other_4xx_is_not_retried(server, tmp_path):
    client = LLMClient(make_settings(server, base_url=server.base_url.replace("/v1", "/missing/v1")))
    with pytest.raises(LLMCallError) as info:
        _run(client.complete(stage="s", item="i", messages=MSG))
    assert info.value.error_class == "NotFoundError" and info.value.attempts == 1
    # the context-window probes (/props, /models) and one chat request, not retried
    assert server.stats.requests_total == 3 and server.stats.by_status[404] == 3


def test_malformed_json_is_reasked_then_succeeds(server, tmp_path):
    server.inject("malformed_content", 1)
    client = _client(server, tmp_path)
    res = _run(client.complete(stage="s", item="i", messages=MSG, schema=Answer))
    assert isinstance(res.parsed, Answer) and res.attempts == 2
    reask = server.stats.bodies[-1]["messages"]
    assert reask[-1]["role"] == "user" and "could not be used" in reask[-1]["content"]
    assert reask[-2]["role"] == "assistant"  # the broken reply is shown back to the model


def test_malformed_json_recorded_as_failed_after_bounded_reasks(server, tmp_path, workspace):
    server.inject("malformed_content", 5)
    client = _client(server, tmp_path, workspace, reask_limit=2)
    with pytest.raises(StructuredOutputError) as info:
        _run(client.complete(stage="s", item="x", messages=MSG, schema=Answer))
    assert info.value.raw_text and info.value.attempts == 3 and server.stats.chat_requests == 3
    client.log.flush()
    with workspace.db.read() as con:
        assert con.execute("SELECT count(*) FROM llm_calls WHERE error_class = 'InvalidStructuredOutput'"
                           ).fetchone()[0] == 3
    # nothing invalid was cached
    assert ResponseCache(tmp_path / "cache.sqlite").count() == 0


def test_budget_cap_stops_the_batch_and_keeps_partial_results(server, tmp_path):
    client = _client(server, tmp_path, concurrency=1)
    one = _run(client.complete(stage="probe", item="p", messages=[{"role": "user", "content": "probe"}]))
    client.budget = Budget(cap_usd=one.cost_usd * 3.5)

    async def job(i):
        return await client.complete(stage="batch", item=str(i), messages=[{"role": "user", "content": f"q{i}"}])

    server.reset_stats()
    outcome = _run(map_bounded(range(20), job, concurrency=1))
    assert outcome.stopped and "budget" in outcome.stopped
    assert len(outcome.results) == 4 and len(outcome.not_started) == 16 and not outcome.failures
    assert server.stats.chat_requests == 4
    assert client.budget.by_stage["batch"].calls == 4


def test_concurrency_limit_holds(tmp_path):
    with ReplayServer(latency_s=0.05) as slow:
        client = _client(slow, tmp_path, concurrency=4)

        async def job(i):
            return await client.complete(stage="c", item=str(i), messages=[{"role": "user", "content": f"n{i}"}])

        outcome = _run(map_bounded(range(40), job, concurrency=32))
        assert len(outcome.results) == 40
        assert slow.stats.max_in_flight == 4


def test_changing_one_stage_template_invalidates_only_that_stage(server, tmp_path):
    client = _client(server, tmp_path)

    def call(stage, version):
        return _run(client.complete(stage=stage, item="i", messages=[{"role": "user", "content": stage}],
                                    template_version=version))

    call("a", "v1"), call("b", "v1")
    assert server.stats.chat_requests == 2
    assert call("a", "v2").cached is False and call("b", "v1").cached is True
    assert server.stats.chat_requests == 3
