"""Evolve runs as the Evolution page and the notebook show and start them: the agent config a run's
rates are of, the run picker's labels, a running run's progress, the tasks a round may evolve and
the launch form's fields as the driver's parameters. Pure functions of store frames and run rows
(workbench/store/lineage.py); the rates and the lineage themselves are analysis/evolution.py's."""
from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd

from analysis.evolution import NO_MODEL, AgentConfig


def run_config(agent: str, model: object = None, params: object = None) -> AgentConfig:
    """The agent config an evolve run's rates are of (its agent, model and, for an agent without a
    model, the label its rollouts carry, e.g. noisy-oracle's with the run's p), as the driver reads them."""
    model = model if isinstance(model, str) else NO_MODEL
    if model:
        return AgentConfig(agent, model)
    if isinstance(params, str):
        params = _json_object(params)
    keep_p = params.get("keep_p") if isinstance(params, dict) else None
    from pipeline.agents.factory import make_agent   # the label is the agent's own; cheap, but not at import
    try:
        return AgentConfig(agent, NO_MODEL, make_agent(agent, keep_p=keep_p).label)
    except ValueError:                # an agent this version does not know (imported rollouts): by name only
        return AgentConfig(agent)


# --- what a round may evolve ----------------------------------------------------------------------------

def evolvable_tasks(tasks: pd.DataFrame) -> list[str]:
    """The tasks a round may evolve (`workbench.store.tasks.tasks_frame`): accepted, not withdrawn."""
    if tasks.empty:
        return []
    keep = (tasks["verdict"] == "accepted") & ~tasks.get("withdrawn", pd.Series(False, index=tasks.index)) \
        .fillna(False).astype(bool)
    return sorted(tasks.loc[keep, "task_id"])


def form_params(*, task_ids: Sequence[str], rounds: int, agent: str, k: int, keep_p: float, executor: str,
                ray_address: str):
    """The launch form's fields as pipeline.evolve.jobs.EvolveParams: p only for noisy-oracle (the
    driver refuses it for any other agent), the Ray address only with the ray executor, blank = none."""
    from pipeline.evolve.jobs import EvolveParams    # the driver's imports, only when a round is launched
    return EvolveParams(task_ids=tuple(task_ids), rounds=int(rounds), agent=agent, k=int(k),
                        keep_p=float(keep_p) if AgentConfig(agent).simulated else None, executor=executor,
                        ray_address=(ray_address.strip() or None) if executor == "ray" else None)


# --- evolve runs: labels and progress ----------------------------------------------------------------

def run_labels(runs: pd.DataFrame) -> dict[str, str]:
    """Run id -> "id · agent · rounds done/asked · made, accepted · status" for the run picker
    (`workbench.store.lineage.evolve_runs_frame`, newest first)."""
    out = {}
    for r in runs.itertuples():
        model = f" {r.model}" if isinstance(r.model, str) and r.model else ""
        out[r.run_id] = (f"{r.run_id} · {r.agent}{model} · round {int(r.rounds_done)}/{int(r.rounds)} · "
                         f"{int(r.n_made)} made, {int(r.n_accepted)} accepted · {r.status}")
    return out


def run_progress(params: object) -> tuple[float, str] | None:
    """A running evolve run's position (params["progress"]: round, phase, done, total) as a bar's
    fraction and text; None before the driver reported any."""
    if isinstance(params, str):     # evolve_runs_frame hands the JSON column over as text
        params = _json_object(params)
    p = params.get("progress") if isinstance(params, dict) else None
    if not isinstance(p, dict) or not p.get("total"):
        return None
    done, total = int(p.get("done") or 0), int(p["total"])
    return min(1.0, done / total), f"round {p.get('round', '?')} · {p.get('phase', '')}: {done}/{total}"


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
