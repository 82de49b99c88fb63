"""The trajectory judge's verdicts on unsolved tasks (SETA), one row per judgement (migration 8).

A design flaw withdraws the task from the accepted set in the same transaction as the row
(workbench.store.task_events, undoable); a task a person restored after an earlier
withdrawal is not withdrawn again by the judge: the person has overruled it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

import pandas as pd

from workbench.store import task_events
from workbench.store.connection import Database

VERDICTS = ("too_hard", "design_flaw")


class JudgementError(ValueError):
    """A judgement handed to `save_judgement` that cannot be stored as it is."""


def save_judgement(db: Database, task_id: str, *, verdict: str, reason: str, evidence: Mapping,
                   n_rollouts: int, model: str | None, cost_usd: float, withdraw: bool) -> datetime:
    """Store one judgement; with `withdraw`, withdraw the task too (one transaction: both or neither)."""
    if verdict not in VERDICTS:
        raise JudgementError(f"task {task_id}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    if not reason.strip():
        raise JudgementError(f"task {task_id}: a judgement needs a reason")
    if withdraw and verdict != "design_flaw":
        raise JudgementError(f"task {task_id}: only a design flaw withdraws a task (verdict {verdict})")
    now = datetime.now()
    with db.write() as con:
        con.execute("INSERT INTO trajectory_judgements VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [task_id, now, verdict, reason.strip(), json.dumps(dict(evidence), default=str),
                     int(n_rollouts), model, float(cost_usd)])
        if withdraw:
            task_events.change_in(con, task_id, "withdrawn", "trajectory_judge", f"design flaw: {reason.strip()}")
    return now


def judgements(db: Database, task_id: str | None = None) -> pd.DataFrame:
    """Every judgement (of one task), newest first; `evidence` parsed."""
    where, args = ("WHERE task_id = ?", [task_id]) if task_id else ("", [])
    with db.read() as con:
        df = con.execute(f"SELECT * FROM trajectory_judgements {where} ORDER BY judged_at DESC", args).df()
    if len(df):
        df["evidence"] = df["evidence"].map(lambda e: json.loads(e) if isinstance(e, str) else e)
    return df


def latest_judged_counts(db: Database) -> dict[str, int]:
    """task_id -> the number of rollouts its newest judgement saw (a task judged over the same
    rollouts again would get the same answer: the judge skips it)."""
    with db.read() as con:
        rows = con.execute("SELECT task_id, arg_max(n_rollouts, judged_at) FROM trajectory_judgements "
                           "GROUP BY task_id").fetchall()
    return {t: int(n) for t, n in rows}


def restored_by_a_person(db: Database) -> set[str]:
    """Tasks a person restored after a withdrawal: the judge does not withdraw them again."""
    with db.read() as con:
        return {r[0] for r in con.execute("SELECT DISTINCT task_id FROM task_events "
                                          "WHERE event = 'restored' AND source = 'user'").fetchall()}
