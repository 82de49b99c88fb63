"""A synthesis run as the Synthesis and Tasks pages show it: the status a user should read
(a dead process reads 'interrupted'), its label, per-stage progress, the runs table and the
resume command. Pure functions of dicts and DataFrames, like analysis/tasks_view.py."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

import pandas as pd

from analysis.display import workbench_command
from workbench.double_rule import provider_label

STARTING_GRACE = timedelta(seconds=30)


# --- synthesis runs --------------------------------------------------------------------------

def pid_of(run: Mapping) -> int | None:
    """The run's process id, or None when none was recorded (NULL comes back as NaN)."""
    pid = run.get("pid")
    return None if pid is None or pd.isna(pid) else int(pid)


def effective_status(run: Mapping, alive: bool, now: datetime | None = None) -> str:
    """A run's status as the user should read it: a 'running' run whose process is gone is
    'interrupted' (resumable); one without a process id yet is 'starting' for a few seconds."""
    status = str(run["status"])
    if status != "running" or alive:
        return status
    created = run.get("created_at")
    if pid_of(run) is None and created is not None and not pd.isna(created):
        if (now or datetime.now()) - pd.Timestamp(created).to_pydatetime() < STARTING_GRACE:
            return "starting"
    return "interrupted"


def resume_command(run_id: str, workspace: str | None = None) -> str:
    """The command that continues an unfinished run (as `workbench synth` takes it)."""
    return workbench_command(f"synth --resume --run-id {run_id}", workspace)


def run_label(run: Mapping) -> str:
    """"run id · sampler · n paths · time" (no status: a picker's labels go stale while the
    run goes on; the runs table and the live view show it)."""
    at = run["created_at"]
    when = at.strftime("%Y-%m-%d %H:%M:%S") if isinstance(at, (datetime, pd.Timestamp)) else str(at)
    return f"{run['run_id']} · {run['sampler']} · {int(run['n_paths'])} paths · {when}"


def run_progress(stage_counts: Mapping[str, int], funnel: Mapping[str, int], run: Mapping) -> list[dict]:
    """Per stage of a run: done, out of how many, and the fraction for a progress bar.

    Sampling draws the whole batch at once, so it is 0 or 1; synthesis and verification
    count the run's paths that got past them (a path whose synthesis failed counts as
    processed), and acceptance counts verified tasks among them."""
    n = {k: int(stage_counts.get(k, 0)) for k in ("sampled", "synthesized", "verified", "failed")}
    attached = sum(n.values())
    total = attached or int(run.get("n_paths") or 0)
    done = {"sampled": attached,
            "synthesized": n["synthesized"] + n["verified"] + n["failed"],
            "verified": n["verified"] + n["failed"],
            "accepted": int(funnel.get("accepted", 0)),
            "failed": n["failed"]}
    labels = {"sampled": "paths sampled", "synthesized": "paths through synthesis",
              "verified": "paths through verification", "accepted": "tasks accepted",
              "failed": "synthesis failures"}
    out = []
    for key in ("sampled", "synthesized", "verified", "accepted", "failed"):
        if key == "sampled":
            frac, of = (1.0 if attached else 0.0), int(run.get("n_paths") or attached)
        else:
            frac, of = (min(done[key] / total, 1.0) if total else 0.0), total
        out.append({"stage": key, "label": labels[key], "done": done[key], "total": of, "fraction": frac,
                    "text": f"{labels[key]}: {done[key]} / {of}"})
    return out


def made_nothing(stage_counts: Mapping[str, int]) -> bool:
    """A run that ended with every one of its paths failed before a task existed (an LLM
    endpoint that is down, replies that never fit): 'finished' is then no success to show."""
    n = {k: int(stage_counts.get(k, 0)) for k in ("sampled", "synthesized", "verified", "failed")}
    return n["failed"] > 0 and n["failed"] == sum(n.values())


def runs_table(runs: pd.DataFrame, statuses: Mapping[str, str]) -> pd.DataFrame:
    """The runs list as shown: newest first, with the status the user should read and the provider
    with its model(s), a test double labelled so (``llm_model`` of workbench.store.tasks.runs)."""
    if runs.empty:
        return pd.DataFrame(columns=["run_id", "status", "sampler", "n_paths", "provider", "concurrency", "seed",
                                     "created_at", "finished_at", "message"])
    out = runs.sort_values("created_at", ascending=False).copy()
    out["status"] = [statuses.get(r, s) for r, s in zip(out["run_id"], out["status"])]
    # `llm` alone hid a test double: the provider names the model(s) its calls were answered by
    models = out["llm_model"] if "llm_model" in out else [None] * len(out)
    out["provider"] = [provider_label(p, m) for p, m in zip(out["provider"], models)]
    return out[["run_id", "status", "sampler", "n_paths", "provider", "concurrency", "seed", "created_at",
                "finished_at", "message"]].reset_index(drop=True)


def default_run(runs: pd.DataFrame, statuses: Mapping[str, str]) -> str | None:
    """The newest running run, else the newest run."""
    if runs.empty:
        return None
    r = runs.sort_values("created_at", ascending=False)
    live = [i for i in r["run_id"] if statuses.get(i) in ("running", "starting")]
    return live[0] if live else str(r.iloc[0]["run_id"])


def failures_note(provider: str) -> str:
    """What the list of a run's paths that gave no task holds, by the run's synthesizer."""
    if provider == "offline":
        return "a step whose skill no offline recipe honours is reported here, never replaced by an unrelated family."
    return "each with why (a plan or reply that never fit its path, a synthesis error); a path the budget stopped " \
           "is not here: it stays unfinished and `--resume` does it."
