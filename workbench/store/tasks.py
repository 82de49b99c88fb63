"""Synthesis runs, tasks, the tasks of each run and their verification checks in the store.

Batches commit one short transaction per finished task, so the dashboard stays readable
and a killed batch loses at most the task it was working on.
"""
from __future__ import annotations

import json
from datetime import datetime

import pandas as pd

from workbench.models import CHECK_NAMES, CheckResult, TaskRecord
from workbench.store.connection import Database
from workbench.store.task_events import accepted_set

# One funnel stage per check, in verification order (the build's stage keeps its name "built").
_SAID = {"noop": "no-op", "redteam": "red-team"}
CHECK_STAGES = {name: "built" if name == "build" else name for name in CHECK_NAMES}
FUNNEL = ("sampled", "synthesized", *CHECK_STAGES.values(), "accepted")
FUNNEL_LABELS = {"sampled": "sampled", "synthesized": "synthesized", "built": "built",
                 **{stage: f"{_SAID.get(name, name)} ok" for name, stage in CHECK_STAGES.items()
                    if name != "build"},
                 "accepted": "accepted"}
VERDICTS = ("accepted", "rejected")
LOG_CAP = 64 * 1024


# ---------------------------------------------------------------- runs
def create_run(db: Database, run_id: str, sampler: str, n_paths: int, seed: int, provider: str,
               concurrency: int, pid: int | None, min_len: int | None = None, max_len: int | None = None) -> None:
    with db.write() as con:
        con.execute("INSERT INTO synth_runs (run_id, sampler, n_paths, seed, provider, concurrency, status, pid, "
                    "created_at, min_len, max_len) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
                    [run_id, sampler, n_paths, seed, provider, concurrency, pid, datetime.now(), min_len, max_len])


def attach_paths(db: Database, run_id: str, batch_id: str, path_ids: list[str]) -> None:
    with db.write() as con:
        con.execute("UPDATE synth_runs SET batch_id = ? WHERE run_id = ?", [batch_id, run_id])
        con.executemany("INSERT OR IGNORE INTO run_tasks VALUES (?, ?, NULL, 'sampled', NULL)",
                        [[run_id, p] for p in path_ids])


def set_run_status(db: Database, run_id: str, status: str, message: str | None = None,
                   pid: int | None = None) -> None:
    finished = datetime.now() if status != "running" else None
    with db.write() as con:
        con.execute("UPDATE synth_runs SET status = ?, message = coalesce(?, message), finished_at = ?, "
                    "pid = coalesce(?, pid) WHERE run_id = ?", [status, message, finished, pid, run_id])


def get_run(db: Database, run_id: str) -> dict | None:
    with db.read() as con:
        df = con.execute("SELECT * FROM synth_runs WHERE run_id = ?", [run_id]).df()
    return None if df.empty else df.iloc[0].to_dict()


def runs(db: Database) -> pd.DataFrame:
    """Every synthesis run, with ``llm_model``: the models its LLM calls were answered by (batch id =
    run id), joined by ", " (NULL for a run with none, an offline one)."""
    with db.read() as con:
        return con.execute(
            """WITH m AS (SELECT batch_id AS run_id, string_agg(DISTINCT model, ', ' ORDER BY model) AS llm_model
                          FROM llm_calls WHERE batch_id IS NOT NULL GROUP BY batch_id)
               SELECT r.*, m.llm_model FROM synth_runs r LEFT JOIN m USING (run_id)
               ORDER BY r.created_at DESC""").df()


def unfinished_paths(db: Database, run_id: str) -> pd.DataFrame:
    """Paths of a run with no final outcome yet, with their steps in order."""
    with db.read() as con:
        return con.execute(
            """SELECT rt.path_id, ps.step, ps.src_anchor, ps.skill_id, ps.dst_anchor
               FROM run_tasks rt JOIN path_steps ps USING (path_id)
               WHERE rt.run_id = ? AND rt.stage NOT IN ('verified', 'failed')
               ORDER BY rt.path_id, ps.step""", [run_id]).df()


def set_path_stage(db: Database, run_id: str, path_id: str, stage: str, task_id: str | None = None,
                   error: str | None = None) -> None:
    with db.write() as con:
        con.execute("UPDATE run_tasks SET stage = ?, task_id = coalesce(?, task_id), error = ? "
                    "WHERE run_id = ? AND path_id = ?", [stage, task_id, error, run_id, path_id])


# ---------------------------------------------------------------- tasks
def task_verdict(db: Database, task_id: str) -> str | None:
    with db.read() as con:
        row = con.execute("SELECT verdict FROM tasks WHERE task_id = ?", [task_id]).fetchone()
    return row[0] if row else None


def save_task(db: Database, rec: TaskRecord, near_dup_key: str | None = None,
              skill_fidelity: list[dict] | None = None) -> None:
    """Record a freshly synthesized task (pending) and forget any older checks of it.
    `near_dup_key`: tasks sharing one are near-identical (see `near_duplicates`).
    `skill_fidelity`: per composed step, the skill it serves and what of it the step uses
    (workbench.sandbox.task_toml.StepFidelity as dicts)."""
    fidelity = None if skill_fidelity is None else json.dumps(skill_fidelity)
    with db.write() as con:
        con.execute("DELETE FROM task_checks WHERE task_id = ?", [rec.task_id])
        con.execute("DELETE FROM tasks WHERE task_id = ?", [rec.task_id])
        con.execute("INSERT INTO tasks (task_id, name, path_id, category, difficulty, n_steps, recipes, skill_ids, "
                    "scenario_ids, provider, bundle_dir, bundle_hash, verdict, created_at, near_dup_key, "
                    "skill_fidelity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                    [rec.task_id, rec.name, rec.path_id, rec.category, rec.difficulty, rec.n_steps, rec.recipes,
                     rec.skill_ids, rec.scenario_ids, rec.provider, rec.bundle_dir, rec.bundle_hash, datetime.now(),
                     near_dup_key, fidelity])


def skill_fidelity(db: Database, task_id: str) -> list[dict] | None:
    """The task's per-step skill fidelity as saved (None for a task made before it was recorded)."""
    with db.read() as con:
        row = con.execute("SELECT skill_fidelity FROM tasks WHERE task_id = ?", [task_id]).fetchone()
    return json.loads(row[0]) if row and row[0] is not None else None


def run_skill_fidelity(db: Database, run_id: str) -> list[list[dict]]:
    """The per-step skill fidelity of every task a synthesis run made (tasks made before it was
    recorded left out), in path order."""
    with db.read() as con:
        rows = con.execute("""SELECT t.skill_fidelity FROM run_tasks rt JOIN tasks t USING (task_id)
                              WHERE rt.run_id = ? AND t.skill_fidelity IS NOT NULL ORDER BY rt.path_id""",
                           [run_id]).fetchall()
    return [json.loads(r[0]) for r in rows]


def save_verification(db: Database, task_id: str, checks: list[CheckResult], image: str | None,
                      run_id: str | None = None, path_id: str | None = None, *,
                      verdict: str, failed_check: CheckResult | None) -> str:
    """Store every check and the verdict in one transaction; returns the verdict.

    `verdict` and `failed_check` (the check the task is rejected for) are the caller's, worked
    out by pipeline.verify.failures (verdict, first_failed), where the rule is written once."""
    if verdict not in VERDICTS:
        raise ValueError(f"task {task_id}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    elif verdict == "accepted" and (failed_check is not None or not checks):
        raise ValueError(f"task {task_id}: an accepted verdict needs checks and no failed check "
                         f"(given {len(checks)} checks, failed check {getattr(failed_check, 'name', None)!r})")
    failed = failed_check
    now = datetime.now()
    rows = [[task_id, c.name, c.passed, c.reason[:2000], float(c.seconds), _cap(c.log),
             json.dumps(c.details, default=str), now] for c in checks]
    with db.write() as con:
        con.execute("DELETE FROM task_checks WHERE task_id = ?", [task_id])
        if rows:
            con.executemany("INSERT INTO task_checks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute("UPDATE tasks SET verdict = ?, failed_check = ?, reason = ?, image = ?, verified_at = ? "
                    "WHERE task_id = ?", [verdict, failed.name if failed else None,
                                          failed.reason[:2000] if failed else None, image, now, task_id])
        if run_id and path_id:
            con.execute("UPDATE run_tasks SET stage = 'verified', task_id = ?, error = NULL "
                        "WHERE run_id = ? AND path_id = ?", [task_id, run_id, path_id])
    return verdict


def _cap(log: str) -> str:
    if len(log) <= LOG_CAP:
        return log
    half = LOG_CAP // 2
    return log[:half] + f"\n… [{len(log) - LOG_CAP} characters cut] …\n" + log[-half:]


# Each check's outcome as a column <name>_ok of tasks_frame (NULL = not run).
_CHECK_COLUMNS = ",\n".join(f"max(CASE WHEN c.check_name = '{n}' THEN c.passed END) AS {n}_ok" for n in CHECK_NAMES)


def tasks_frame(db: Database) -> pd.DataFrame:
    """Every task with its verdict and each check's outcome as a column (NULL = not run), the
    newest run that holds it (``run_id``, ``run_status``; NULL for a task of no run), and
    ``llm_model``: the models its LLM calls (item = task id) were answered by, joined by ", "."""
    with db.read() as con:
        return con.execute(
            f"""WITH last_run AS (
                   SELECT rt.task_id, arg_max(r.run_id, r.created_at) AS run_id,
                          arg_max(r.status, r.created_at) AS run_status
                   FROM run_tasks rt JOIN synth_runs r USING (run_id)
                   WHERE rt.task_id IS NOT NULL GROUP BY rt.task_id),
               models AS (
                   SELECT item AS task_id, string_agg(DISTINCT model, ', ' ORDER BY model) AS llm_model
                   FROM llm_calls WHERE item IS NOT NULL GROUP BY item)
               SELECT t.*, lr.run_id, lr.run_status, m.llm_model,
                  {_CHECK_COLUMNS}
               FROM tasks t LEFT JOIN last_run lr USING (task_id) LEFT JOIN models m USING (task_id)
                  LEFT JOIN task_checks c USING (task_id)
               GROUP BY ALL ORDER BY t.created_at DESC""").df()


def checks_for(db: Database, task_id: str) -> pd.DataFrame:
    with db.read() as con:
        df = con.execute("SELECT check_name, passed, reason, seconds, log, details, created_at FROM task_checks "
                         "WHERE task_id = ?", [task_id]).df()
    order = {n: i for i, n in enumerate(CHECK_NAMES)}
    if not df.empty:
        df["details"] = df["details"].map(lambda d: json.loads(d) if isinstance(d, str) else d)
        df = df.sort_values("check_name", key=lambda s: s.map(lambda n: order.get(n, 99))).reset_index(drop=True)
    return df


def funnel_counts(db: Database, run_id: str | None = None) -> dict[str, int]:
    """Counts along the yield funnel, for one run or for every run together: a task is built
    when its build passed, and stays in each later stage while that check did not fail (a
    check a provider does not run, the judge of an offline task, narrows nothing)."""
    where = "WHERE rt.run_id = ?" if run_id else ""
    params = [run_id] if run_id else []
    later = [n for n in CHECK_NAMES if n != "build"]
    failed = ",\n".join(f"bool_or(check_name = '{n}' AND NOT passed) AS failed_{n}" for n in later)
    stages = ["chk.passed_build"]
    for n in later:
        stages.append(f"{stages[-1]} AND NOT chk.failed_{n}")
    counts = ",\n".join(f"count(*) FILTER (WHERE {cond})" for cond in stages)
    with db.read() as con:
        row = con.execute(
            f"""WITH rt AS (SELECT DISTINCT rt.run_id, rt.path_id, rt.task_id FROM run_tasks rt {where}),
                   chk AS (SELECT task_id, bool_or(check_name = 'build' AND passed) AS passed_build, {failed}
                           FROM task_checks GROUP BY task_id)
               SELECT count(*), count(rt.task_id), {counts},
                      count(*) FILTER (WHERE {accepted_set('t')})
               FROM rt LEFT JOIN chk USING (task_id) LEFT JOIN tasks t USING (task_id)""", params).fetchone()
    return dict(zip(FUNNEL, (int(v or 0) for v in row)))


def stage_counts(db: Database, run_id: str) -> dict[str, int]:
    """Paths of a run per stage (sampled / synthesized / verified / failed) for live progress."""
    with db.read() as con:
        rows = con.execute("SELECT stage, count(*) FROM run_tasks WHERE run_id = ? GROUP BY stage", [run_id]).fetchall()
    out = {"sampled": 0, "synthesized": 0, "verified": 0, "failed": 0}
    out.update({s: int(n) for s, n in rows})
    return out


def accepted_tasks(db: Database) -> pd.DataFrame:
    """The accepted set (withdrawn tasks left out): task_id, name, bundle_dir, by name."""
    with db.read() as con:
        return con.execute(f"SELECT task_id, name, bundle_dir FROM tasks WHERE {accepted_set()} "
                           "ORDER BY name").df()


def path_steps_with_skills(db: Database, path_ids: list[str]) -> pd.DataFrame:
    """Steps of the given paths with the skill facts the synthesizer needs, in order."""
    if not path_ids:
        return pd.DataFrame(columns=["path_id", "step", "src_anchor", "skill_id", "dst_anchor",
                                     "name", "description", "category", "raw_text", "bins", "tools",
                                     "inputs", "outputs", "steps", "source_path", "package_files"])
    with db.read() as con:
        return con.execute(
            """SELECT ps.path_id, ps.step, ps.src_anchor, ps.skill_id, ps.dst_anchor,
                      coalesce(s.name, ps.skill_id) AS name, coalesce(s.description, '') AS description,
                      coalesce(s.category, 'file-operations') AS category,
                      coalesce(s.raw_text, '') AS raw_text, coalesce(s.bins, []) AS bins,
                      coalesce(s.tools, []) AS tools, coalesce(s.inputs, []) AS inputs,
                      coalesce(s.outputs, []) AS outputs, coalesce(s.steps, []) AS steps,
                      coalesce(s.source_path, '') AS source_path, coalesce(s.package_files, []) AS package_files
               FROM path_steps ps LEFT JOIN skills s ON s.id = ps.skill_id
               WHERE ps.path_id IN (SELECT unnest(?::VARCHAR[]))
               ORDER BY ps.path_id, ps.step""", [path_ids]).df()


def run_failures(db: Database, run_id: str) -> pd.DataFrame:
    """The run's paths that gave no verified task, with why (a step with no offline recipe,
    a synthesis dead end, a crashed verification), in path order."""
    with db.read() as con:
        return con.execute("SELECT path_id, task_id, error FROM run_tasks WHERE run_id = ? AND stage = 'failed' "
                           "ORDER BY path_id", [run_id]).df()


def latest_unfinished_run(db: Database) -> str | None:
    with db.read() as con:
        row = con.execute("SELECT run_id FROM synth_runs WHERE status <> 'finished' "
                          "ORDER BY created_at DESC LIMIT 1").fetchone()
    return row[0] if row else None


def run_path_ids(db: Database, run_id: str) -> list[str]:
    with db.read() as con:
        return [r[0] for r in con.execute("SELECT path_id FROM run_tasks WHERE run_id = ? AND stage NOT IN "
                                          "('verified', 'failed') ORDER BY path_id", [run_id]).fetchall()]


# ---------------------------------------------------------------- run summaries, near-duplicates
def run_summary(db: Database, run_id: str) -> dict:
    """Counts over every path of a run, whichever process did the work (a run resumed
    three times is still one run), and the first failing check of its rejected paths.
    These are the run's verification outcomes: a task withdrawn later still counts as
    accepted here (the accepted set, `accepted_set`, is what funnels and exports read)."""
    with db.read() as con:
        row = con.execute(
            """SELECT count(*), count(rt.task_id),
                      count(*) FILTER (WHERE rt.stage = 'verified'),
                      count(*) FILTER (WHERE rt.stage = 'verified' AND t.verdict = 'accepted'),
                      count(*) FILTER (WHERE rt.stage = 'verified' AND t.verdict = 'rejected'),
                      count(*) FILTER (WHERE rt.stage = 'failed')
               FROM run_tasks rt LEFT JOIN tasks t USING (task_id) WHERE rt.run_id = ?""", [run_id]).fetchone()
        reasons = con.execute(
            """SELECT t.failed_check, count(*) FROM run_tasks rt JOIN tasks t USING (task_id)
               WHERE rt.run_id = ? AND rt.stage = 'verified' AND t.verdict = 'rejected'
                 AND t.failed_check IS NOT NULL GROUP BY ALL""", [run_id]).fetchall()
    keys = ("sampled", "synthesized", "verified", "accepted", "rejected", "failed")
    out: dict = dict(zip(keys, (int(v or 0) for v in row)))
    out["reasons"] = {name: int(n) for name, n in reasons}
    return out


def near_duplicates(db: Database, run_id: str | None = None) -> pd.DataFrame:
    """Tasks that repeat an earlier task's recipe chain and step text: one row per repeat with
    the task it repeats (`duplicate_of`, the first made with that key). With `run_id`, only
    the tasks of that run are compared."""
    scope = "AND task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)" if run_id else ""
    with db.read() as con:
        return con.execute(
            f"""WITH t AS (SELECT task_id, name, near_dup_key, created_at FROM tasks
                           WHERE near_dup_key IS NOT NULL {scope}),
                     ranked AS (SELECT *, first_value(task_id) OVER w AS duplicate_of,
                                       first_value(name) OVER w AS duplicate_of_name,
                                       row_number() OVER w AS rank
                                FROM t WINDOW w AS (PARTITION BY near_dup_key ORDER BY created_at, task_id))
                SELECT task_id, name, near_dup_key, duplicate_of, duplicate_of_name FROM ranked
                WHERE rank > 1 ORDER BY duplicate_of, created_at, task_id""",
            [run_id] if run_id else []).df()
