"""Degenerate LLM scenario replies: each kind is found, and a good pair passes untouched."""
from __future__ import annotations

import pytest

from pipeline.scenarios import degenerate
from workbench.llm.prompts import load_template
from workbench.models import ScenarioPair

DESCRIPTION = "Convert CSV exports into pretty-printed JSON documents with jq and csvkit"
PROMPT = load_template("scenario_inference").system
ECHOES = degenerate.field_descriptions(PROMPT, ScenarioPair.model_json_schema())


def _scenario(**kw) -> dict:
    base = {"goal": "turn the sales export into JSON", "context": "a data folder in a Linux shell",
            "capability": "jq and csvkit installed", "state": "data/sales.csv holds 1,200 rows with a header",
            "io_tool": "csvjson reads data/sales.csv", "canonical": "A CSV table with a header row is in data/"}
    return {**base, **kw}


GOOD_POST = _scenario(goal="check the JSON", state="data/sales.json holds an array of 1,200 objects",
                      io_tool="jq . data/sales.json", canonical="A JSON document with an array of records is in data/")


def pair(pre: dict | None = None, post: dict | None = None) -> ScenarioPair:
    return ScenarioPair.model_validate({"pre": pre or _scenario(), "post": post or GOOD_POST})


def kinds(p: ScenarioPair, description: str = DESCRIPTION) -> list[str]:
    return [x.kind for x in degenerate.problems(p, description=description, descriptions=ECHOES)]


def test_a_pair_that_names_two_states_is_not_degenerate():
    assert kinds(pair()) == []


def test_pre_and_post_the_same_text_is_degenerate():
    assert kinds(pair(post=_scenario())) == [degenerate.SAME_TEXT]


@pytest.mark.parametrize("post_canonical", ["a csv table with a header row is in data", "A CSV table, with a header row, is in data/!"])
def test_canonical_sentences_equal_after_normalising_are_degenerate(post_canonical):
    found = degenerate.problems(pair(post={**GOOD_POST, "canonical": post_canonical}), description=DESCRIPTION,
                                descriptions=ECHOES)
    assert [x.kind for x in found] == [degenerate.SAME_TEXT]
    assert "pre.canonical and post.canonical" in found[0].detail


@pytest.mark.parametrize("field,value", [
    ("state", "the concrete files, data, processes and their condition"),   # the prompt's own bullet
    ("capability", "What must be available: tools, permissions, services."),
    ("goal", "Goal"),                                                       # the schema's title
    ("io_tool", "io_tool"),
])
def test_a_field_that_echoes_its_own_description_is_degenerate(field, value):
    found = degenerate.problems(pair(post={**GOOD_POST, field: value}), description=DESCRIPTION,
                                descriptions=ECHOES)
    assert [x.kind for x in found] == [degenerate.SCHEMA_ECHO]
    assert found[0].detail.startswith(f"post.{field} echoes")


def test_a_schema_description_is_an_echo_too():
    schema = {"$defs": {"Scenario": {"properties": {"state": {"title": "State",
                                                              "description": "Files and processes right now"}}}}}
    echoes = degenerate.field_descriptions("", schema)
    p = pair(pre={**_scenario(), "state": "files and processes right now"})
    assert [x.kind for x in degenerate.problems(p, description=DESCRIPTION, descriptions=echoes)] == [
        degenerate.SCHEMA_ECHO]


@pytest.mark.parametrize("canonical", [
    DESCRIPTION,                                                    # word for word
    "convert csv exports into pretty printed json documents with jq and csvkit.",
    "Data conversion: ready to convert CSV exports into pretty-printed JSON documents with jq and csvkit",
    "Converts CSV export into pretty-printed JSON document with jq",  # a paraphrase of the goal
])
def test_a_canonical_that_restates_the_description_is_degenerate(canonical):
    found = degenerate.problems(pair(post={**GOOD_POST, "canonical": canonical}), description=DESCRIPTION,
                                descriptions=ECHOES)
    assert [x.kind for x in found] == [degenerate.RESTATES_DESCRIPTION]
    assert "post.canonical restates" in found[0].detail


def test_one_sentence_of_a_long_description_cut_short_is_still_a_restatement():
    description = ("Convert physical quantities between unit systems with GNU units on the command line, and "
                   "check formulas for dimensional consistency. Use when a report mixes imperial and SI units.")
    for canonical in ("Science: finished: convert physical quantities between unit systems with GNU…",
                      "A report mixes imperial and SI units"):
        assert kinds(pair(pre={**_scenario(), "canonical": canonical}), description) == [
            degenerate.RESTATES_DESCRIPTION], canonical
    assert kinds(pair(), description) == []


def test_words_shared_with_the_description_alone_do_not_make_a_restatement():
    # A state names the same formats as the goal; that is what makes skills meet.
    assert kinds(pair(post={**GOOD_POST, "canonical": "A pretty-printed JSON document converted from a CSV "
                                                       "export sits in data/ next to it"})) == []
    # Naming the files the description names is what a state should do.
    described = "Render a badge. Writes the SVG to site/output/daily-badge-today.svg and updates site/out/index.md."
    assert kinds(pair(post={**GOOD_POST, "state": "site/out/index.md (a Markdown document); site/output/daily-badge-today.svg"
                                                  " (an image file)"}), described) == []
    # A description too short to tell a restatement from a coincidence is not checked.
    assert kinds(pair(post={**GOOD_POST, "canonical": "JSON output"}), description="JSON output") == []


def test_the_reask_message_says_what_was_wrong_and_the_error_carries_every_problem():
    found = degenerate.problems(pair(post={**_scenario(), "state": DESCRIPTION}), description=DESCRIPTION,
                                descriptions=ECHOES)
    assert [x.kind for x in found] == [degenerate.SAME_TEXT, degenerate.RESTATES_DESCRIPTION]
    msg = degenerate.reask_message(found)
    assert "post.state restates the skill's description" in msg and "two different" in msg
    err = degenerate.DegenerateReply(found)
    assert str(err).startswith("still degenerate after one re-ask: same_text:") and "restates_description" in str(err)
