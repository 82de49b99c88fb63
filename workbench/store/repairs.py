"""A task's repair history and LLM cost in the store.

The synthesizer hands over its attempts as dicts shaped like
``pipeline.repair.attempts.RepairAttempt.model_dump()`` (workbench/ never imports pipeline/);
they are checked whole before anything is written, so a bad attempt loses nothing stored.
A task's cost is what ``llm_calls`` holds for it (``item = task_id``): the call log is
buffered, so a batch refreshes the costs of its tasks once its client has flushed.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

import pandas as pd

from workbench.store.connection import Database

ARTIFACTS = ("environment", "solution", "tests", "instruction")   # as pipeline.verify.failures.ARTIFACTS
DIFF_CAP = 200_000     # characters of one attempt's diff kept; RepairAttempt caps it already
VERIFIED = ("accepted", "rejected")

_REQUIRED = ("n", "artifact", "check", "reason")
_COLUMNS = ("task_id", "n", "artifact", "check_name", "reason", "diff", "evidence", "prompt_tokens",
            "completion_tokens", "cost_usd", "outcome", "created_at")


class AttemptError(ValueError):
    """An attempt handed to `save_attempts` is not shaped like a RepairAttempt."""


def _row(task_id: str, i: int, a: Mapping, now: datetime) -> list:
    where = f"task {task_id}, attempt #{i + 1}"
    if not isinstance(a, Mapping):
        raise AttemptError(f"{where}: expected a dict (RepairAttempt.model_dump()), got {type(a).__name__}")
    if missing := [k for k in _REQUIRED if a.get(k) in (None, "")]:
        raise AttemptError(f"{where}: missing {', '.join(missing)}")
    if a["artifact"] not in ARTIFACTS:
        raise AttemptError(f"{where}: artifact {a['artifact']!r} is not one of {', '.join(ARTIFACTS)}")
    try:
        n, pt, ct = int(a["n"]), int(a.get("prompt_tokens") or 0), int(a.get("completion_tokens") or 0)
        cost = float(a.get("cost_usd") or 0.0)
    except (TypeError, ValueError) as exc:
        raise AttemptError(f"{where}: n, tokens and cost must be numbers ({exc})") from None
    if n < 1 or min(pt, ct) < 0 or cost < 0:
        raise AttemptError(f"{where}: n must be >= 1 and tokens and cost >= 0 (n={n}, tokens={pt}/{ct}, "
                           f"cost={cost})")
    evidence = a.get("evidence") or []
    if isinstance(evidence, str) or not isinstance(evidence, (list, tuple)):
        raise AttemptError(f"{where}: evidence must be a list of lines, got {type(evidence).__name__}")
    diff = str(a.get("diff") or "")
    if len(diff) > DIFF_CAP:
        diff = diff[:DIFF_CAP] + f"\n… [{len(diff) - DIFF_CAP} characters cut]\n"
    return [task_id, n, a["artifact"], str(a["check"]), str(a["reason"]), diff,
            json.dumps([str(e) for e in evidence]), pt, ct, cost, str(a.get("outcome") or "pending"), now]


def save_attempts(db: Database, task_id: str, attempts: list[Mapping]) -> None:
    """Replace the task's repair attempts with ``attempts`` and set ``tasks.repairs`` (how many)
    and ``tasks.cost_usd`` (its LLM calls so far), in one transaction."""
    now = datetime.now()
    rows = [_row(task_id, i, a, now) for i, a in enumerate(attempts)]
    numbers = [r[1] for r in rows]
    if len(set(numbers)) != len(numbers):
        raise AttemptError(f"task {task_id}: attempt numbers repeat ({sorted(numbers)})")
    with db.write() as con:
        con.execute("DELETE FROM task_attempts WHERE task_id = ?", [task_id])
        if rows:
            con.executemany(f"INSERT INTO task_attempts ({', '.join(_COLUMNS)}) VALUES "
                            f"({', '.join('?' * len(_COLUMNS))})", rows)
        con.execute("UPDATE tasks SET repairs = ?, cost_usd = (SELECT sum(cost_usd) FROM llm_calls "
                    "WHERE item = ?) WHERE task_id = ?", [len(rows), task_id, task_id])


def refresh_costs(db: Database, run_id: str) -> int:
    """Set ``tasks.cost_usd`` of every task of the run from ``llm_calls`` (call it once the
    client's call log is flushed); returns how many tasks have LLM calls."""
    with db.write() as con:
        con.execute("""UPDATE tasks SET cost_usd = c.cost FROM
                           (SELECT item, sum(cost_usd) AS cost FROM llm_calls GROUP BY item) c
                       WHERE c.item = tasks.task_id
                         AND tasks.task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)""", [run_id])
        return int(con.execute("""SELECT count(*) FROM tasks WHERE cost_usd IS NOT NULL
                                  AND task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)""",
                               [run_id]).fetchone()[0])


def attempts_for(db: Database, task_id: str) -> pd.DataFrame:
    """The task's attempts in order, evidence as a list."""
    with db.read() as con:
        df = con.execute(f"SELECT {', '.join(_COLUMNS)} FROM task_attempts WHERE task_id = ? ORDER BY n",
                         [task_id]).df()
    df["evidence"] = df["evidence"].map(lambda e: json.loads(e) if isinstance(e, str) else list(e or []))
    return df


def stage_costs(db: Database, task_id: str) -> pd.DataFrame:
    """The task's LLM calls per stage: calls, cache hits, tokens and cost, in the order first made."""
    with db.read() as con:
        return con.execute(
            """SELECT stage, count(*) AS calls, count(*) FILTER (WHERE cache_hit) AS cache_hits,
                      sum(prompt_tokens)::BIGINT AS prompt_tokens, sum(completion_tokens)::BIGINT AS completion_tokens,
                      sum(cost_usd) AS cost_usd
               FROM llm_calls WHERE item = ? GROUP BY stage ORDER BY min(created_at), stage""", [task_id]).df()


def repair_counts(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """Verified tasks per provider, repairs made and verdict (accepted | rejected), for one
    run or every run; a task with no attempts recorded counts 0 repairs."""
    scope = "AND task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)" if run_id else ""
    with db.read() as con:
        return con.execute(
            f"""SELECT provider, coalesce(repairs, 0) AS repairs, verdict, count(*) AS tasks FROM tasks
                WHERE verdict IN ('accepted', 'rejected') {scope}
                GROUP BY ALL ORDER BY provider, repairs, verdict""", [run_id] if run_id else []).df()
