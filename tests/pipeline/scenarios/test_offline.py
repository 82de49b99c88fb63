"""Offline scenarios written from the skill's artifacts: machine state, never the description."""
from __future__ import annotations

import pytest

from pipeline.artifacts import vocabulary as voc
from pipeline.scenarios import offline


def _skill(name: str, description: str, body: str, **parts) -> dict:
    return {"name": name, "description": description, "category": parts.pop("category", "data-processing"),
            "steps": parts.pop("steps", []), "inputs": parts.pop("inputs", []), "outputs": parts.pop("outputs", []),
            "bins": parts.pop("bins", []), "raw_text": f"---\nname: {name}\ndescription: {description}\n---\n{body}"}


JSON_TO_CSV = _skill("json-to-csv", "Flatten JSON exports into CSV tables.", """# JSON to CSV
```bash
jq -r '.rows[] | [.id, .name] | @csv' export.json > table.csv
```
""", bins=["jq"])
CSV_STATS = _skill("csv-stats", "Summarise a CSV file column by column.", """# Column statistics
```bash
csvstat table.csv > stats.txt
```
""")
CSV_CLEAN = _skill("csv-clean", "Clean a CSV table: trim cells, drop empty rows.", """# Clean
```bash
mlr --csv clean-whitespace then skip-trivial-records raw.csv > clean.csv
```
""")
PG_BACKUP = _skill("pg-backup", "Back up a PostgreSQL database.", """# Backup
```bash
pg_dump -h localhost appdb > appdb.sql
```
""", category="databases")
PG_RESTORE = _skill("pg-restore-check", "Restore a dump and verify it.", """# Restore
```bash
psql -h localhost -d scratch -f appdb.sql
```
""", category="databases")
LINT = _skill("py-lint", "Lint Python code with ruff.", """# Lint
```bash
ruff check src/app.py
```
""", category="python-scripting")
PROSE_A = _skill("brainstorm-partner", "Help the user brainstorm ideas into a plan.", "Ask open questions.\n",
                 category="uncategorized")
PROSE_B = _skill("meeting-notes-coach", "Coach the user to take better meeting notes.", "Listen, then ask.\n",
                 category="uncategorized")
TOOL_ONLY = _skill("gopass-usage", "Use gopass to manage a team password store.", """# gopass
```bash
gopass ls
```
""", bins=["gopass"], category="security-permissions")
ALL = [JSON_TO_CSV, CSV_STATS, CSV_CLEAN, PG_BACKUP, PG_RESTORE, LINT, PROSE_A, PROSE_B, TOOL_ONLY]


@pytest.mark.parametrize("skill", ALL, ids=lambda s: s["name"])
def test_canonical_is_a_state_never_the_description(skill):
    pair = offline.infer(**skill)
    desc = skill["description"].rstrip(".").lower()
    for sc in (pair.pre, pair.post):
        assert sc.canonical != skill["description"] and desc not in sc.canonical.lower()
        assert not sc.canonical.lower().startswith(skill["category"].replace("-", " "))
        assert "ready to" not in sc.canonical and "finished:" not in sc.canonical
        assert all(len(getattr(sc, f)) >= 3 for f in ("goal", "context", "capability", "state", "io_tool"))
    assert pair.pre.canonical != pair.post.canonical


def test_producer_post_is_the_consumer_pre_for_the_same_kind():
    made = offline.infer(**JSON_TO_CSV)
    used = offline.infer(**CSV_STATS)
    assert made.post.canonical == used.pre.canonical == voc.kind("csv-table").present()
    assert offline.infer(**PG_BACKUP).post.canonical == voc.kind("sql-dump").present()
    # the restore needs the dump and a server: its state names both, the dump's sentence first
    restore_pre = offline.infer(**PG_RESTORE).pre.canonical
    assert restore_pre == voc.present_state([("postgres-database", None), ("sql-dump", None)])
    assert restore_pre.startswith(voc.kind("sql-dump").present())


LOG_TO_TSV = _skill("log-latency-table", "Tabulate request latencies from an access log.", """# Latency table
```bash
awk '{print $1 "\t" $NF}' access.log | sort > /tmp/latency.tsv
```
""", bins=["awk", "sort"])
TSV_JOIN = _skill("tsv-join", "Join two tab-separated files on their first column.", """# Join
```bash
join -t $'\t' <(sort orders.tsv) <(sort customers.tsv) > joined.txt
```
""", bins=["join", "sort"])


def test_a_tsv_meets_tsv_readers_not_every_csv_reader():
    # the delimiter is machine state: a TSV left by an awk pipeline feeds `join -t`, and counting it
    # as a CSV table piled all such producers onto every CSV reader (the demo graph's hub)
    made, used = offline.infer(**LOG_TO_TSV), offline.infer(**TSV_JOIN)
    assert made.post.canonical == used.pre.canonical == voc.kind("tsv-table").present()
    assert made.post.canonical != offline.infer(**CSV_STATS).pre.canonical


def test_a_kind_read_and_written_again_is_not_a_self_loop():
    pair = offline.infer(**CSV_CLEAN)
    assert pair.pre.canonical == voc.kind("csv-table").present()
    assert pair.post.canonical == voc.kind("csv-table").produced()


def test_a_skill_that_only_reads_leaves_a_report_on_what_it_read():
    pair = offline.infer(**LINT)
    assert pair.pre.canonical == voc.kind("source-tree").present("Python")
    assert pair.post.canonical == voc.report_on("source-tree", "Python")


def test_thin_skills_do_not_collapse_into_one_hub():
    a, b, t = offline.infer(**PROSE_A), offline.infer(**PROSE_B), offline.infer(**TOOL_ONLY)
    assert len({a.pre.canonical, b.pre.canonical, t.pre.canonical}) == 3
    assert len({a.post.canonical, b.post.canonical, t.post.canonical}) == 3
    assert "gopass" in t.pre.canonical and "working directory" in a.pre.canonical


def test_the_five_dimensions_come_from_the_artifacts():
    pair = offline.infer(**JSON_TO_CSV)
    assert "export.json" in pair.pre.state and "export.json" in pair.pre.io_tool and "jq" in pair.pre.capability
    assert "table.csv" in pair.post.state and "table.csv" in pair.post.io_tool


def test_the_model_says_these_are_artifact_scenarios():
    assert offline.PROVIDER == "offline" and offline.MODEL == "artifacts-v2"
