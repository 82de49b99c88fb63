"""A synthesis run's report and its record in the store: the paths it samples, its counts
when it ends, and the status line a person reads (why it stopped, how to go on)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pandas as pd

from pipeline.graph.sample_run import sample
from pipeline.synth.limits import DEFAULT_CONCURRENCY, MAX_STEPS, MIN_LEN
from workbench.store import tasks as store
from workbench.workspace import Workspace

NO_RECIPE = "no offline recipe"   # how a path failed by a skill the library cannot honour is recorded
# Summed over the run's paths (thread-seconds, not wall time): waiting on the LLM and on Docker
# as the synthesizer (or the batch's own verification) measured them; total_s is each path's
# whole time in the batch, so total - llm - docker is our own code.
TIMINGS = ("llm_s", "docker_s", "total_s")


@dataclass
class SynthReport:
    """A run's outcome. The counts cover the whole run, every resumed part included
    (`reused` and `seconds` are this process's); `near_duplicates` lists the run's tasks
    that repeat another of its tasks (same recipe chain and step text). `timings` sums what
    each path spent waiting on the LLM, on Docker and in all (this process's paths; with
    several at once they add up to more than `seconds`); `cost_usd` is this process's LLM spend."""
    run_id: str
    status: str = "running"
    provider: str = "offline"
    concurrency: int = DEFAULT_CONCURRENCY
    sampled: int = 0
    synthesized: int = 0
    verified: int = 0
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    reused: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
    near_duplicates: list[dict] = field(default_factory=list)   # task_id, name, duplicate_of
    failures: list[dict] = field(default_factory=list)          # path_id, error: paths that gave no task
    notes: list[str] = field(default_factory=list)              # e.g. fewer distinct paths than asked
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TIMINGS, 0.0))
    cost_usd: float = 0.0

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                for k, v in self.__dict__.items()}

    def take_counts(self, summary: dict) -> None:
        """Counts of the whole run from `store.run_summary`."""
        for k in ("sampled", "synthesized", "verified", "accepted", "rejected", "failed"):
            setattr(self, k, summary[k])
        self.reasons = dict(summary["reasons"])



def attach_sampled(ws: Workspace, run_id: str, run: dict) -> list[str]:
    """Sample the run's paths unless it has them (resume); returns the sampler's notes."""
    if run.get("batch_id"):
        return []
    lo, hi = stored_len(run.get("min_len"), MIN_LEN), stored_len(run.get("max_len"), MAX_STEPS)
    try:
        sampled = sample(ws, run["sampler"], int(run["n_paths"]), int(run["seed"]), min_len=lo, max_len=hi)
    except Exception as exc:
        store.set_run_status(ws.db, run_id, "failed", f"sampling failed: {exc}")
        raise ValueError(f"sampling failed: {exc} (build the graph first: `workbench graph build`)") from exc
    from workbench.store import graph as graph_store
    store.attach_paths(ws.db, run_id, sampled.batch_id, graph_store.batch_path_ids(ws.db, sampled.batch_id))
    return [sampled.note] if sampled.note else []


def finish(ws: Workspace, report: SynthReport, stop: threading.Event, halted: str | None,
            cap: float | None, notes: list[str]) -> None:
    """The whole run's counts into the report, and its status and message into the store."""
    run_id = report.run_id
    status = "cancelled" if stop.is_set() or halted else "finished"
    report.status = status
    report.take_counts(store.run_summary(ws.db, run_id))
    report.near_duplicates = store.near_duplicates(ws.db, run_id)[["task_id", "name", "duplicate_of"]].to_dict("records")
    failed_paths = store.run_failures(ws.db, run_id)
    report.failures = failed_paths[["path_id", "error"]].to_dict("records")
    no_recipe = int(failed_paths["error"].fillna("").str.startswith(NO_RECIPE).sum())
    counts = (f"{report.accepted} accepted, {report.rejected} rejected, {report.failed} failed"
              + (f", {len(report.near_duplicates)} near-duplicate" if report.near_duplicates else "")
              + (f", {no_recipe} with a skill no offline recipe honours" if no_recipe else ""))
    if halted == "budget" and not stop.is_set():
        spent = f"budget of {usd(cap)}" if cap is not None else "the LLM budget"
        message = f"{spent} spent; resume to finish ({counts})"
        report.notes.append(message)
    elif halted:
        message = f"stopped: {halted}; resume to finish once it answers ({counts})"
        report.notes.append(message)
    else:
        message = counts + (" (stopped; resume to finish)" if stop.is_set() else "")
    store.set_run_status(ws.db, run_id, status, message + "".join(f"; {n}" for n in notes))


def usd(x: float) -> str:
    """$2, $0.25, $0.00001: as many decimals as the amount needs (up to millionths)."""
    return "$" + (f"{x:.6f}".rstrip("0").rstrip(".") or "0")


def stored_len(value, default: int) -> int:
    """A run's stored path length; runs made before lengths were stored have none."""
    return default if value is None or pd.isna(value) else int(value)


def start_from_finished(report: SynthReport, summary: dict) -> None:
    """A resumed run's progress starts from the paths already finished (paths cut short
    before are done again, so only final outcomes are carried over)."""
    report.sampled = summary["sampled"]
    for k in ("verified", "accepted", "rejected", "failed"):
        setattr(report, k, summary[k])
    report.synthesized = summary["verified"]
