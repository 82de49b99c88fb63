"""Replay behaviours that imitate a small model on a slow local server, as the real
``openai`` client sees them."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai
import pytest

from tests.workbench.llm.replay_calls import ask, client_for, content
from workbench.llm.replay_server import ReplayServer, Rule
from workbench.llm.replay_streams import REPEAT_LINE


def test_max_tokens_cuts_the_answer_with_finish_reason_length(server):
    server.add_rule(Rule(reply="one two three four five six"))
    done = ask(client_for(server), "hi", max_tokens=4)
    assert content(done) == "one two three four" and done.choices[0].finish_reason == "length"
    assert done.usage.completion_tokens == 4
    assert ask(client_for(server), "hi", max_tokens=40).choices[0].finish_reason == "stop"


def test_a_slow_stream_comes_a_word_at_a_time(server):
    server.add_rule(Rule(reply="a b c d e"))
    server.inject("slow_stream", pause_s=0.05)
    t0 = time.monotonic()
    chunks = list(ask(client_for(server), "hi", stream=True))
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == ["a ", "b ", "c ", "d ", "e"] and time.monotonic() - t0 >= 0.25


def test_a_repeating_answer_runs_to_its_budget(server):
    server.inject("repeat")
    done = ask(client_for(server), "plan", max_tokens=60)
    assert content(done).count(REPEAT_LINE.strip()) >= 5 and done.choices[0].finish_reason == "length"


def test_props_and_the_context_400_as_llama_cpp_says_them():
    with ReplayServer(context_window=5, slots=2) as srv:
        props = json.loads(urllib.request.urlopen(srv.url + "/props").read())
        assert props["default_generation_settings"]["n_ctx"] == 5 and props["total_slots"] == 2
        with pytest.raises(openai.BadRequestError) as info:
            ask(client_for(srv), "one two three four five six seven")
        assert "request (7 tokens) exceeds the available context size (5 tokens)" in str(info.value)
        assert info.value.body["type"] == "exceed_context_size_error"
        assert content(ask(client_for(srv), "short")) == "ok"


def test_without_a_context_window_there_are_no_props(server):
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(server.url + "/props")
    assert info.value.code == 404


def test_servers_that_will_not_stream(server):
    server.inject("stream_refused")
    with pytest.raises(openai.BadRequestError, match="stream"):
        list(ask(client_for(server), "hi", stream=True))
    server.inject("no_stream")
    raw = client_for(server).chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    assert raw.headers["content-type"].startswith("application/json")


SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "Goal", "schema": {
    "type": "object", "properties": {"goal": {"type": "string"}}, "required": ["goal"]}}}
PROSE = "The goal is to count the lines."


def test_servers_with_and_without_structured_output():
    with ReplayServer(prose=PROSE) as honours:  # a small model on llama.cpp: held to the schema when asked
        client = client_for(honours)
        assert json.loads(content(ask(client, "plan", response_format=SCHEMA_FORMAT))) == {"goal": "goal"}
        assert json.loads(content(ask(client, "plan", response_format={"type": "json_object"}))) == {"answer": PROSE}
        assert content(ask(client, "plan")) == PROSE
        assert honours.stats.schemas == {"Goal": 1} and honours.stats.as_dict()["schemas"] == {"Goal": 1}
    with ReplayServer(structured="json_object") as json_mode:
        with pytest.raises(openai.BadRequestError, match="response_format") as info:
            ask(client_for(json_mode), "plan", response_format=SCHEMA_FORMAT)
        assert info.value.body["param"] == "response_format"
        assert content(ask(client_for(json_mode), "plan", response_format={"type": "json_object"})) == "ok"
    with ReplayServer(structured="reject") as rejects:
        for fmt in (SCHEMA_FORMAT, {"type": "json_object"}):
            with pytest.raises(openai.BadRequestError, match="response_format"):
                ask(client_for(rejects), "plan", response_format=fmt)
        assert content(ask(client_for(rejects), "plan", response_format={"type": "text"})) == "ok"
    with ReplayServer(structured="ignore", prose=PROSE) as ignores:
        assert content(ask(client_for(ignores), "plan", response_format=SCHEMA_FORMAT)) == PROSE
        assert ignores.stats.schemas == {}
    with pytest.raises(ValueError, match="structured mode"):
        ReplayServer(structured="grammar")
