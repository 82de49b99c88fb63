"""Structured output where the server offers it (issue 26.5), over HTTP with the real client.

A structured call sends its schema as `response_format` (json_schema); a server that refuses
that with a 400, or ignores it and answers prose, makes the client fall back, once for the
endpoint, to JSON mode with the schema in the prompt, then to the schema in the prompt
alone, validating and re-asking as before. Every attempt keeps its row in `llm_calls`.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from tests.workbench.llm.conftest import make_settings
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMClient, StructuredOutputError
from workbench.llm.replay_server import ReplayServer, Rule


class Answer(BaseModel):
    city: str
    population: int


SYSTEM = "You answer questions about cities."
MSG = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Which city?"}]
GHENT = {"city": "Ghent", "population": 265000}
PROSE = "I think it is Ghent, a city of about 265,000 people."


@pytest.fixture
def open_server():
    started = []

    def start(**kw) -> ReplayServer:
        started.append(ReplayServer(**kw).start())
        return started[-1]
    yield start
    for srv in started:
        srv.stop()


def _client(srv, workspace, **kw):
    return LLMClient(make_settings(srv, **kw), log=CallLog(workspace.db))


def _answering_ghent(open_server, workspace, structured: str, **kw):
    """A server that answers the question right, and a client on it."""
    srv = open_server(structured=structured, latency_s=kw.pop("latency_s", 0.0))
    srv.add_rule(Rule(match="Which city", reply=GHENT))
    return srv, _client(srv, workspace, **kw)


def _ask(client, n: int, schema=Answer):
    # a different question each time: the second call is not the first one's cache hit
    messages = MSG + [{"role": "user", "content": f"Question {n}."}]
    return asyncio.run(client.complete(stage="s", item=f"q{n}", messages=messages, schema=schema))


def _rows(client, workspace):
    client.log.flush()
    with workspace.db.read() as con:
        return con.execute("SELECT item, attempt, error_class, completion_tokens FROM llm_calls "
                           "ORDER BY created_at").fetchall()


def _format(body):
    return (body.get("response_format") or {}).get("type")


def _schema_in_prompt(body) -> bool:
    return json.dumps(Answer.model_json_schema()) in body["messages"][0]["content"]


def test_a_server_that_honours_the_schema_gets_it_and_a_small_model_answers_json(open_server, workspace):
    # A small model that answers prose when nothing constrains it, on a server that honours
    # response_format (llama.cpp, vLLM): its answer is held to the schema.
    srv = open_server(prose=PROSE)
    client = _client(srv, workspace)
    res = _ask(client, 1)
    assert isinstance(res.parsed, Answer) and res.attempts == 1
    body = srv.stats.bodies[0]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Answer", "schema": Answer.model_json_schema(), "strict": False}}
    assert srv.stats.schemas == {"Answer": 1}
    assert body["messages"][0] == MSG[0]  # the server holds the schema: the prompt does not repeat it
    assert body["stream"] is True and body["max_tokens"] > 0  # still streamed, with its answer budget
    assert [r[2] for r in _rows(client, workspace)] == [None]


def test_a_server_with_json_mode_only_is_asked_again_in_json_mode_and_remembered(open_server, workspace):
    srv, client = _answering_ghent(open_server, workspace, "json_object")
    first = _ask(client, 1)
    assert first.parsed == Answer(**GHENT) and first.attempts == 2
    refused, again = srv.stats.bodies
    assert _format(refused) == "json_schema" and srv.stats.by_status[400] == 1
    assert _format(again) == "json_object" and _schema_in_prompt(again)
    # the schema joins the system message (some chat templates refuse a second one)
    assert len(again["messages"]) == len(refused["messages"])
    assert again["messages"][0]["content"].startswith(SYSTEM)
    second = _ask(client, 2)
    assert second.parsed == Answer(**GHENT) and second.attempts == 1
    assert _format(srv.stats.bodies[-1]) == "json_object" and len(srv.stats.bodies) == 3  # not asked again
    rows = _rows(client, workspace)
    assert [(r[0], r[1], r[2]) for r in rows] == [("q1", 1, "JsonSchemaUnsupported"), ("q1", 2, None),
                                                  ("q2", 1, None)]
    assert rows[0][3] == 0 and rows[1][3] > 0  # the refused attempt produced nothing
    assert first.completion_tokens == rows[1][3]


def test_a_server_without_structured_output_gets_the_schema_in_the_prompt(open_server, workspace):
    srv, client = _answering_ghent(open_server, workspace, "reject")
    first = _ask(client, 1)
    assert first.parsed == Answer(**GHENT) and first.attempts == 3
    assert [_format(b) for b in srv.stats.bodies] == ["json_schema", "json_object", None]
    assert _schema_in_prompt(srv.stats.bodies[-1])
    assert _ask(client, 2).attempts == 1
    assert _format(srv.stats.bodies[-1]) is None and _schema_in_prompt(srv.stats.bodies[-1])
    # a call without a schema sends none, nor a schema in its prompt
    asyncio.run(client.complete(stage="s", item="text", messages=MSG))
    assert srv.stats.bodies[-1]["messages"] == MSG and "response_format" not in srv.stats.bodies[-1]
    assert [(r[0], r[2]) for r in _rows(client, workspace)] == [
        ("q1", "JsonSchemaUnsupported"), ("q1", "JsonModeUnsupported"), ("q1", None), ("q2", None), ("text", None)]
    assert srv.stats.schemas == {}


def test_a_server_that_ignores_the_schema_is_told_it_in_the_reask_and_from_then_on(open_server, workspace):
    srv = open_server(structured="ignore")
    srv.add_rule(Rule(match="Which city", reply=PROSE, times=1))
    srv.add_rule(Rule(match="Which city", reply=GHENT))
    client = _client(srv, workspace)
    first = _ask(client, 1)
    assert first.parsed == Answer(**GHENT) and first.attempts == 2
    ignored, reask = srv.stats.bodies
    assert _format(ignored) == "json_schema" and not _schema_in_prompt(ignored)
    assert _format(reask) == "json_object" and _schema_in_prompt(reask)
    assert reask["messages"][-2] == {"role": "assistant", "content": PROSE}
    assert "could not be used" in reask["messages"][-1]["content"]
    _ask(client, 2)
    assert _format(srv.stats.bodies[-1]) == "json_object" and len(srv.stats.bodies) == 3
    rows = _rows(client, workspace)
    assert [(r[0], r[2]) for r in rows] == [("q1", "InvalidStructuredOutput"), ("q1", None), ("q2", None)]
    assert rows[0][3] == len(PROSE.split())  # the prose it spent is stored


def test_broken_json_under_a_schema_is_a_slip_not_a_server_without_it(open_server, workspace):
    srv = open_server()
    srv.add_rule(Rule(match="Which city", reply='{"city": "Ghent", ', times=1))
    srv.add_rule(Rule(match="Which city", reply=GHENT))
    client = _client(srv, workspace)
    assert _ask(client, 1).attempts == 2
    assert [_format(b) for b in srv.stats.bodies] == ["json_schema", "json_schema"]


def test_a_small_model_on_a_server_without_structured_output_still_fails_cleanly(open_server, workspace):
    srv = open_server(structured="reject", prose=PROSE)
    client = _client(srv, workspace, reask_limit=1)
    with pytest.raises(StructuredOutputError) as info:
        _ask(client, 1)
    assert info.value.raw_text == PROSE and info.value.attempts == 4
    assert [r[2] for r in _rows(client, workspace)] == [
        "JsonSchemaUnsupported", "JsonModeUnsupported", "InvalidStructuredOutput", "InvalidStructuredOutput"]


def test_calls_in_flight_when_the_server_refuses_the_schema_all_fall_back(open_server, workspace):
    # Four calls sent json_schema before the first 400 came back: each is asked again, none
    # fails on the mode the endpoint stepped down from meanwhile.
    srv, client = _answering_ghent(open_server, workspace, "json_object", latency_s=0.2, concurrency=4)

    async def four():
        try:
            return await asyncio.gather(*(client.complete(stage="s", item=f"q{n}", schema=Answer,
                                                          messages=MSG + [{"role": "user", "content": str(n)}])
                                          for n in range(4)))
        finally:
            await client.aclose()
    results = asyncio.run(four())
    assert all(r.parsed == Answer(**GHENT) for r in results)
    formats = [_format(b) for b in srv.stats.bodies]
    assert formats.count("json_schema") == 4 and formats.count("json_object") == 4
    assert [r[2] for r in _rows(client, workspace)].count("JsonSchemaUnsupported") == 4


def test_a_schema_the_server_cannot_turn_into_a_grammar_is_not_retried_as_a_server_fault(open_server, workspace):
    # Older llama.cpp servers answer a schema their grammar converter refuses with a 500 naming it.
    def llama_cpp(body):
        if _format(body) == "json_schema":
            raise RuntimeError("JSON schema conversion failed:\nUnrecognized schema: {}")
        return GHENT
    srv = open_server()
    srv.add_rule(Rule(reply=llama_cpp))
    client = _client(srv, workspace)
    assert _ask(client, 1).parsed == Answer(**GHENT)
    assert srv.stats.by_status[500] == 1 and [_format(b) for b in srv.stats.bodies] == ["json_schema", "json_object"]
    assert [r[2] for r in _rows(client, workspace)] == ["JsonSchemaUnsupported", None]
