"""Difficulty evolution in the store: evolve runs and one lineage row per variant tried.

A variant itself is an ordinary `tasks` row (+ bundle under tasks/<variant id>/), verified like
any task; `task_lineage` says where it came from (parent, root, operator, round, the parent's
pass rate) and what became of the attempt (made | no_variant | failed). Only the evolve driver
(pipeline/evolve/run.py) writes here. Lineage ids follow pipeline/evolve/models.py; workbench/
never imports pipeline/, so the rows arrive already named.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

import pandas as pd

from workbench.store.connection import Database

RUN_STATUSES = ("pending", "running", "done", "cancelled", "failed")
LINEAGE_STATUSES = ("made", "no_variant", "failed")
_OPERATORS = ("harder", "context_switch", "easier")   # pipeline/evolve/models.OPERATORS, checked there to agree


class LineageRowError(ValueError):
    """A lineage row handed to `save_lineage` is incomplete or names an unknown status/operator."""


def create_run(db: Database, run_id: str, *, rounds: int, agent: str, model: str | None, k: int,
               params: Mapping) -> None:
    with db.write() as con:
        con.execute("INSERT OR REPLACE INTO evolve_runs VALUES (?, ?, 0, ?, ?, ?, ?, 'pending', NULL, NULL, ?, NULL)",
                    [run_id, rounds, agent, model, k, json.dumps(dict(params), default=str), datetime.now()])


def set_run_status(db: Database, run_id: str, status: str, message: str | None = None,
                   pid: int | None = None, rounds_done: int | None = None) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"evolve run status {status!r}: one of {', '.join(RUN_STATUSES)}")
    finished = datetime.now() if status in ("done", "cancelled", "failed") else None
    with db.write() as con:
        con.execute("UPDATE evolve_runs SET status = ?, message = coalesce(?, message), pid = coalesce(?, pid), "
                    "rounds_done = coalesce(?, rounds_done), finished_at = ? WHERE run_id = ?",
                    [status, message, pid, rounds_done, finished, run_id])


def set_run_pid(db: Database, run_id: str, pid: int) -> None:
    """The pid of a launched run's process, unless the process has written its own already."""
    with db.write() as con:
        con.execute("UPDATE evolve_runs SET pid = ? WHERE run_id = ? AND pid IS NULL", [pid, run_id])


def finish_run(db: Database, run_id: str, status: str, message: str | None = None,
               rounds_done: int | None = None) -> None:
    """End a run: done | cancelled | failed, with its closing line."""
    if status not in ("done", "cancelled", "failed"):
        raise ValueError(f"an evolve run finishes done, cancelled or failed, not {status!r}")
    set_run_status(db, run_id, status, message, rounds_done=rounds_done)


def set_run_progress(db: Database, run_id: str, progress: Mapping, message: str | None = None) -> None:
    """Live position of a running evolve run for the page (params["progress"]: round, phase, done, total)."""
    with db.write() as con:
        con.execute("UPDATE evolve_runs SET params = json_merge_patch(params, ?), message = coalesce(?, message) "
                    "WHERE run_id = ?", [json.dumps({"progress": dict(progress)}), message, run_id])


def get_run(db: Database, run_id: str) -> dict | None:
    with db.read() as con:
        df = con.execute("SELECT * FROM evolve_runs WHERE run_id = ?", [run_id]).fetchdf()
    if df.empty:
        return None
    rec = df.iloc[0].to_dict()
    rec["params"] = json.loads(rec["params"]) if isinstance(rec["params"], str) else rec["params"]
    return rec


def evolve_runs_frame(db: Database) -> pd.DataFrame:
    """Every evolve run, newest first, with how many variants it tried, made and got accepted."""
    with db.read() as con:
        return con.execute("""
            SELECT r.*, count(l.task_id) AS n_tried,
                   count(*) FILTER (WHERE l.status = 'made') AS n_made,
                   count(*) FILTER (WHERE t.verdict = 'accepted') AS n_accepted
            FROM evolve_runs r LEFT JOIN task_lineage l USING (run_id)
            LEFT JOIN tasks t ON t.task_id = l.task_id AND l.status = 'made'
            GROUP BY ALL ORDER BY r.created_at DESC""").fetchdf()


_LINEAGE_COLUMNS = ("task_id", "parent_id", "root_id", "operator", "round", "run_id", "parent_pass_rate",
                    "parent_rollouts", "provider", "change", "status", "error")


def save_lineage(db: Database, row: Mapping) -> None:
    """Insert or replace the lineage row of one variant tried (made, no_variant or failed)."""
    where = f"lineage row {row.get('task_id') or '?'}"
    if missing := [c for c in ("task_id", "parent_id", "root_id", "operator", "run_id", "provider", "status")
                   if not row.get(c)]:
        raise LineageRowError(f"{where}: missing {', '.join(missing)}")
    if row["status"] not in LINEAGE_STATUSES:
        raise LineageRowError(f"{where}: status {row['status']!r}, not one of {', '.join(LINEAGE_STATUSES)}")
    if row["operator"] not in _OPERATORS:
        raise LineageRowError(f"{where}: operator {row['operator']!r}, not one of {', '.join(_OPERATORS)}")
    rate = float(row.get("parent_pass_rate", -1))
    if not 0.0 <= rate <= 1.0:
        raise LineageRowError(f"{where}: parent pass rate {row.get('parent_pass_rate')!r} outside [0, 1]")
    if int(row.get("round", 0)) < 1:
        raise LineageRowError(f"{where}: round {row.get('round')!r}; rounds start at 1")
    values = [row.get(c) for c in _LINEAGE_COLUMNS]
    values[_LINEAGE_COLUMNS.index("round")] = int(row["round"])
    values[_LINEAGE_COLUMNS.index("parent_pass_rate")] = rate
    values[_LINEAGE_COLUMNS.index("parent_rollouts")] = int(row.get("parent_rollouts") or 0)
    values[_LINEAGE_COLUMNS.index("change")] = str(row.get("change") or "")
    with db.write() as con:
        con.execute(f"INSERT OR REPLACE INTO task_lineage ({', '.join(_LINEAGE_COLUMNS)}, created_at) "
                    f"VALUES ({', '.join('?' * len(_LINEAGE_COLUMNS))}, ?)", values + [datetime.now()])


def get_lineage(db: Database, task_id: str) -> dict | None:
    with db.read() as con:
        df = con.execute("SELECT * FROM task_lineage WHERE task_id = ?", [task_id]).fetchdf()
    return None if df.empty else df.iloc[0].to_dict()


def lineage_frame(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """Every lineage row (of one evolve run), joined with the variant's tasks row: its verdict,
    failed check, n_steps, withdrawn (NULL for attempts that made no variant), plus the parent's
    n_steps. Ordered by root, round, task id — a tree reads top to bottom."""
    where, args = ("WHERE l.run_id = ?", [run_id]) if run_id else ("", [])
    with db.read() as con:
        return con.execute(f"""
            SELECT l.*, t.verdict, t.failed_check, t.reason AS verdict_reason, t.n_steps, t.name AS task_name,
                   t.category, t.withdrawn, p.n_steps AS parent_n_steps
            FROM task_lineage l
            LEFT JOIN tasks t ON t.task_id = l.task_id AND l.status = 'made'
            LEFT JOIN tasks p ON p.task_id = l.parent_id
            {where} ORDER BY l.root_id, l.round, l.task_id""", args).fetchdf()


def variant_ids_of(db: Database, parent_id: str) -> list[str]:
    """Ids of every variant tried for a parent (any status): what numbering the next one skips."""
    with db.read() as con:
        return [r[0] for r in con.execute("SELECT task_id FROM task_lineage WHERE parent_id = ? ORDER BY task_id",
                                          [parent_id]).fetchall()]


_FACT_COLUMNS = ("name", "description", "category", "raw_text", "bins", "tools", "inputs", "outputs", "steps",
                 "source_path", "package_files")


def variant_path_frame(db: Database, path_id: str, steps: list[tuple[str, str, str]]) -> pd.DataFrame:
    """A variant's path shaped like `tasks.path_steps_with_skills` (what the composer's context is
    read from): its (src_anchor, skill_id, dst_anchor) steps, in order, with each skill's facts.
    A variant's steps are not a sampled path, so they are not in path_steps; they come from its task.toml."""
    ids = sorted({s for _, s, _ in steps})
    with db.read() as con:
        facts = con.execute(
            """SELECT id AS skill_id, coalesce(name, id) AS name, coalesce(description, '') AS description,
                      coalesce(category, 'file-operations') AS category, coalesce(raw_text, '') AS raw_text,
                      coalesce(bins, []) AS bins, coalesce(tools, []) AS tools, coalesce(inputs, []) AS inputs,
                      coalesce(outputs, []) AS outputs, coalesce(steps, []) AS steps,
                      coalesce(source_path, '') AS source_path, coalesce(package_files, []) AS package_files
               FROM skills WHERE id IN (SELECT unnest(?::VARCHAR[]))""", [ids]).df().set_index("skill_id")
    unknown = {"description": "", "category": "file-operations", "raw_text": "", "bins": [], "tools": [],
               "inputs": [], "outputs": [], "steps": [], "source_path": "", "package_files": []}   # a skill no longer stored: as path_steps_with_skills has it
    rows = []
    for i, (src, skill, dst) in enumerate(steps):
        known = ({c: facts.at[skill, c] for c in _FACT_COLUMNS} if skill in facts.index
                 else {"name": skill, **unknown})
        rows.append({"path_id": path_id, "step": i, "src_anchor": src, "skill_id": skill, "dst_anchor": dst, **known})
    return pd.DataFrame(rows, columns=["path_id", "step", "src_anchor", "skill_id", "dst_anchor", *_FACT_COLUMNS])
