"""`workbench status --json`: the workspace's counts in the shape DESIGN §3 fixes."""
from __future__ import annotations

from workbench.store.connection import Database
from workbench.store.task_events import accepted_set


def _table_exists(con, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [name]).fetchone()[0])


def workspace_status(db: Database) -> dict:
    status = {
        "skills": {"total": 0, "accepted": 0, "rejected": 0, "pending": 0},
        "scenarios": {"skills_with_scenarios": 0, "raw": 0, "clusters": 0},
        "bridges": {"candidates": 0, "verified": 0},
        "paths": {"total": 0},
        "tasks": {"total": 0, "accepted": 0},
        "rollouts": {"total": 0},
        "evolution": {"variants": 0, "accepted": 0},
        "llm": {"calls": 0, "cache_hits": 0, "cost_usd": 0},
    }
    if not db.path.exists():
        return status
    with db.read() as con:
        if _table_exists(con, "skills_effective"):
            for st, n in con.execute(
                    "SELECT status, count(*) FROM skills_effective WHERE is_current GROUP BY 1").fetchall():
                status["skills"][st] = int(n)
            status["skills"]["total"] = sum(status["skills"][k] for k in ("accepted", "rejected", "pending"))
        if _table_exists(con, "scenarios"):
            with_both, raw = con.execute(
                """SELECT count(*) FILTER (WHERE n = 2), coalesce(sum(n), 0) FROM (
                       SELECT c.skill_id, count(*) AS n FROM scenarios c
                       JOIN skills s ON s.id = c.skill_id AND s.is_current GROUP BY c.skill_id)""").fetchone()
            status["scenarios"]["skills_with_scenarios"] = int(with_both)
            status["scenarios"]["raw"] = int(raw)
        if _table_exists(con, "clusters"):
            status["scenarios"]["clusters"] = int(con.execute("SELECT count(*) FROM clusters").fetchone()[0])
            cand, ver = con.execute("SELECT count(*), count(*) FILTER (WHERE verdict = 'verified') FROM bridges"
                                    ).fetchone()
            status["bridges"] = {"candidates": int(cand), "verified": int(ver)}
            status["paths"]["total"] = int(con.execute("SELECT count(*) FROM paths").fetchone()[0])
        if _table_exists(con, "tasks"):
            total, accepted = con.execute(
                f"SELECT count(*), count(*) FILTER (WHERE {accepted_set()}) FROM tasks").fetchone()
            status["tasks"] = {"total": int(total), "accepted": int(accepted)}
        if _table_exists(con, "rollouts"):
            status["rollouts"]["total"] = int(con.execute("SELECT count(*) FROM rollouts").fetchone()[0])
        if _table_exists(con, "task_lineage"):
            made, accepted = con.execute(
                f"""SELECT count(*), count(*) FILTER (WHERE {accepted_set('t')}) FROM task_lineage l
                    JOIN tasks t ON t.task_id = l.task_id WHERE l.status = 'made'""").fetchone()
            status["evolution"] = {"variants": int(made), "accepted": int(accepted)}
        if _table_exists(con, "llm_calls"):
            calls, hits, cost = con.execute(
                "SELECT count(*), count(*) FILTER (WHERE cache_hit), coalesce(sum(cost_usd), 0) FROM llm_calls"
            ).fetchone()
            status["llm"] = {"calls": int(calls), "cache_hits": int(hits), "cost_usd": round(float(cost), 6)}
    return status
