"""A task's repair history and LLM cost as the Tasks page shows them, and the "accepted after
N repairs" funnel of the Tasks and Synthesis pages. Pure functions of the frames
`workbench.store.repairs` returns."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from analysis.figures import clear_of_toolbar, count_ticks
from analysis.tasks_view import VERDICT_COLORS, VERIFIED
from workbench import double_rule

# The recipe synthesizer's provider name (TaskRecord.provider's default): it never repairs.
OFFLINE_PROVIDER = "offline"
OUTCOME_ICONS = {"fixed": ":material/check_circle:", "still_failing": ":material/error:",
                 "moved_on": ":material/arrow_forward:", "exhausted": ":material/block:"}
HISTORY_COLUMNS = ["n", "artifact", "check", "reason", "tokens", "cost_usd", "outcome"]


def is_offline(task: Mapping | pd.Series) -> bool:
    return str(task.get("provider") or OFFLINE_PROVIDER) == OFFLINE_PROVIDER


def history_note(task: Mapping | pd.Series, attempts: pd.DataFrame) -> str:
    """One line over the Repairs tab: how the task came to be as it is."""
    if is_offline(task):
        return "offline task: made from recipes, never repaired"
    n = len(attempts)
    if n == 0:
        if pd.isna(task.get("repairs")):   # the synthesizer's attempts never reached the store
            return "no repair history recorded for this task"
        if task.get("verdict") == "rejected":
            return f"no repairs: rejected at {task.get('failed_check') or 'a check'} before any repair was tried"
        if task.get("verdict") != "accepted":
            return "no repairs so far: not verified yet"
        return "no repairs: built right the first time"
    fixed = attempts["outcome"].eq("fixed").sum()
    made = f"{n} repair{'s' if n != 1 else ''} ({fixed} fixed what failed)"
    if exhausted(attempts):
        return f"{made}; rejected: the repairs allowed were all spent and the last one still failed"
    ending = {"accepted": "accepted", "rejected": "rejected", "cancelled": "cancelled with its run"}
    return f"{made}; {ending.get(str(task.get('verdict')), 'not verified yet')} after {'them' if n != 1 else 'it'}"


def exhausted(attempts: pd.DataFrame) -> bool:
    """Whether the synthesizer gave up because no repair was left (its last attempt says so)."""
    return not attempts.empty and str(attempts.sort_values("n")["outcome"].iloc[-1]) == "exhausted"


def rejection_note(attempts: pd.DataFrame) -> str:
    """What a rejected task's verdict line adds about its repairs ("" when there is nothing to add):
    a check's reason alone does not say that the synthesizer ran out of repairs."""
    if not exhausted(attempts):
        return ""
    return f" Repairs exhausted: {len(attempts)} made, none left to try (see the Repairs tab)."


def history_table(attempts: pd.DataFrame) -> pd.DataFrame:
    """One row per attempt: what was rewritten, which check asked for it, why, its tokens,
    cost and outcome."""
    if attempts.empty:
        return pd.DataFrame(columns=HISTORY_COLUMNS)
    out = attempts.rename(columns={"check_name": "check"})
    out = out.assign(tokens=(out["prompt_tokens"] + out["completion_tokens"]).astype(int))
    return out[HISTORY_COLUMNS].reset_index(drop=True)


def attempt_title(attempt: Mapping | pd.Series) -> str:
    """"#2 · tests · after oracle · fixed · 1,234 tokens · $0.0031"."""
    tokens = int(attempt.get("prompt_tokens", 0)) + int(attempt.get("completion_tokens", 0))
    return (f"#{int(attempt['n'])} · {attempt['artifact']} · after {attempt['check_name']} · "
            f"{str(attempt['outcome']).replace('_', ' ')} · {tokens:,} tokens · ${float(attempt['cost_usd']):.4f}")


def attempt_icon(attempt: Mapping | pd.Series) -> str:
    return OUTCOME_ICONS.get(str(attempt["outcome"]), ":material/pending:")


def cost_table(stage_costs: pd.DataFrame) -> pd.DataFrame:
    """The task's LLM cost per stage with a total row (empty when it made no calls)."""
    cols = ["stage", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd"]
    if stage_costs.empty:
        return pd.DataFrame(columns=cols)
    body = stage_costs[cols].copy()
    total = {"stage": "total", **{c: body[c].sum() for c in cols[1:]}}
    return pd.concat([body, pd.DataFrame([total])], ignore_index=True)


def cost_note(stage_costs: pd.DataFrame, models: object = None) -> str:
    """The task's calls, tokens and cost in a line; `models` (the task's ``llm_model``): a test
    double's cost says it is one (workbench.double_rule)."""
    if stage_costs.empty:
        return "No LLM calls recorded for this task."
    calls, cost = int(stage_costs["calls"].sum()), float(stage_costs["cost_usd"].sum())
    tokens = int(stage_costs["prompt_tokens"].sum() + stage_costs["completion_tokens"].sum())
    names = models.split(", ") if isinstance(models, str) else []
    double = f" by {double_rule.models_label(names)}: {double_rule.COST_NOTE}" if double_rule.any_double(names) else ""
    return f"{calls} LLM call(s), {tokens:,} tokens, ${cost:.4f} in all{double}"


def repairs_funnel(counts: pd.DataFrame) -> pd.DataFrame:
    """Verified tasks of the synthesizers that repair (offline ones never do), per number of
    repairs 0, 1, … up to the most made, split accepted / rejected: columns repairs,
    accepted, rejected (a count of 0 where no task ended so)."""
    cols = ["repairs", *VERIFIED]
    if counts.empty:
        return pd.DataFrame(columns=cols)
    own = counts[(counts["provider"] != OFFLINE_PROVIDER) & counts["verdict"].isin(VERIFIED)]
    if own.empty:
        return pd.DataFrame(columns=cols)
    table = own.pivot_table(index="repairs", columns="verdict", values="tasks", aggfunc="sum", fill_value=0)
    table = table.reindex(index=range(int(own["repairs"].max()) + 1), columns=list(VERIFIED), fill_value=0)
    return table.astype(int).rename_axis(None, axis=1).reset_index(names="repairs")


def repairs_title(funnel: pd.DataFrame) -> str:
    accepted = int(funnel["accepted"].sum())
    first = int(funnel.loc[funnel["repairs"] == 0, "accepted"].sum())
    return f"Accepted after N repairs: {accepted} accepted, {first} of them with none"


def repairs_figure(funnel: pd.DataFrame) -> go.Figure:
    """A bar per N (0, 1, 2, …), accepted and rejected stacked."""
    fig = go.Figure()
    for verdict in VERIFIED:
        fig.add_bar(x=[str(n) for n in funnel["repairs"]], y=funnel[verdict].tolist(), name=verdict,
                    marker_color=VERDICT_COLORS[verdict],
                    hovertemplate=f"%{{y}} {verdict} after %{{x}} repair(s)<extra></extra>")
    fig.update_layout(barmode="stack", title=dict(text=repairs_title(funnel), x=0, font=dict(size=15)), height=320,
                      margin=dict(l=0, r=0, t=40, b=0), xaxis_title="repairs made", yaxis_title="tasks",
                      xaxis_type="category", legend_title_text="")
    fig.update_yaxes(**count_ticks(float((funnel[list(VERIFIED)].sum(axis=1)).max()) if len(funnel) else 0))
    return clear_of_toolbar(fig)
