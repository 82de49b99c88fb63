"""markdown-report: the figures it asks for are computed from the records (a hand-made table),
its readers accept any reasonable Markdown (bold labels, padding, alignment rows) and reject
wrong numbers; in Docker (test_documents.py) the oracle passes and a report with a wrongly ordered table fails."""
import random

import pytest

from pipeline.synth.recipes import REGISTRY
from pipeline.synth.recipes.base import Artifact, StepContext, Table
from pipeline.synth.recipes.reports import MD_READERS

ROWS = (("T-1", "north", 10.5), ("T-2", "south", 4.0), ("T-3", "north", 7.25), ("T-4", "east", 30.0),
        ("T-5", "south", 1.5), ("T-6", "north", 2.0), ("T-7", "east", 0.75))
TABLE = Artifact("records", "/app/input/tickets.csv", fmt="csv",
                 table=Table(("ticket", "region", "hours"), ("str", "str", "float"), ROWS), label="tickets")


def readers():
    import re  # noqa: F401  (the readers use the test prelude's modules)
    from pathlib import Path
    scope = {"re": re, "read_text": lambda p: Path(p).read_text(encoding="utf-8")}
    exec(MD_READERS, scope)
    return scope


def build(seed=0):
    ctx = StepContext(random.Random(seed))
    return REGISTRY["markdown-report"].build(ctx, TABLE)


def test_the_expected_figures_come_from_the_records():
    frag = build()
    bodies = "\n".join(body for c in frag.checks for _, body in c.tests)
    assert "== 7" in bodies and "- 56.0) <= 0.011" in bodies           # 7 records, 56.00 hours in all
    assert "[['east', 2, 30.75], ['north', 3, 19.75], ['south', 2, 5.5]]" in bodies
    assert "[['T-4', 30.0], ['T-1', 10.5], ['T-3', 7.25]" in bodies


def test_readers_take_any_formatting_of_the_right_numbers(tmp_path):
    r = readers()
    doc = tmp_path / "r.md"
    doc.write_text("# Weekly\n\n- **Records:** 7\n**Total hours**: 1,056.00\n\n## By `region` ##\n\n"
                   "|  region | records | total_hours |\n|:--|--:|--:|\n| east | 2 | 30.75 |\n\nafter\n")
    assert r["md_value"](str(doc), "Records") == 7 and r["md_value"](str(doc), "Total hours") == 1056.0
    assert r["md_table"](str(doc), "By region") == (["region", "records", "total_hours"], [["east", "2", "30.75"]])
    with pytest.raises(AssertionError, match="no level-2 heading"):
        r["md_table"](str(doc), "Top 3 by hours")
    with pytest.raises(AssertionError, match="Rows"):
        r["md_value"](str(doc), "Rows")


def test_it_needs_a_group_and_counts_alone_where_the_numbers_are_positions():
    no_group = Artifact("records", "/app/x.csv", fmt="csv",
                        table=Table(("ticket", "hours"), ("str", "float"), tuple((r[0], r[2]) for r in ROWS)))
    assert REGISTRY["markdown-report"].accepts(TABLE) and not REGISTRY["markdown-report"].accepts(no_group)
    # an outline-like table: line and level place a heading (a sum of them means nothing), no column names a record
    rows = tuple((f, n, 2) for f in ("a.md", "b.md") for n in (3, 7, 9))
    outline = Artifact("records", "/app/out/outline.csv", fmt="csv",
                       table=Table(("file", "line", "level"), ("str", "int", "int"), rows))
    frag = REGISTRY["markdown-report"].build(StepContext(random.Random(0)), outline)
    assert not any("largest" in c.sentence or "sum of" in c.sentence for c in frag.checks), frag.checks
    assert "top = " not in frag.solve and "Total" not in frag.solve
    by_file = [body for c in frag.checks for n, body in c.tests if n == "by_group"][0]
    assert "['file', 'records']" in by_file and "[['a.md', 3], ['b.md', 3]]" in by_file


def test_top_n_never_ends_on_a_tie():
    rows = tuple((f"K-{i}", "ab"[i % 2], v) for i, v in enumerate([9, 8, 7, 7, 5, 4, 3]))
    a = Artifact("records", "/app/x.csv", fmt="csv", table=Table(("k", "g", "v"), ("str", "str", "int"), rows))
    for seed in range(10):
        ctx = StepContext(random.Random(seed))
        top = [c for c in REGISTRY["markdown-report"].build(ctx, a).checks if "largest" in c.sentence][0]
        assert "the 3 records" not in top.sentence
