"""Curation as events: every accept, reject or edit is recorded, and can be undone."""
from __future__ import annotations

import uuid
from datetime import datetime

import pandas as pd

from workbench.models import CurationChange, SkillStatus
from workbench.store.connection import Database

EDITABLE_FIELDS = ("status", "category", "description", "name")
_EFFECTIVE = {"status": "status", "category": "category", "description": "description", "name": "name"}


class CurationError(ValueError):
    pass


def _validate(change: CurationChange) -> None:
    if change.field not in EDITABLE_FIELDS:
        raise CurationError(f"field '{change.field}' cannot be edited (editable: {', '.join(EDITABLE_FIELDS)})")
    if change.field == "status" and change.new_value not in {s.value for s in SkillStatus}:
        raise CurationError(f"status must be accepted, rejected or pending, not '{change.new_value}'")
    if change.field in ("name", "category") and not change.new_value.strip():
        raise CurationError(f"{change.field} cannot be empty")


def save_changes(db: Database, changes: list[CurationChange], author: str) -> str | None:
    """Write all staged changes in one transaction; returns the batch id (None: nothing changed)."""
    for ch in changes:
        _validate(ch)
    batch_id = uuid.uuid4().hex[:12]
    now = datetime.now()
    written = 0
    with db.write() as con:
        for ch in changes:
            row = con.execute(f"SELECT {_EFFECTIVE[ch.field]} FROM skills_effective WHERE id = ?",
                              [ch.skill_id]).fetchone()
            if row is None:
                raise CurationError(f"no skill with id {ch.skill_id}")
            effective = row[0]
            if effective == ch.new_value:
                continue
            old = con.execute("SELECT value FROM skill_overrides WHERE skill_id = ? AND field = ?",
                              [ch.skill_id, ch.field]).fetchone()
            event_id = uuid.uuid4().hex
            con.execute("INSERT INTO curation_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                        [event_id, batch_id, ch.skill_id, ch.field, old[0] if old else None,
                         ch.new_value, effective, author, now])
            con.execute("INSERT OR REPLACE INTO skill_overrides VALUES (?, ?, ?, ?)",
                        [ch.skill_id, ch.field, ch.new_value, event_id])
            written += 1
    return batch_id if written else None


def recent_batches(db: Database, limit: int = 20) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            """SELECT e.batch_id, any_value(e.author) AS author, max(e.created_at) AS "at",
                      count(*) AS changes,
                      string_agg(coalesce(s.name, e.skill_id) || ': ' || e.field || ' → ' ||
                                 coalesce(e.new_value,
                                          -- an undo that removes the override restores the value
                                          -- beneath it: name it, not "(parsed value)"
                                          CASE e.field WHEN 'status' THEN a.auto_status || ' (filters'' verdict)'
                                                       WHEN 'category' THEN s.category || ' (as parsed)'
                                                       WHEN 'name' THEN s.name || ' (as parsed)'
                                                       WHEN 'description' THEN s.description || ' (as parsed)'
                                          END, '(as parsed)'), '; ') AS summary,
                      any_value(e.undoes_batch) AS undoes_batch,
                      EXISTS (SELECT 1 FROM curation_events u WHERE u.undoes_batch = e.batch_id) AS undone
               FROM curation_events e LEFT JOIN skills s ON s.id = e.skill_id
                    LEFT JOIN skill_auto_status a ON a.id = e.skill_id
               GROUP BY e.batch_id ORDER BY "at" DESC LIMIT ?""", [limit]).df()


def undo_batch(db: Database, batch_id: str, author: str) -> str:
    """Restore what a batch changed, as a new batch; refuses when a later edit would be lost."""
    new_batch = uuid.uuid4().hex[:12]
    now = datetime.now()
    with db.write() as con:
        events = con.execute(
            "SELECT event_id, skill_id, field, old_value, new_value FROM curation_events "
            "WHERE batch_id = ? ORDER BY created_at DESC, event_id", [batch_id]).fetchall()
        if not events:
            raise CurationError(f"no curation batch {batch_id}")
        if con.execute("SELECT count(*) FROM curation_events WHERE undoes_batch = ?", [batch_id]).fetchone()[0]:
            raise CurationError(f"batch {batch_id} was already undone")
        for event_id, skill_id, field, old_value, new_value in events:
            cur = con.execute("SELECT value, event_id FROM skill_overrides WHERE skill_id = ? AND field = ?",
                              [skill_id, field]).fetchone()
            untouched = (cur is not None and cur[1] == event_id) if new_value is not None else cur is None
            if not untouched:
                name = con.execute("SELECT name FROM skills WHERE id = ?", [skill_id]).fetchone()
                raise CurationError(
                    f"'{field}' of {name[0] if name else skill_id} was changed again after batch "
                    f"{batch_id}; undo the later change first")
            effective = con.execute(f"SELECT {_EFFECTIVE[field]} FROM skills_effective WHERE id = ?",
                                    [skill_id]).fetchone()[0]
            undo_id = uuid.uuid4().hex
            con.execute("INSERT INTO curation_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [undo_id, new_batch, skill_id, field, new_value, old_value, effective,
                         author, now, batch_id])
            if old_value is None:
                con.execute("DELETE FROM skill_overrides WHERE skill_id = ? AND field = ?", [skill_id, field])
            else:
                con.execute("INSERT OR REPLACE INTO skill_overrides VALUES (?, ?, ?, ?)",
                            [skill_id, field, old_value, undo_id])
    return new_batch


def last_undoable_batch(db: Database) -> str | None:
    batches = recent_batches(db, limit=50)
    live = batches[~batches["undone"]]
    return None if live.empty else str(live.iloc[0]["batch_id"])
