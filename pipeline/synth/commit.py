"""The synthesis driver's writes (the executor contract: only the driver writes the workspace).
Each function puts one kind of path outcome into the task folder and DuckDB, in the caller's
thread; the batch (pipeline/synth/batch.py) keeps the counts."""
from __future__ import annotations

from pipeline.synth.worker import PathOutcome
from pipeline.verify import failures
from workbench.models import CheckResult
from workbench.sandbox.bundle import write_bundle
from workbench.store import repairs as repair_store
from workbench.store import tasks as store
from workbench.workspace import Workspace

ERROR_CHARS = 2000


def fail_path(ws: Workspace, run_id: str, path_id: str, error: str, task_id: str | None = None) -> None:
    store.set_path_stage(ws.db, run_id, path_id, "failed", task_id=task_id, error=error[:ERROR_CHARS])


def reuse_task(ws: Workspace, run_id: str, path_id: str, task_id: str) -> str | None:
    """The path's task was finished before (this run, an earlier one, or another path of the same
    steps): the path is verified with it. Returns its verdict, None when it is not reusable."""
    verdict = store.task_verdict(ws.db, task_id)
    if verdict in ("accepted", "rejected") and (ws.root / "tasks" / task_id / "task.toml").exists():
        store.set_path_stage(ws.db, run_id, path_id, "verified", task_id=task_id)
        return verdict
    return None


def save_failed_attempts(ws: Workspace, out: PathOutcome) -> None:
    """What a path that gave no task tried is kept under the id it announced."""
    if out.attempts:
        try:
            repair_store.save_attempts(ws.db, out.task_id, out.attempts)
        except repair_store.AttemptError:
            pass   # the path's failure is the record that counts


def save_task(ws: Workspace, run_id: str, out: PathOutcome) -> str | None:
    """The task's bundle under tasks/<id>/, its row and repair attempts; the path is synthesized.
    Returns the note to keep beside its checks (e.g. repairs exhausted), if any."""
    assert out.bundle is not None and out.record is not None
    write_bundle(out.bundle, ws.root / out.record.bundle_dir)
    store.save_task(ws.db, out.record, near_dup_key=out.near_dup_key, skill_fidelity=out.skill_fidelity)
    note = out.error
    try:
        repair_store.save_attempts(ws.db, out.task_id, out.attempts)
    except repair_store.AttemptError as exc:   # a synthesizer bug; the task and its checks still count
        note = "; ".join(filter(None, [note, f"repair attempts not stored: {exc}"]))
    store.set_path_stage(ws.db, run_id, out.path_id, "synthesized", task_id=out.task_id)
    return note


def save_checks(ws: Workspace, run_id: str, out: PathOutcome, note: str | None) -> tuple[str, CheckResult | None]:
    """The task's checks and verdict; returns the verdict and the first failed check."""
    checks = out.checks or []
    image = next((c.details.get("image") for c in checks if c.name == "build" and c.passed), None)
    failed = failures.first_failed(checks)    # in verification order, whatever order they came in
    verdict = store.save_verification(ws.db, out.task_id, checks, image, run_id, out.path_id,
                                      verdict=failures.verdict(checks), failed_check=failed)
    if note:   # kept beside the checks that say which failed
        store.set_path_stage(ws.db, run_id, out.path_id, "verified", task_id=out.task_id, error=note[:ERROR_CHARS])
    return verdict, failed
