"""Bounds on parsed values: alias bombs, deep nesting and recursive aliases are refused
before anything is expanded, each with the bound it crossed."""
from __future__ import annotations

import time

import pytest

from pipeline.ingest import value_bounds as vb


def alias_bomb(levels: int = 10, fan: int = 9) -> str:
    """`levels` anchors, each a list of `fan` aliases of the one before: fan**levels values."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fan)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_quickly_before_expansion():
    t0 = time.monotonic()
    with pytest.raises(vb.ValueBoundError, match=r"expands to over 20,000 values \(aliases included\)"):
        vb.load_yaml(alias_bomb())
    assert time.monotonic() - t0 < 2


def test_billion_laughs_of_long_strings_is_refused_by_characters():
    text = f'a: &a "{"lol" * 20000}"\n' + "b: &b [" + ", ".join(["*a"] * 60) + "]\n"
    with pytest.raises(vb.ValueBoundError, match="characters"):
        vb.load_yaml(text)


def test_a_few_aliases_are_fine():
    data = vb.load_yaml("base: &b {bins: [jq]}\nmetadata: {openclaw: {requires: *b}}\n")
    assert data["metadata"]["openclaw"]["requires"] == {"bins": ["jq"]}


@pytest.mark.parametrize("text", ["d: " + "[" * 1000 + "]" * 1000,
                                  "".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + "v\n",
                                  "d: " + "[" * 40 + "]" * 40])
def test_deep_nesting_says_how_deep_it_may_be(text):
    with pytest.raises(vb.ValueBoundError, match="is nested deeper than 32 levels"):
        vb.load_yaml(text)


def test_recursive_alias_is_named():
    with pytest.raises(vb.ValueBoundError, match="recursive alias"):
        vb.load_yaml("a: &a [1, *a]\n")


def test_plain_values_get_the_same_bounds():
    vb.measure_value({"a": [1, 2, {"b": "c"}]})
    deep: list = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(vb.ValueBoundError, match="nested deeper"):
        vb.measure_value(deep)
    with pytest.raises(vb.ValueBoundError, match="20,000 values"):
        vb.measure_value({f"k{i}": i for i in range(30000)})
    shared = ["x" * 1000]
    for _ in range(25):  # a shared list: 2**25 values when expanded, refused after 20,000
        shared = [shared, shared]
    with pytest.raises(vb.ValueBoundError):
        vb.measure_value(shared)
