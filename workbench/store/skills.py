"""Reading and writing skills and their filter verdicts."""
from __future__ import annotations

import json
from dataclasses import astuple, dataclass, fields
from datetime import datetime

import duckdb
import pandas as pd
import pyarrow as pa

from workbench.models import FilterVerdict, IngestProblem, ParsedSkill
from workbench.store.connection import Database

_LIST_FIELDS = ("steps", "tools", "bins", "env_vars", "inputs", "outputs", "os", "package_files")
_COLUMNS = ("id", "skill_key", "version", "is_current", "name", "description", "category",
            "category_inferred", *(_LIST_FIELDS[:-1]), "license", "skill_version", "source_kind",
            "source_path", "source_ref", "package_files", "front_matter", "raw_text",
            "ingest_run_id", "ingested_at")

_TYPES = {"version": pa.int32(), "is_current": pa.bool_(), "category_inferred": pa.bool_(),
          "ingested_at": pa.timestamp("us")}
_SKILL_SCHEMA = pa.schema([(c, pa.list_(pa.string()) if c in _LIST_FIELDS else _TYPES.get(c, pa.string()))
                           for c in _COLUMNS])
_VERDICT_SCHEMA = pa.schema([("skill_id", pa.string()), ("rule", pa.string()), ("outcome", pa.string()),
                             ("evidence", pa.string()), ("location", pa.string()),
                             ("filter_run_id", pa.string()), ("created_at", pa.timestamp("us"))])


def known_index(db: Database) -> tuple[dict[str, str], dict[str, int]]:
    """Ids already stored with the skill key each belongs to, and the highest version of each key."""
    with db.read() as con:
        ids = dict(con.execute("SELECT id, skill_key FROM skills").fetchall())
        versions = dict(con.execute("SELECT skill_key, max(version) FROM skills GROUP BY 1").fetchall())
    return ids, versions


def insert_skills(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, int, ParsedSkill]],
                  run_id: str, now: datetime) -> None:
    superseded = [(s.skill_key,) for _, version, s in rows if version > 1]
    if superseded:
        con.executemany("UPDATE skills SET is_current = false WHERE skill_key = ?", superseded)
    records = []
    for sid, version, s in rows:
        d = s.model_dump()
        d.update(id=sid, version=version, is_current=True, front_matter=json.dumps(s.front_matter),
                 ingest_run_id=run_id, ingested_at=now)
        records.append({c: d[c] for c in _COLUMNS})
    # One Arrow batch instead of row-by-row executemany: ~100x faster in DuckDB.
    batch = pa.Table.from_pylist(records, schema=_SKILL_SCHEMA)  # noqa: F841 (read by DuckDB)
    con.execute(f"INSERT INTO skills ({', '.join(_COLUMNS)}) SELECT * FROM batch")


def upsert_verdicts(con: duckdb.DuckDBPyConnection, verdicts: list[FilterVerdict], run_id: str,
                    now: datetime) -> None:
    if not verdicts:
        return
    batch = pa.Table.from_pylist(  # noqa: F841 (read by DuckDB)
        [{"skill_id": v.skill_id, "rule": v.rule, "outcome": str(v.outcome), "evidence": v.evidence,
          "location": v.location, "filter_run_id": run_id, "created_at": now} for v in verdicts],
        schema=_VERDICT_SCHEMA)
    con.execute("INSERT OR REPLACE INTO filter_verdicts SELECT * FROM batch")


def _row_to_parsed(row: dict) -> ParsedSkill:
    row = dict(row)
    row["front_matter"] = json.loads(row["front_matter"]) if row.get("front_matter") else {}
    for f in _LIST_FIELDS:
        row[f] = list(row.get(f) or [])
    row["content_hash"] = row["id"]
    return ParsedSkill.model_validate(row)


def current_skills(db: Database) -> list[tuple[str, ParsedSkill, tuple]]:
    """(id, parsed skill, age order) for every current version, as parsed (no overrides)."""
    with db.read() as con:
        cur = con.execute("SELECT * FROM skills WHERE is_current ORDER BY ingested_at, id")
        cols = [c[0] for c in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    # Age order decides which near-duplicate is kept: the first ingested, then the fuller package.
    return [(r["id"], _row_to_parsed(r),
             (r["ingested_at"], -len(r["package_files"] or []), -len(r["raw_text"]), r["skill_key"]))
            for r in rows]


def skills_table(db: Database) -> pd.DataFrame:
    """The current version of every skill with curation applied: one row each."""
    with db.read() as con:
        return con.execute(
            """SELECT id, name, category, status, auto_status, flagged_rules, curated,
                      source_kind, source_path, skill_key, version, description, license,
                      len(steps) AS n_steps, bins, category_inferred, ingested_at
               FROM skills_effective WHERE is_current ORDER BY name, id"""
        ).df()


def deciding_verdicts(db: Database) -> pd.DataFrame:
    """The verdicts that decide a current skill's confidence (pipeline.filters.confidence): its
    failures and warnings, and the LLM judge's verdict; passes of other rules say nothing of it."""
    with db.read() as con:
        return con.execute(
            """SELECT v.skill_id, v.rule, v.outcome, v.evidence
               FROM filter_verdicts v JOIN skills s ON s.id = v.skill_id
               WHERE s.is_current AND (v.outcome <> 'pass' OR v.rule = 'judge.llm')
               ORDER BY v.skill_id, v.rule""").df()


def skill_detail(db: Database, skill_id: str) -> dict | None:
    with db.read() as con:
        cur = con.execute("SELECT * FROM skills_effective WHERE id = ?", [skill_id])
        row = cur.fetchone()
        if row is None:
            return None
        d = dict(zip([c[0] for c in cur.description], row))
        d["verdicts"] = con.execute(
            "SELECT rule, outcome, evidence, location FROM filter_verdicts WHERE skill_id = ? "
            "ORDER BY CASE outcome WHEN 'fail' THEN 0 WHEN 'warn' THEN 1 ELSE 2 END, rule",
            [skill_id]).df()
        d["versions"] = con.execute(
            "SELECT id, version, is_current, ingested_at FROM skills WHERE skill_key = ? ORDER BY version",
            [d["skill_key"]]).df()
    d["front_matter"] = json.loads(d["front_matter"]) if d.get("front_matter") else {}
    return d


@dataclass(frozen=True)
class IngestCounts:
    """The counters of an ingest run, as its row in ingest_runs holds them."""

    found: int
    new_skills: int
    new_versions: int
    unchanged: int
    errors: int


def update_ingest_run(con: duckdb.DuckDBPyConnection, run_id: str, counts: IngestCounts,
                      finished: datetime | None = None) -> None:
    """The run's counts so far; `finished` marks it done (a run without it was interrupted)."""
    cols = [f.name for f in fields(IngestCounts)]
    con.execute(f"UPDATE ingest_runs SET {', '.join(f'{c} = ?' for c in cols)}, "
                "finished_at = coalesce(?, finished_at) WHERE run_id = ?",
                [*astuple(counts), finished, run_id])


def insert_ingest_problems(con: duckdb.DuckDBPyConnection, run_id: str, problems: list[IngestProblem],
                           now: datetime) -> None:
    if problems:
        con.executemany("INSERT INTO ingest_errors VALUES (?, ?, ?, ?, ?)",
                        [[run_id, p.source, p.file, p.reason, now] for p in problems])


def ingest_history(db: Database, limit: int = 20) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            "SELECT run_id, started_at, finished_at, found, new_skills, new_versions, unchanged, errors "
            "FROM ingest_runs ORDER BY started_at DESC LIMIT ?", [limit]).df()


def ingest_problems(db: Database, limit: int = 200) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            "SELECT e.file, e.reason, e.created_at AS \"at\" FROM ingest_errors e "
            "WHERE e.run_id = (SELECT run_id FROM ingest_runs ORDER BY started_at DESC LIMIT 1) "
            "ORDER BY e.file LIMIT ?", [limit]).df()
