"""Which current skills the filter rules rejected, leaving one rule's own verdicts aside."""
from __future__ import annotations

from workbench.store.connection import Database


def rejected_by_rules(db: Database, *, besides: str) -> set[str]:
    """Ids of current skills that some rule other than `besides` failed.

    The LLM judge runs after the rules on what they did not reject; its own earlier verdict
    (rule `besides`) must not count, or a skill it once rejected would never be judged again.
    """
    with db.read() as con:
        rows = con.execute(
            """SELECT DISTINCT v.skill_id FROM filter_verdicts v JOIN skills s ON s.id = v.skill_id
               WHERE s.is_current AND v.outcome = 'fail' AND v.rule <> ?""", [besides]).fetchall()
    return {r[0] for r in rows}
