"""Verifier strength per task (migration 10): the report of pipeline.verify.strength, one row
per task and bundle measured (a task whose bundle changed is measured again; the row of its
current bundle is the one shown)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

import pandas as pd

from workbench.store.connection import Database


def save_strength(db: Database, task_id: str, bundle_hash: str, report: Mapping) -> None:
    with db.write() as con:
        con.execute("INSERT OR REPLACE INTO task_strength VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [task_id, bundle_hash, datetime.now(), report.get("strength"), int(report.get("effective") or 0),
                     int(report.get("caught") or 0), json.dumps(dict(report), default=str)])


def strength_frame(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """task_id, name, verdict, strength, effective, caught, measured_at for every task measured
    on its current bundle (of one synthesis run)."""
    where, args = ("WHERE t.task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)", [run_id]) if run_id else ("", [])
    with db.read() as con:
        return con.execute(
            f"""SELECT t.task_id, t.name, t.verdict, s.strength, s.effective, s.caught, s.measured_at
                FROM task_strength s JOIN tasks t ON t.task_id = s.task_id AND t.bundle_hash = s.bundle_hash
                {where} ORDER BY t.name""", args).df()


def strength_for(db: Database, task_id: str) -> dict | None:
    """The report of the task's current bundle, None when not measured."""
    with db.read() as con:
        row = con.execute("SELECT s.report FROM task_strength s JOIN tasks t ON t.task_id = s.task_id "
                          "AND t.bundle_hash = s.bundle_hash WHERE s.task_id = ?", [task_id]).fetchone()
    return json.loads(row[0]) if row else None


def measured(db: Database) -> set[tuple[str, str]]:
    """(task_id, bundle_hash) pairs already measured."""
    with db.read() as con:
        return {(t, h) for t, h in con.execute("SELECT task_id, bundle_hash FROM task_strength").fetchall()}
