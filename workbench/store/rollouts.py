"""Rollouts in the store: batches, one row per rollout, one per test outcome.

Records arrive as dicts shaped like ``dataclasses.asdict(pipeline.rollouts.models.RolloutRecord)``
(workbench/ never imports pipeline/) and are checked whole before anything is written. Only a
batch's driver calls the writers (the executor contract: workers never touch DuckDB). The
files of a rollout (trajectory, recording, verifier output) live in its folder under runs/.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

import pandas as pd

from workbench.store.connection import Database

RUN_STATUSES = ("pending", "running", "done", "cancelled", "failed")
TEST_OUTCOMES = ("passed", "failed", "error", "skipped")
_COLUMNS = ("rollout_id", "run_id", "task_id", "agent", "agent_label", "model", "sample", "temperature",
            "source", "reward", "passed", "failure_class", "n_tests", "n_failed", "turns", "parse_errors",
            "prompt_tokens", "completion_tokens", "cost_usd", "agent_s", "verifier_s", "total_s",
            "overhead_ms_per_turn", "folder", "error", "details")
_REQUIRED = ("rollout_id", "task_id", "agent", "agent_label", "source", "folder")


class RolloutRecordError(ValueError):
    """A record handed to `save_rollout` is not shaped like a RolloutRecord."""


def _row(rec: Mapping) -> list:
    where = f"rollout {rec.get('rollout_id') or '?'}"
    if missing := [k for k in _REQUIRED if not rec.get(k)]:
        raise RolloutRecordError(f"{where}: missing {', '.join(missing)}")
    if bool(rec.get("passed")) and rec.get("failure_class"):
        raise RolloutRecordError(f"{where}: passed, yet failure class {rec['failure_class']!r}")
    if not rec.get("passed") and not rec.get("failure_class"):
        raise RolloutRecordError(f"{where}: failed without a failure class")
    row = []
    for c in _COLUMNS:
        v = rec.get(c)
        if c == "details":
            v = json.dumps(v or {}, default=str)
        elif c in ("sample", "n_tests", "n_failed", "turns", "parse_errors", "prompt_tokens", "completion_tokens"):
            v = int(v or 0)
        elif c in ("temperature", "cost_usd", "agent_s", "verifier_s", "total_s"):
            v = float(v or 0.0)
        row.append(v)
    return row


def save_rollout(db: Database, record: Mapping, tests: Sequence[Mapping]) -> None:
    """Insert or replace one rollout and its per-test outcomes, in one transaction."""
    row = _row(record)
    trows = []
    for t in tests:
        outcome = str(t.get("outcome"))
        if outcome not in TEST_OUTCOMES:
            raise RolloutRecordError(f"rollout {record['rollout_id']}: test {t.get('name')!r} has outcome "
                                     f"{outcome!r}, not one of {', '.join(TEST_OUTCOMES)}")
        trows.append([record["rollout_id"], str(t["name"]), outcome, (t.get("message") or None)])
    with db.write() as con:
        con.execute("DELETE FROM rollout_tests WHERE rollout_id = ?", [record["rollout_id"]])
        con.execute("DELETE FROM rollouts WHERE rollout_id = ?", [record["rollout_id"]])
        con.execute(f"INSERT INTO rollouts ({', '.join(_COLUMNS)}, created_at) VALUES "
                    f"({', '.join('?' * len(_COLUMNS))}, ?)", row + [datetime.now()])
        if trows:
            # A test named twice (parametrised ids can clash after cleaning) keeps its last outcome.
            con.executemany("INSERT OR REPLACE INTO rollout_tests VALUES (?, ?, ?, ?)", trows)


def finished_keys(db: Database, keys: Sequence[str] | None = None) -> set[str]:
    """Rollout ids already stored (of `keys`, when given): what a resumed batch skips."""
    with db.read() as con:
        ids = {r[0] for r in con.execute("SELECT rollout_id FROM rollouts").fetchall()}
    return ids & set(keys) if keys is not None else ids


def create_run(db: Database, run_id: str, *, agent: str, model: str | None, k: int, concurrency: int,
               n_tasks: int, params: Mapping) -> None:
    with db.write() as con:
        con.execute("INSERT OR REPLACE INTO rollout_runs VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, ?, NULL)",
                    [run_id, agent, model, k, concurrency, n_tasks, json.dumps(dict(params), default=str),
                     datetime.now()])


def set_run_status(db: Database, run_id: str, status: str, message: str | None = None,
                   pid: int | None = None) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"run status {status!r}: one of {', '.join(RUN_STATUSES)}")
    finished = datetime.now() if status in ("done", "cancelled", "failed") else None
    with db.write() as con:
        con.execute("UPDATE rollout_runs SET status = ?, message = coalesce(?, message), pid = coalesce(?, pid), "
                    "finished_at = ? WHERE run_id = ?", [status, message, pid, finished, run_id])


def get_run(db: Database, run_id: str) -> dict | None:
    with db.read() as con:
        df = con.execute("SELECT * FROM rollout_runs WHERE run_id = ?", [run_id]).fetchdf()
    return None if df.empty else df.iloc[0].to_dict()


def runs(db: Database) -> pd.DataFrame:
    """Every batch, newest first, with how many rollouts it has stored and how many passed."""
    with db.read() as con:
        return con.execute("""
            SELECT r.*, count(o.rollout_id) AS n_done, count(*) FILTER (WHERE o.passed) AS n_passed
            FROM rollout_runs r LEFT JOIN rollouts o USING (run_id)
            GROUP BY ALL ORDER BY r.created_at DESC""").fetchdf()


def rollouts_frame(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """Every rollout (of one batch), with its task's category, path length, recipes, provider,
    sampler and verdict — what difficulty and failure breakdowns group by."""
    where, args = ("WHERE o.run_id = ?", [run_id]) if run_id else ("", [])
    with db.read() as con:
        return con.execute(f"""
            SELECT o.*, t.name AS task_name, t.category, t.n_steps, t.recipes, t.provider, t.verdict,
                   t.withdrawn, sr.sampler
            FROM rollouts o JOIN tasks t USING (task_id)
            LEFT JOIN (SELECT DISTINCT ON (rt.task_id) rt.task_id, s.sampler FROM run_tasks rt
                       JOIN synth_runs s USING (run_id) WHERE rt.task_id IS NOT NULL) sr USING (task_id)
            {where} ORDER BY o.task_id, o.agent, o.sample""", args).fetchdf()


def test_outcomes(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """One row per rollout and test: rollout_id, task_id, agent, test_name, outcome, message."""
    where, args = ("WHERE o.run_id = ?", [run_id]) if run_id else ("", [])
    with db.read() as con:
        return con.execute(f"""
            SELECT t.rollout_id, o.task_id, o.agent, o.model, t.test_name, t.outcome, t.message
            FROM rollout_tests t JOIN rollouts o USING (rollout_id) {where}
            ORDER BY o.task_id, t.test_name""", args).fetchdf()


def get_rollout(db: Database, rollout_id: str) -> dict | None:
    with db.read() as con:
        df = con.execute("SELECT * FROM rollouts WHERE rollout_id = ?", [rollout_id]).fetchdf()
    if df.empty:
        return None
    rec = df.iloc[0].to_dict()
    rec["details"] = json.loads(rec["details"]) if isinstance(rec["details"], str) else rec["details"]
    return rec


def set_run_progress(db: Database, run_id: str, counts: Mapping[str, int], message: str | None = None) -> None:
    """Live counts of a running batch for the page (params["counts"]: total, done, skipped, passed, …)
    and its status line, in one short write."""
    with db.write() as con:
        con.execute("UPDATE rollout_runs SET params = json_merge_patch(params, ?), message = coalesce(?, message) "
                    "WHERE run_id = ?", [json.dumps({"counts": dict(counts)}), message, run_id])


def outcomes_of(db: Database, rollout_ids: Sequence[str]) -> pd.DataFrame:
    """rollout_id, passed, failure_class of the stored rollouts among `rollout_ids`."""
    with db.read() as con:
        return con.execute("SELECT rollout_id, passed, failure_class FROM rollouts WHERE list_contains(?, rollout_id)",
                           [list(rollout_ids)]).fetchdf()
