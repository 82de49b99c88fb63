"""Rollout batches as the Rollouts page shows them: the launch form's values turned into the
batch's parameters (scripted agents take no model; terminus-2 without an endpoint plays the
scripted replay model, a test double), the runs table, a run's label and progress, and the
resume command. The status a user should read (a dead process reads 'interrupted') and the run
picked by default are the Synthesis page's rules (analysis/synth_runs.py), used as they are.
Pure functions of dicts and DataFrames."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import pandas as pd

from analysis.display import MISSING, workbench_command
from analysis.failures import agent_label
from analysis.synth_runs import default_run, effective_status, pid_of  # noqa: F401  (one rule for both pages)
from pipeline.agents.terminus2.scripted import BEHAVIOURS, REPLAY_MODEL  # noqa: F401  (the page's choices)
from pipeline.rollouts.jobs import RolloutParams, counts
from workbench.double_rule import model_label

LLM_AGENT = "terminus-2"
LIVE = ("running", "starting")
TABLE_COLUMNS = ["run_id", "agent", "model", "status", "rollouts", "passed", "k", "n_tasks", "concurrency",
                 "created_at", "finished_at", "message"]
REPLAY_NOTE = (f"the scripted replay model `{REPLAY_MODEL}`: a test double served in-process that plays a fixed "
               "script (e.g. types the task's own solution), not an LLM; its pass rates say nothing about a model")


def form_params(*, agent: str, task_ids: Sequence[str], k: int, concurrency: int, temperature: float,
                model: str | None, replay: str | None, online: bool,
                budget_usd: float | None = None) -> RolloutParams:
    """The batch the launch form asks for. Scripted agents get no model, replay or temperature.
    terminus-2 with no endpoint configured can only play the replay model (the page says so);
    with one, `replay` (if given) still picks the test double and `model` ("" = the workspace's)
    the endpoint's model."""
    if agent != LLM_AGENT:
        return RolloutParams(agent=agent, task_ids=tuple(task_ids), k=int(k), concurrency=int(concurrency))
    if not online and not replay:
        replay = BEHAVIOURS[0]
    return RolloutParams(agent=agent, task_ids=tuple(task_ids), k=int(k), concurrency=int(concurrency),
                         temperature=float(temperature), model=None if replay else (model or None),
                         replay=replay or None, budget_usd=None if replay else budget_usd)


def resume_command(run_id: str, workspace: str | None = None) -> str:
    return workbench_command(f"rollout --resume {run_id}", workspace)


def _when(at: object) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S") if isinstance(at, (datetime, pd.Timestamp)) else str(at)


def _model(run: Mapping) -> str:
    model = run.get("model")
    return model if isinstance(model, str) and model else ""


def run_label(run: Mapping) -> str:
    """'run id · agent · model · k=3 · time' (no status: it goes stale in a picker)."""
    model = model_label(_model(run))
    return " · ".join(x for x in (str(run["run_id"]), str(run["agent"]), model, f"k={int(run['k'])}",
                                  _when(run["created_at"])) if x)


def runs_table(runs: pd.DataFrame, statuses: Mapping[str, str]) -> pd.DataFrame:
    """The batches list: newest first, the status to read, rollouts stored of the total."""
    if runs.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    out = runs.sort_values("created_at", ascending=False).copy()
    out["status"] = [statuses.get(r, s) for r, s in zip(out["run_id"], out["status"])]
    totals = [counts(r)["total"] for r in out.to_dict("records")]
    out["rollouts"] = [f"{int(d)} / {t}" if t else str(int(d)) for d, t in zip(out["n_done"], totals)]
    out["passed"] = out["n_passed"].astype(int)
    # a run against a test double says so in its agent, where a narrow model column cannot cut it off
    out["agent"] = [agent_label(a, None, m) for a, m in zip(out["agent"], out["model"])]
    out["model"] = [model_label(m) if isinstance(m, str) and m else MISSING   # scripted agents: none
                    for m in out["model"]]
    return out[TABLE_COLUMNS].reset_index(drop=True)


def run_progress(run: Mapping) -> list[dict]:
    """The progress bars of a run: rollouts finished (run now or stored before) of the total, and
    passed of those finished; none before the batch has counted its work."""
    c = counts(run)
    total, done = c["total"], c["done"]
    if not total:       # not counted yet (or a run recorded without counts): the status note says enough
        return []
    out = [{"key": "done", "fraction": min(done / total, 1.0),
            "text": f"rollouts finished: {done} / {total}"
                    + (f" ({c['skipped']} already stored, skipped)" if c["skipped"] else "")}]
    finished = c["passed"] + c["failed"]
    out.append({"key": "passed", "fraction": c["passed"] / finished if finished else 0.0,
                "text": f"passed: {c['passed']} of {finished} run"})
    return out


def status_note(status: str, run: Mapping, workspace: str | None = None) -> tuple[str, str]:
    """(level, text) of a run's state for the live view: level is success, info, warning or error."""
    message = str(run.get("message") or "")
    pid = pid_of(run)
    if status in LIVE:
        return "info", (f"Running (process {pid or '…'}). It continues if you close this tab; this view refreshes "
                        "every 2 s." + (f" {message}" if message else ""))
    if status == "pending":
        return "info", "Recorded, not started yet (no batch process has taken it up)."
    if status == "done":
        return "success", f"Finished. {message}".strip()
    resume = resume_command(str(run["run_id"]), workspace)
    if status == "cancelled":
        return "warning", (f"Cancelled: {message or 'stopped before it finished'}. Stored rollouts are kept; resume "
                           f"the rest with `{resume}`.")
    if status == "interrupted":
        return "warning", (f"Interrupted: the batch process ({pid}) is gone, killed or crashed before it finished. "
                           f"Stored rollouts are kept; resume the rest with `{resume}`.")
    return "error", f"Failed: {message or 'see the log below'}. Resume after fixing the cause: `{resume}`."
