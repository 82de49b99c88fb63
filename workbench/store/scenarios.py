"""Inferred scenarios and inference failures in the store."""
from __future__ import annotations

from datetime import datetime

import pandas as pd

from workbench.models import ScenarioPair
from workbench.store.connection import Database

_FIELDS = ("goal", "context", "capability", "state", "io_tool", "canonical")


def skills_needing_scenarios(db: Database, provider: str, model: str, template_version: str | None,
                             force: bool = False) -> pd.DataFrame:
    """Accepted current skills without scenarios from this provider, model and template."""
    with db.read() as con:
        return con.execute(
            """SELECT s.id, s.name, s.description, s.category, s.steps, s.inputs, s.outputs, s.bins, s.tools,
                      s.raw_text
               FROM skills_effective s
               WHERE s.is_current AND s.status = 'accepted' AND (? OR NOT EXISTS (
                   SELECT 1 FROM scenarios c WHERE c.skill_id = s.id AND c.provider = ? AND c.model = ?
                   AND c.template_version IS NOT DISTINCT FROM ?
                   GROUP BY c.skill_id HAVING count(*) = 2))
               ORDER BY s.id""", [force, provider, model, template_version]).df()


def save_pairs(db: Database, pairs: list[tuple[str, ScenarioPair]], provider: str, model: str,
               template_version: str | None) -> None:
    if not pairs:
        return
    now = datetime.now()
    rows = []
    for skill_id, pair in pairs:
        for role, sc in (("pre", pair.pre), ("post", pair.post)):
            rows.append([skill_id, role, *(getattr(sc, f) for f in _FIELDS), provider, model, template_version, now])
    with db.write() as con:
        con.executemany("INSERT OR REPLACE INTO scenarios VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.executemany("DELETE FROM scenario_failures WHERE skill_id = ?", [[sid] for sid, _ in pairs])


def save_failures(db: Database, failures: list[tuple[str, str]], provider: str, model: str) -> None:
    if not failures:
        return
    now = datetime.now()
    with db.write() as con:
        con.executemany("INSERT OR REPLACE INTO scenario_failures VALUES (?, ?, ?, ?, ?)",
                        [[sid, reason[:2000], provider, model, now] for sid, reason in failures])


def drop_pairs(db: Database, skill_ids: list[str], provider: str, model: str) -> None:
    """Remove these skills' scenarios made by this provider and model: its current answer for
    them was found unusable, so an older one from it must not stand in as valid."""
    if skill_ids:
        with db.write() as con:
            con.executemany("DELETE FROM scenarios WHERE skill_id = ? AND provider = ? AND model = ?",
                            [[sid, provider, model] for sid in skill_ids])


def scenarios_for(db: Database, skill_id: str) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            "SELECT role, canonical, goal, context, capability, state, io_tool, provider, model, "
            "template_version, created_at FROM scenarios WHERE skill_id = ? ORDER BY role DESC", [skill_id]).df()


def failure_for(db: Database, skill_id: str) -> dict | None:
    with db.read() as con:
        row = con.execute("SELECT reason, provider, model, created_at FROM scenario_failures WHERE skill_id = ?",
                          [skill_id]).fetchone()
    return dict(zip(("reason", "provider", "model", "created_at"), row)) if row else None
