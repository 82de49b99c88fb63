"""What the Tasks page says of a task taken out of the accepted set, and of the trajectory
judge's verdict on it (workbench.store.task_events, trajectory_judgements). Pure functions."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from workbench import double_rule


def judgement_note(judgements: pd.DataFrame) -> str | None:
    """The trajectory judge's newest verdict on a task (``trajectory_judgements.judgements``,
    newest first), in a line; None when it was never judged."""
    if judgements is None or judgements.empty:
        return None
    j = judgements.iloc[0]
    verdict = "a design flaw" if j["verdict"] == "design_flaw" else "too hard"
    ev = j["evidence"] if isinstance(j["evidence"], Mapping) else {}
    failing = ", ".join(ev.get("consistent") or []) or "none"
    reason = str(j["reason"]).rstrip()
    reason += "" if reason.endswith((".", "!", "?")) else "."
    model = double_rule.model_label(j["model"]) or "unknown model"   # the scripted judge says it is a test double
    return (f"Trajectory judge ({model}): {verdict} after {int(j['n_rollouts'])} failed "
            f"LLM rollouts — {reason} Tests failed in every rollout: {failing}.")


def withdrawal_note(withdrawal: Mapping | None) -> str:
    """What the Tasks page says of a withdrawn task: who took it out, when, and why."""
    if not withdrawal:
        return "Withdrawn from the accepted set."
    who = "the trajectory judge" if withdrawal["source"] == "trajectory_judge" else "a person"
    when = pd.Timestamp(withdrawal["event_at"]).strftime("%Y-%m-%d %H:%M")
    return (f"Withdrawn from the accepted set by {who} on {when}: {withdrawal['reason']}. "
            "It passed verification; rollouts and exports of the accepted set leave it out until it is restored.")
