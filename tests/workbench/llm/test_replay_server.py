"""The replay server, exercised over real HTTP by the real ``openai`` client."""
from __future__ import annotations

import enum
import json
import math
import threading
import urllib.error
import urllib.request

import openai
import pytest
from pydantic import BaseModel, Field

from tests.workbench.llm.replay_calls import ask, client_for, content
from workbench.llm.replay_server import ReplayServer, Rule, Script, embedding_vector


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


# ----------------------------------------------------------------- models for schema replies


class Level(str, enum.Enum):
    easy = "easy"
    hard = "hard"


class Step(BaseModel):
    command: str = Field(min_length=12)
    timeout_s: int = Field(ge=5)
    weight: float = Field(gt=0.5)


class Plan(BaseModel):
    goal: str
    level: Level
    steps: list[Step] = Field(min_length=2)
    tags: list[str]
    note: str | None
    verified: bool
    optional_extra: str = "default"


# ----------------------------------------------------------------- scripted replies


def test_scripted_reply_by_match_over_all_messages(server):
    server.add_rule(Rule(match="sort lines", reply="use sort"))
    server.add_rule(Rule(match="ROLE:planner", reply="planned"))
    client = client_for(server)

    done = ask(client, "please sort lines of a.txt")
    assert content(done) == "use sort"
    assert done.object == "chat.completion"
    assert done.id.startswith("chatcmpl-")
    assert done.model == "replay-model"
    assert isinstance(done.created, int)
    assert done.choices[0].message.role == "assistant"
    assert done.choices[0].finish_reason == "stop"
    # the match looks at every message, the system one included
    assert content(ask(client, "anything", system="ROLE:planner")) == "planned"
    # nothing matches: "ok"
    assert content(ask(client, "unrelated")) == "ok"


def test_usage_counts_whitespace_words(server):
    server.add_rule(Rule(reply="three word answer"))
    done = ask(client_for(server), "one two  three\nfour", system="five")
    assert done.usage.prompt_tokens == 5
    assert done.usage.completion_tokens == 3
    assert done.usage.total_tokens == 8
    server.set_rules([Rule(reply="")])
    empty = ask(client_for(server), "")
    assert content(empty) == ""
    assert empty.usage.prompt_tokens == 1 and empty.usage.completion_tokens == 1  # at least one


def test_times_exhausts_to_the_next_rule(server):
    server.add_rule(Rule(match="hello", reply="first", times=2))
    server.add_rule(Rule(match="hello", reply="second", times=1))
    client = client_for(server)
    answers = [content(ask(client, "hello there")) for _ in range(4)]
    assert answers == ["first", "first", "second", "ok"]


def test_rules_are_reusable_across_servers():
    script = Script([Rule(match="x", reply="once", times=1)])
    for _ in range(2):
        with ReplayServer(script) as srv:
            assert content(ask(client_for(srv), "x")) == "once"


def test_model_specific_rule(server):
    server.add_rule(Rule(reply="from big", model="big-model"))
    server.add_rule(Rule(reply="from any"))
    client = client_for(server)
    assert content(ask(client, "hi", model="big-model")) == "from big"
    done = ask(client, "hi", model="small-model")
    assert content(done) == "from any"
    assert done.model == "small-model"


def test_dict_list_and_callable_replies(server):
    server.add_rule(Rule(match="dict", reply={"goal": "sort", "steps": [1, 2]}))
    server.add_rule(Rule(match="list", reply=["a", "b"]))
    seen = []

    def echo(body: dict) -> dict:
        seen.append(body)
        return {"echo": body["messages"][-1]["content"], "temperature": body.get("temperature")}

    server.add_rule(Rule(match="callable", reply=echo))
    client = client_for(server)
    assert json.loads(content(ask(client, "a dict please"))) == {"goal": "sort", "steps": [1, 2]}
    assert json.loads(content(ask(client, "a list please"))) == ["a", "b"]
    assert json.loads(content(ask(client, "callable!", temperature=0.3))) == {
        "echo": "callable!", "temperature": 0.3}
    assert seen[0]["model"] == "replay-model"


def test_failing_callable_answers_500(server):
    server.add_rule(Rule(reply=lambda body: 1 / 0))
    with pytest.raises(openai.InternalServerError):
        ask(client_for(server), "boom")


def test_script_from_file(tmp_path):
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps({"latency_s": 0.01, "rules": [
        {"match": "plan", "reply": {"goal": "x"}, "times": 1},
        {"match": "plan", "reply": "again"},
    ]}))
    script = Script.from_file(path)
    assert script.latency_s == 0.01
    assert [r.times for r in script.rules] == [1, None]
    with ReplayServer(script) as srv:
        assert srv.latency_s == 0.01
        client = client_for(srv)
        assert json.loads(content(ask(client, "make a plan"))) == {"goal": "x"}
        assert content(ask(client, "make a plan")) == "again"
    # the latency_s argument wins over the script's
    assert ReplayServer(script, latency_s=0).latency_s == 0


# ----------------------------------------------------------------- schema replies


def test_schema_default_reply_validates_against_pydantic_model(server):
    schema = Plan.model_json_schema()
    done = ask(client_for(server), "make a plan", response_format={
        "type": "json_schema", "json_schema": {"name": "Plan", "schema": schema}})
    plan = Plan.model_validate_json(content(done))
    assert plan.level is Level.easy
    assert len(plan.steps) == 2 and len(plan.tags) == 1
    assert len(plan.steps[0].command) >= 12 and plan.steps[0].timeout_s >= 5 and plan.steps[0].weight > 0.5
    assert plan.note is not None  # anyOf: the first non-null branch
    import jsonschema
    jsonschema.validate(json.loads(content(done)), schema)
    # deterministic
    again = ask(client_for(server), "make a plan", response_format={
        "type": "json_schema", "json_schema": {"name": "Plan", "schema": schema}})
    assert content(again) == content(done)


def test_schema_default_reply_through_parse_helper(server):
    """``chat.completions.parse`` sends the strict schema (every field required)."""
    done = client_for(server).chat.completions.parse(
        model="replay-model", messages=[{"role": "user", "content": "plan"}], response_format=Plan)
    plan = done.choices[0].message.parsed
    assert isinstance(plan, Plan)
    sent = server.stats.bodies[-1]["response_format"]
    assert sent["type"] == "json_schema"


def test_json_object_and_no_format_answer_ok(server):
    client = client_for(server)
    assert content(ask(client, "x", response_format={"type": "json_object"})) == "ok"
    assert content(ask(client, "x")) == "ok"


# ----------------------------------------------------------------- embeddings


def test_embeddings_are_deterministic_unit_vectors(server):
    client = client_for(server)
    first = client.embeddings.create(model="emb", input=["alpha beta", "gamma"])  # SDK asks for base64
    again = client.embeddings.create(model="emb", input=["gamma"], encoding_format="float")
    assert [d.index for d in first.data] == [0, 1]
    assert first.data[0].object == "embedding" and first.object == "list"
    assert first.usage.prompt_tokens == 3 and first.usage.total_tokens == 3
    a, g = first.data[0].embedding, first.data[1].embedding
    assert len(a) == 64
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-5)
    assert a != g
    assert again.data[0].embedding == pytest.approx(g, abs=1e-6)  # float32 via base64 vs float
    assert again.data[0].embedding == pytest.approx(embedding_vector("gamma", 64))
    single = client.embeddings.create(model="emb", input="gamma", dimensions=16, encoding_format="float")
    assert len(single.data[0].embedding) == 16
    assert math.isclose(sum(x * x for x in single.data[0].embedding), 1.0, rel_tol=1e-9)
    with ReplayServer() as other:  # same text, same vector, on another server
        assert client_for(other).embeddings.create(
            model="emb", input="gamma", encoding_format="float").data[0].embedding == again.data[0].embedding
    assert server.stats.embedding_requests == 3


# ----------------------------------------------------------------- other endpoints, stats


def test_models_and_stats_endpoints(server):
    server.add_rule(Rule(reply="x", model="special"))
    assert {m.id for m in client_for(server).models.list()} == {"replay-model", "special"}
    ask(client_for(server), "hello stats")
    stats = get_json(server.url + "/_stats")
    assert stats["chat_requests"] == 1
    assert stats["bodies"][0]["messages"][0]["content"] == "hello stats"
    assert stats["in_flight"] == 1  # the /_stats request itself
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(server.url + "/v1/nowhere", timeout=5)
    assert info.value.code == 404
    assert "error" in json.loads(info.value.read())


def test_bad_request_body(server):
    req = urllib.request.Request(server.base_url + "/chat/completions", data=b"not json",
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=5)
    assert info.value.code == 400


def test_stats_count_and_reset(server):
    client = client_for(server)
    for i in range(3):
        ask(client, f"q{i}")
    stats = server.stats
    assert stats.requests_total == 3 and stats.chat_requests == 3
    assert [b["messages"][0]["content"] for b in stats.bodies] == ["q0", "q1", "q2"]
    assert stats.by_status[200] == 3
    server.reset_stats()
    assert server.stats.requests_total == 0 and server.stats.bodies == [] and not server.stats.by_status


def test_max_in_flight_with_concurrent_threads():
    with ReplayServer(latency_s=0.1) as srv:
        client = client_for(srv)
        errors: list[BaseException] = []
        barrier = threading.Barrier(32)

        def call(i: int) -> None:
            try:
                barrier.wait()
                assert content(ask(client, f"t{i}")) == "ok"
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors
        assert srv.stats.max_in_flight >= 16
        assert srv.stats.in_flight == 0
        assert srv.stats.chat_requests == 32


def test_streaming_reply(server):
    server.add_rule(Rule(reply="streamed words"))
    chunks = list(ask(client_for(server), "s", stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed words"
    assert chunks[-1].usage.completion_tokens == 2


def test_async_client(server):
    import asyncio

    async def main():
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        try:
            done = await asyncio.gather(*(client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": str(i)}]) for i in range(8)))
        finally:
            await client.close()
        return [content(d) for d in done]

    assert asyncio.run(main()) == ["ok"] * 8


def test_lifecycle():
    srv = ReplayServer()
    with pytest.raises(RuntimeError):
        srv.base_url
    srv.start()
    port = srv.port
    assert srv.base_url == f"http://127.0.0.1:{port}/v1"
    srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(openai.APIConnectionError):
        ask(openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="test", max_retries=0,
                          timeout=2), "gone")
