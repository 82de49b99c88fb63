"""The state of each pipeline stage, read off `workspace_status`, and of the demo build."""
from __future__ import annotations

import time
from dataclasses import dataclass

from workbench.demo_status import DemoStatus

@dataclass(frozen=True)
class StageState:
    stage: str
    state: str      # done | not run | partial
    detail: str
    command: str


def pipeline_stages(status: dict) -> list[StageState]:
    s = status
    sk, sc, br = s["skills"], s["scenarios"], s["bridges"]
    ev = s.get("evolution", {"variants": 0, "accepted": 0})

    def state(done: int, of: int | None = None) -> str:
        if done == 0:
            return "not run"
        return "partial" if of is not None and done < of else "done"

    return [
        StageState("Ingest & filter", state(sk["total"]),
                   f"{sk['total']} skills: {sk['accepted']} accepted, {sk['rejected']} rejected, "
                   f"{sk['pending']} pending", "workbench ingest PATH"),
        StageState("Scenario inference", state(sc["skills_with_scenarios"], sk["accepted"]),
                   f"{sc['skills_with_scenarios']} of {sk['accepted']} accepted skills have scenarios",
                   "workbench scenarios infer"),
        StageState("Dedup & bridges", state(sc["clusters"]),
                   f"{sc['raw']} scenarios in {sc['clusters']} clusters; "
                   f"{br['verified']} of {br['candidates']} bridges verified", "workbench graph build"),
        StageState("Path sampling", state(s["paths"]["total"]), f"{s['paths']['total']} paths",
                   "workbench sample"),
        StageState("Synthesis & verification", state(s["tasks"]["total"]),
                   f"{s['tasks']['accepted']} of {s['tasks']['total']} tasks accepted", "workbench synth"),
        StageState("Rollouts", state(s["rollouts"]["total"]),
                   f"{s['rollouts']['total']} rollouts of agents on the tasks (Difficulty and Failures pages)",
                   "workbench rollout --accepted --agent oracle -k 3"),
        StageState("Difficulty evolution", state(ev["variants"]),
                   f"{ev['variants']} variants made by SETA-Evol, {ev['accepted']} accepted (Evolution page)",
                   "workbench evolve --accepted --rounds 1"),
    ]


@dataclass(frozen=True)
class BuildView:
    headline: str          # one sentence: building / done / stopped, and how far
    fraction: float        # 0..1 for a progress bar
    finished: int          # stages that have ended (done, skipped or failed)
    rows: list[dict]       # one per stage: stage, state, progress, detail
    missing: list[str]     # what the demo lacks and how to get it
    running: bool


def demo_build_view(status: DemoStatus, running: bool, now: float | None = None,
                    tasks_made: int = 0) -> BuildView:
    """The demo build's status file as the Overview shows it; `running`: whether the process
    that builds is alive (DemoStatus.running), passed in to keep this a pure function.
    What the build found missing is about its tasks: once the workspace has tasks (a batch
    launched later), it is no longer said."""
    now = time.time() if now is None else now
    stages = status.stages
    finished = sum(s.state in ("done", "skipped", "failed") for s in stages)
    current = status.current
    # a stage that reports items counts by its share of them
    part = current.done / current.total if current and current.total else 0.0
    fraction = min(1.0, (finished + part) / len(stages)) if stages else 1.0
    took_s = int(max(0.0, status.updated - status.started))
    took = f"{took_s // 60} min {took_s % 60} s" if took_s >= 60 else f"{took_s} s"
    if running:
        now_doing = f"; now: {current.title.lower()}" if current else ""
        headline = (f"The demo workspace is being built: {finished} of {len(stages)} stages done{now_doing} "
                    f"(running for {int(now - status.started)} s). Pages show what is there so far.")
    elif status.state in ("building", "stopped"):
        headline = (f"The demo build stopped before it finished ({finished} of {len(stages)} stages done"
                    f"{'; ' + status.error if status.error else ''}). Run `workbench app --demo` again to go on.")
    elif status.state == "failed":
        headline = f"The demo build failed: {status.error}. Its log: {status.log}"
    else:
        headline = f"The demo workspace was built in {took}."
    rows = [{"stage": s.title, "state": s.state,
             "progress": f"{s.done} of {s.total}" if s.total else "",
             "detail": s.detail} for s in stages]
    missing = [] if tasks_made else list(status.missing)
    return BuildView(headline, fraction, finished, rows, missing, running)
