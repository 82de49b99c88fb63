"""JSONL exports read as a stream: oversized lines refused by size in bounded reads, hostile
records (deep, wide, huge names) refused with the reason, the good records ingested."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from pipeline.ingest import jsonl_export
from pipeline.ingest.packages import MAX_SKILL_MD_BYTES, JsonlExport
from pipeline.ingest.run import ingest


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


_PEAK_RSS = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from pipeline.ingest import jsonl_export
    from pipeline.ingest.packages import JsonlExport
    path = Path(sys.argv[1])
    recs = list(jsonl_export.read_records(JsonlExport(path, path.parent)))
    assert recs[-1].problem or len(recs) == 1, recs
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def _peak_rss_kb(path) -> int:
    out = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(path)], capture_output=True, text=True,
                         check=True, timeout=120)
    return int(out.stdout.split()[-1])


def test_a_50_mb_line_is_refused_without_reading_it_into_memory(tmp_path):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text(good(1) + "\n")
    with open(big, "w") as fh:
        fh.write(good(1) + "\n" + '{"name": "big", "content": "')
        for _ in range(50):
            fh.write("x" * (1 << 20))
        fh.write('"}\n')
    # Reading the line whole would hold 50 MB at least; bounded reads stay within a few MiB.
    assert _peak_rss_kb(big) - _peak_rss_kb(small) < 16 * 1024


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


def _nest(depth: int):
    value: dict = {}
    for _ in range(depth):
        value = {"n": value}
    return value


def _bomb() -> str:
    from tests.pipeline.ingest.test_value_bounds import alias_bomb
    return alias_bomb()
