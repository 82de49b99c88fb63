"""Pure summaries and figures of the LLM call log (calls, tokens, cost, cache, errors), and of
synthesis: cost per task and per batch with its accepted tasks.

LLM synthesis calls carry the task id as `item` and the run id as `batch_id`, so cost per
task, per stage and per batch come from the call log; task names and verdicts come from the
tasks frame (`workbench.store.tasks.tasks_frame`: task_id, name, verdict), joined here.
"""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.figures import clear_of_toolbar, count_ticks, legend_below
from pipeline.synth.llm import models as synth_stages
from workbench import double_rule

# Every stage of LLM synthesis (llm_calls.stage), in the order a task goes through them.
SYNTH_STAGES: tuple[str, ...] = (synth_stages.PLAN, synth_stages.ENVIRONMENT, synth_stages.INSTRUCTION,
                                 synth_stages.SOLUTION, synth_stages.TESTS, *synth_stages.REPAIR.values(),
                                 synth_stages.JUDGE)
NOT_STORED = "(no task stored)"   # a path whose synthesis failed before its task was saved


def totals(calls: pd.DataFrame) -> dict:
    if calls.empty:
        return {"calls": 0, "http_calls": 0, "cache_hit_rate": 0.0, "tokens": 0, "cost_usd": 0.0, "errors": 0}
    http = calls[~calls["cache_hit"]]
    return {"calls": int(len(calls)), "http_calls": int(len(http)),
            "cache_hit_rate": float(calls["cache_hit"].mean()),
            "tokens": int(calls["prompt_tokens"].sum() + calls["completion_tokens"].sum()),
            "cost_usd": float(calls["cost_usd"].sum()), "errors": int(calls["error_class"].notna().sum())}


def is_double(calls: pd.DataFrame) -> pd.Series:
    """Per call: its model is a test double (workbench.double_rule, the one rule)."""
    models = calls["model"] if "model" in calls else pd.Series("", index=calls.index)
    return models.map(double_rule.is_double_model).astype(bool)


# The headline's groups: a double's calls and cost are never added to a model's.
MODELS_GROUP = "LLM models"
DOUBLES_GROUP = f"Test doubles (scripted replays, {double_rule.TAG}s, not LLMs): costs at a made-up price"
DOUBLE_SUFFIX = f" · {double_rule.TAG}s"


def headline(calls: pd.DataFrame) -> list[dict]:
    """The page's headline, one group per kind of caller: {group, suffix, totals}. Real models'
    calls and the test doubles' are counted apart; a group with no calls is left out (the models'
    group stays, with zeros, when there are none at all). `suffix` goes after every metric label
    of the doubles' group, so no number of theirs reads as a model's."""
    double = is_double(calls) if len(calls) else pd.Series(dtype=bool)
    groups = [{"group": MODELS_GROUP, "suffix": "", "totals": totals(calls[~double] if len(calls) else calls)}]
    if len(calls) and double.any():
        groups.append({"group": DOUBLES_GROUP, "suffix": DOUBLE_SUFFIX, "totals": totals(calls[double])})
        if not (~double).any():
            groups = groups[1:]
    return groups


def by_stage_model(calls: pd.DataFrame) -> pd.DataFrame:
    """Per stage and model: calls, tokens, cost, latency; `model` is labelled by the double rule
    (a test double says so) and `test_double` says it as a column."""
    if calls.empty:
        return pd.DataFrame(columns=["stage", "model", "test_double", "calls", "cache_hits", "prompt_tokens",
                                     "completion_tokens", "cost_usd", "p50_latency_ms"])
    g = calls.groupby(["stage", "model"])
    out = g.agg(calls=("stage", "size"), cache_hits=("cache_hit", "sum"), prompt_tokens=("prompt_tokens", "sum"),
                completion_tokens=("completion_tokens", "sum"), cost_usd=("cost_usd", "sum")).reset_index()
    lat = calls[~calls["cache_hit"]].groupby(["stage", "model"])["latency_ms"].median().rename("p50_latency_ms")
    out = out.merge(lat.reset_index(), on=["stage", "model"], how="left")
    out.insert(2, "test_double", out["model"].map(double_rule.is_double_model).astype(bool))
    out["model"] = out["model"].map(double_rule.model_label)
    return out


def by_batch(calls: pd.DataFrame, tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per batch: its model(s) (a test double labelled so, and `test_double` True when any
    of its calls was one's), when it ran, its calls, cache hits, tokens and cost. With `tasks`,
    also `accepted` (the tasks its synthesis calls worked on that were accepted; a synthesis
    batch is its run) and `cost_per_accepted` (the batch's cost over them; NaN for none)."""
    cols = ["batch_id", "model", "test_double", "started", "calls", "cache_hits", "tokens", "cost_usd", "errors"]
    if tasks is not None:
        cols += ["accepted", "cost_per_accepted"]
    if calls.empty:
        return pd.DataFrame(columns=cols)
    c = calls.assign(tokens=calls["prompt_tokens"] + calls["completion_tokens"],
                     error=calls["error_class"].notna(), batch_id=calls["batch_id"].fillna("(none)"),
                     double=is_double(calls))
    out = c.groupby("batch_id").agg(started=("created_at", "min"), calls=("stage", "size"),
                                    cache_hits=("cache_hit", "sum"), tokens=("tokens", "sum"),
                                    cost_usd=("cost_usd", "sum"), errors=("error", "sum"),
                                    model=("model", lambda m: double_rule.models_label(sorted(set(m)))),
                                    test_double=("double", "any")).reset_index()
    if tasks is not None:
        accepted_ids = set(tasks.loc[tasks["verdict"] == "accepted", "task_id"]) if len(tasks) else set()
        synth = c[c["stage"].isin(SYNTH_STAGES) & c["item"].isin(accepted_ids)]
        accepted = synth.groupby("batch_id")["item"].nunique().rename("accepted")
        out = out.merge(accepted.reset_index(), on="batch_id", how="left")
        out["accepted"] = out["accepted"].fillna(0).astype(int)
        out["cost_per_accepted"] = out["cost_usd"] / out["accepted"].where(out["accepted"] > 0)
    return out.sort_values("started", ascending=False).reset_index(drop=True)[cols]


def synthesis_calls(calls: pd.DataFrame) -> pd.DataFrame:
    """The calls of LLM synthesis stages (planner, constructor, repairs, task judge)."""
    return calls[calls["stage"].isin(SYNTH_STAGES)] if len(calls) else calls


def _task_labels(items: pd.Series, tasks: pd.DataFrame) -> pd.DataFrame:
    """task_id, name, verdict and a short unique label per synthesis item."""
    names = dict(zip(tasks["task_id"], tasks["name"])) if len(tasks) else {}
    verdicts = dict(zip(tasks["task_id"], tasks["verdict"])) if len(tasks) else {}
    out = pd.DataFrame({"task_id": items.drop_duplicates().tolist()})
    out["name"] = [names.get(t, NOT_STORED) for t in out["task_id"]]
    out["verdict"] = [verdicts.get(t, "no task") for t in out["task_id"]]
    # names repeat across runs of one path (and NOT_STORED repeats by design): the id tells them apart
    out["task"] = out["name"] + " · " + out["task_id"].astype(str).str[:8]
    return out


def by_task(calls: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """One row per task that synthesis calls worked on (item = task id): its name and verdict
    from `tasks`, its model(s) (a test double labelled so), calls, cache hits, tokens and cost; the
    most expensive first."""
    cols = ["task_id", "name", "verdict", "model", "calls", "cache_hits", "prompt_tokens", "completion_tokens",
            "tokens", "cost_usd"]
    c = synthesis_calls(calls)
    c = c[c["item"].notna()] if len(c) else c
    if c.empty:
        return pd.DataFrame(columns=cols)
    out = c.groupby("item").agg(calls=("stage", "size"), cache_hits=("cache_hit", "sum"),
                                prompt_tokens=("prompt_tokens", "sum"),
                                completion_tokens=("completion_tokens", "sum"),
                                cost_usd=("cost_usd", "sum"),
                                model=("model", lambda m: double_rule.models_label(sorted(set(m))))
                                ).rename_axis("task_id").reset_index()
    out["tokens"] = out["prompt_tokens"] + out["completion_tokens"]
    out = out.merge(_task_labels(c["item"], tasks)[["task_id", "name", "verdict"]], on="task_id", how="left")
    return out.sort_values(["cost_usd", "task_id"], ascending=[False, True]).reset_index(drop=True)[cols]


def task_stage_costs(calls: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """Long form: one row per (task, stage) with its calls, tokens and cost, for the figure."""
    cols = ["task_id", "task", "stage", "calls", "tokens", "cost_usd"]
    c = synthesis_calls(calls)
    c = c[c["item"].notna()] if len(c) else c
    if c.empty:
        return pd.DataFrame(columns=cols)
    c = c.assign(tokens=c["prompt_tokens"] + c["completion_tokens"])
    out = c.groupby(["item", "stage"]).agg(calls=("stage", "size"), tokens=("tokens", "sum"),
                                           cost_usd=("cost_usd", "sum")).reset_index()
    out = out.rename(columns={"item": "task_id"}).merge(_task_labels(c["item"], tasks)[["task_id", "task"]],
                                                        on="task_id")
    doubled = set(c.loc[is_double(c), "item"])       # a test double's task says so on its bar
    out["task"] = [f"{t} · {double_rule.TAG}" if i in doubled else t for i, t in zip(out["task_id"], out["task"])]
    return out[cols]


def task_cost_figure(stage_costs: pd.DataFrame, top: int = 20) -> go.Figure:
    """Horizontal bars: the `top` most expensive tasks, each split by synthesis stage."""
    totals_ = stage_costs.groupby("task")["cost_usd"].sum().sort_values(ascending=False).head(top)
    shown = stage_costs[stage_costs["task"].isin(totals_.index)]
    stages = [s for s in SYNTH_STAGES if s in set(shown["stage"])]
    fig = px.bar(shown, x="cost_usd", y="task", color="stage", orientation="h", hover_data=["calls", "tokens"],
                 category_orders={"task": list(totals_.index), "stage": stages})
    fig.update_layout(height=max(220, 28 * len(totals_) + 100), margin=dict(l=0, r=0, t=10, b=0),
                      xaxis_title="cost (USD)", yaxis_title="", legend_title_text="stage")
    return clear_of_toolbar(fig)


def error_classes(calls: pd.DataFrame) -> pd.DataFrame:
    errs = calls.dropna(subset=["error_class"]) if not calls.empty else calls
    if errs.empty:
        return pd.DataFrame(columns=["error_class", "calls"])
    return errs["error_class"].value_counts().rename_axis("error_class").rename("calls").reset_index()


def over_time(calls: pd.DataFrame, freq: str = "1min") -> pd.DataFrame:
    """Calls, cost and cache hits per time bucket."""
    if calls.empty:
        return pd.DataFrame(columns=["time", "calls", "cost_usd", "cache_hits"])
    t = calls.set_index(pd.to_datetime(calls["created_at"])).sort_index()
    out = t.resample(freq).agg({"stage": "size", "cost_usd": "sum", "cache_hit": "sum"})
    return out.rename(columns={"stage": "calls", "cache_hit": "cache_hits"}).rename_axis("time").reset_index()


def cost_figure(summary: pd.DataFrame) -> go.Figure:
    """Cost per stage, split by model; the models' legend under the plot (beside it, in the page's
    narrow column, long model names squeezed the plot to ~90 px)."""
    fig = px.bar(summary, x="cost_usd", y="stage", color="model", orientation="h")
    fig.update_layout(height=max(220, 40 * summary["stage"].nunique() + 100), margin=dict(l=0, r=10, t=10, b=0),
                      xaxis_title="cost (USD)", yaxis_title="")
    return clear_of_toolbar(legend_below(fig, summary["model"].nunique(), "model"))


def timeline_figure(series: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    fig.add_bar(x=series["time"], y=series["calls"] - series["cache_hits"], name="HTTP calls")
    fig.add_bar(x=series["time"], y=series["cache_hits"], name="cache hits")
    fig.add_scatter(x=series["time"], y=series["cost_usd"].cumsum(), name="cumulative cost (USD)", yaxis="y2")
    # the legend goes in a row above the plot: at plotly's default place, right of the plot, it
    # covered the labels of the right-hand cost axis (its top ticks read "0")
    fig.update_layout(barmode="stack", height=320, margin=dict(l=0, r=0, t=10, b=0),
                      yaxis=dict(title="calls"), yaxis2=dict(title="USD", overlaying="y", side="right"),
                      legend=dict(orientation="h", x=0, xanchor="left", y=1.02, yanchor="bottom"))
    return clear_of_toolbar(fig)


def errors_figure(errors: pd.DataFrame) -> go.Figure:
    fig = px.bar(errors, x="calls", y="error_class", orientation="h", color_discrete_sequence=["#c62828"])
    fig.update_layout(height=max(180, 30 * len(errors) + 60), margin=dict(l=0, r=0, t=10, b=0), yaxis_title="")
    fig.update_xaxes(**count_ticks(float(errors["calls"].max()) if len(errors) else 0))
    return fig
