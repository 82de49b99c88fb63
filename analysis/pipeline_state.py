"""The state of each pipeline stage, read off `workspace_status`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageState:
    stage: str
    state: str      # done | not run | partial
    detail: str
    command: str


def pipeline_stages(status: dict) -> list[StageState]:
    s = status
    sk, sc, br = s["skills"], s["scenarios"], s["bridges"]

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
        StageState("Rollouts", state(s["rollouts"]["total"]), f"{s['rollouts']['total']} rollouts",
                   "workbench rollout"),
    ]
