"""Undoable changes to the accepted set: a task is withdrawn (a trajectory judge found a design
flaw, or a person took it out) and can be restored. Each change is a row of `task_events`
(migration 8); `tasks.withdrawn` mirrors the latest one and is written in the same
transaction, so a reader never sees the two disagree.

The accepted set is defined once here (`accepted_set`): verified and accepted, and not
withdrawn. Every store query that reads "the accepted tasks" uses that fragment.
"""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from workbench.store.connection import Database

EVENTS = ("withdrawn", "restored")
SOURCES = ("trajectory_judge", "user")


def accepted_set(alias: str = "") -> str:
    """The SQL condition of a task in the accepted set; `alias` is the tasks table's alias in
    the query (``accepted_set("t")`` -> ``t.verdict = 'accepted' AND NOT coalesce(t.withdrawn, false)``)."""
    p = f"{alias}." if alias else ""
    return f"({p}verdict = 'accepted' AND NOT coalesce({p}withdrawn, false))"


class TaskEventError(ValueError):
    """A withdrawal or restore that cannot be made (unknown task, wrong state, bad source)."""


def _change(db: Database, task_id: str, event: str, source: str, reason: str) -> datetime:
    with db.write() as con:
        return change_in(con, task_id, event, source, reason)


def change_in(con, task_id: str, event: str, source: str, reason: str) -> datetime:
    """The event written on an open write connection `con` (a caller that writes more in the
    same transaction, e.g. a trajectory judgement with the withdrawal it causes)."""
    if event not in EVENTS:
        raise TaskEventError(f"task {task_id}: event {event!r} is not one of {', '.join(EVENTS)}")
    if source not in SOURCES:
        raise TaskEventError(f"task {task_id}: event source {source!r} is not one of {', '.join(SOURCES)}")
    if not (reason or "").strip():
        raise TaskEventError(f"task {task_id}: a {event} event needs a reason")
    row = con.execute("SELECT verdict, coalesce(withdrawn, false) FROM tasks WHERE task_id = ?",
                      [task_id]).fetchone()
    if row is None:
        raise TaskEventError(f"task {task_id}: no such task")
    verdict, withdrawn = row
    if event == "withdrawn" and verdict != "accepted":
        raise TaskEventError(f"task {task_id}: only an accepted task can be withdrawn (its verdict is {verdict})")
    if event == "withdrawn" and withdrawn:
        raise TaskEventError(f"task {task_id}: already withdrawn")
    if event == "restored" and not withdrawn:
        raise TaskEventError(f"task {task_id}: not withdrawn, nothing to restore")
    last = con.execute("SELECT max(event_at) FROM task_events WHERE task_id = ?", [task_id]).fetchone()[0]
    # event_at is part of the key and orders the history: never equal to, nor before, the last one
    at = datetime.now()
    if last is not None and at <= last:
        at = last + timedelta(microseconds=1)
    con.execute("INSERT INTO task_events VALUES (?, ?, ?, ?, ?)", [task_id, at, event, source, reason.strip()])
    con.execute("UPDATE tasks SET withdrawn = ? WHERE task_id = ?", [event == "withdrawn", task_id])
    return at


def withdraw(db: Database, task_id: str, source: str, reason: str) -> datetime:
    """Take an accepted task out of the accepted set; returns the event's time."""
    return _change(db, task_id, "withdrawn", source, reason)


def restore(db: Database, task_id: str, source: str, reason: str) -> datetime:
    """Undo a withdrawal: the task is back in the accepted set (the withdrawal stays on record)."""
    return _change(db, task_id, "restored", source, reason)


def history(db: Database, task_id: str) -> pd.DataFrame:
    """The task's withdrawals and restores, oldest first: event_at, event, source, reason."""
    with db.read() as con:
        return con.execute("SELECT event_at, event, source, reason FROM task_events WHERE task_id = ? "
                           "ORDER BY event_at", [task_id]).df()


def withdrawal(db: Database, task_id: str) -> dict | None:
    """The event that withdrew the task (event_at, source, reason), or None when it is not withdrawn."""
    with db.read() as con:
        row = con.execute(
            """SELECT e.event_at, e.source, e.reason FROM tasks t JOIN task_events e USING (task_id)
               WHERE t.task_id = ? AND coalesce(t.withdrawn, false) AND e.event = 'withdrawn'
               ORDER BY e.event_at DESC LIMIT 1""", [task_id]).fetchone()
    return None if row is None else {"event_at": row[0], "source": row[1], "reason": row[2]}
