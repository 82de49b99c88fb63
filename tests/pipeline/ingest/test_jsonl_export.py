"""JSONL exports read as a stream: oversized lines refused by size in bounded reads, hostile
records (deep, wide, huge names) refused with the reason, the good records ingested."""
from __future__ import annotations

import json
import tracemalloc

from pipeline.ingest import jsonl_export
from pipeline.ingest.packages import MAX_SKILL_MD_BYTES, JsonlExport
from pipeline.ingest.run import ingest
from workbench.store import skills as skill_store


def good(i: int) -> str:
    return json.dumps({"name": f"jq-filter-{i}", "description": f"Filter JSON file {i} with jq.",
                       "content": "## Steps\n1. Read `data.json`.\n2. Run `jq '.items[]' data.json`.\n"})


def test_an_oversized_line_is_refused_and_the_next_line_read(tmp_path):
    export = tmp_path / "e.jsonl"
    with open(export, "w") as fh:
        fh.write(good(1) + "\n")
        fh.write('{"name": "big", "content": "' + "x" * (3 * MAX_SKILL_MD_BYTES + 17) + '"}\n')
        fh.write(good(2) + "\n")
    recs = list(jsonl_export.read_records(JsonlExport(export, tmp_path)))
    assert [r.lineno for r in recs] == [1, 2, 3]
    assert recs[1].problem.reason == "record is 3.1 MB, over the 1 MiB limit"
    assert recs[0].name == "jq-filter-1" and recs[2].name == "jq-filter-2" and not recs[2].problem


def test_a_50_mb_line_is_refused_without_reading_it_into_memory(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "w") as fh:
        fh.write(good(1) + "\n" + '{"name": "big", "content": "')
        for _ in range(50):
            fh.write("x" * (1 << 20))
        fh.write('"}\n' + good(2) + "\n")
    tracemalloc.start()
    try:
        recs = list(jsonl_export.read_records(JsonlExport(big, tmp_path)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(recs) == 3 and "record is 52.4 MB" in str(recs[1])  # refused by size, the next line still read
    # Reading the line whole would hold 50 MB at least; bounded reads hold about the 1 MiB cap.
    assert peak < 8 << 20, f"peak {peak / 1e6:.0f} MB"


def test_hostile_records_are_reported_with_their_reason(workspace, tmp_path):
    export = tmp_path / "hostile.jsonl"
    lines = [
        good(1),
        "[" * 100_000 + "]" * 100_000,                                                    # L2
        json.dumps({"name": "deep", "description": "d", "metadata": _nest(40)}),          # L3
        json.dumps({"name": "wide", "description": "d", "metadata": {f"k{i}": i for i in range(30_000)}}),
        json.dumps({"name": "n" * 5000, "description": "d"}),                             # L5
        json.dumps({"skill_md": "---\nname: bomb\n" + _bomb() + "---\n# Bomb\n"}),       # L6
        json.dumps({"skill_md": "---\nname: one-line\ndescription: d\n---\n" + "word " * 150_000}),
        good(2),
    ]
    export.write_text("\n".join(lines) + "\n")
    report = ingest(workspace, [export])
    reasons = {p.file.rsplit("#", 1)[1]: p.reason for p in report.problems}
    assert reasons == {
        "L2": "record is nested deeper than 32 levels",
        "L3": "record is nested deeper than 32 levels",
        "L4": "record expands to over 20,000 values (aliases included)",
        "L5": "name is 5,000 characters long, longer than 128 characters",
        "L6": "front matter expands to over 20,000 values (aliases included)",
    }
    assert sorted(report.new) == ["hostile.jsonl#jq-filter-1", "hostile.jsonl#jq-filter-2",
                                  "hostile.jsonl#one-line"]
    # The one enormous line is a skill without steps: stored, and rejected by that rule (it also
    # shows no command or code anywhere, which workflow.not_terminal leaves to a person).
    table = skill_store.skills_table(workspace.db).set_index("name")
    assert table.loc["one-line", "status"] == "rejected"
    assert sorted(table.loc["one-line", "flagged_rules"]) == ["workflow.not_terminal", "workflow.steps"]


def test_a_record_with_half_a_character_is_refused_and_the_rest_ingested(workspace, tmp_path):
    """A \\u escape of a lone surrogate is valid JSON but no text (it cannot be hashed, stored or
    sent to an LLM as UTF-8): the record is refused naming the field, the export's others kept.
    A surrogate pair (an emoji written as two escapes) is one character and is fine."""
    export = tmp_path / "halves.jsonl"
    lone = '{"name": "half", "description": "Convert CSV to JSON.", "content": "## Steps\\n1. Run jq \\ud800 now.\\n"}'
    pair = json.dumps({"name": "pair", "description": "Filter JSON \U0001f600 files with jq.",
                       "content": "## Steps\n1. Read `data.json`.\n2. Run `jq '.items[]' data.json`.\n"})
    assert "\\ud83d\\ude00" in pair
    export.write_text("\n".join([good(1), lone, pair]) + "\n")
    report = ingest(workspace, [export])
    assert [(p.file.rsplit("#", 1)[1], p.reason) for p in report.problems] == [
        ("L2", "record.content holds a lone surrogate escape (\\ud800 without its pair) at character 19: not text")]
    assert sorted(report.new) == ["halves.jsonl#jq-filter-1", "halves.jsonl#pair"]


def _nest(depth: int):
    value: dict = {}
    for _ in range(depth):
        value = {"n": value}
    return value


def _bomb() -> str:
    from tests.pipeline.ingest.test_value_bounds import alias_bomb
    return alias_bomb()


def test_the_fast_front_matter_dump_writes_pyyaml_s_own_text():
    """Content hashes are taken of this text: the libyaml fast path must never change it."""
    import random

    import yaml
    rng = random.Random(3)
    alphabet = "abc xyz:#-'\"!&*?|>%@`,[]{}\\/.09 é\t\n😀"

    def text():
        return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 10, 79, 80, 81, 200])))

    def value(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.5:
            return rng.choice([text(), text(), rng.randint(-5, 10**12), 1.5, True, None])
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {text()[:10] or "k": value(depth + 1) for _ in range(rng.randint(0, 3))}

    for _ in range(3000):
        fm = {"name": text(), "description": text(), "metadata": value()}
        assert jsonl_export.dump_front_matter(fm) == yaml.safe_dump(fm, sort_keys=False, allow_unicode=True)
