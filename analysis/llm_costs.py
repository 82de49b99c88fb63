"""Pure summaries and figures of the LLM call log (calls, tokens, cost, cache, errors)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.figures import clear_of_toolbar


def totals(calls: pd.DataFrame) -> dict:
    if calls.empty:
        return {"calls": 0, "http_calls": 0, "cache_hit_rate": 0.0, "tokens": 0, "cost_usd": 0.0, "errors": 0}
    http = calls[~calls["cache_hit"]]
    return {"calls": int(len(calls)), "http_calls": int(len(http)),
            "cache_hit_rate": float(calls["cache_hit"].mean()),
            "tokens": int(calls["prompt_tokens"].sum() + calls["completion_tokens"].sum()),
            "cost_usd": float(calls["cost_usd"].sum()), "errors": int(calls["error_class"].notna().sum())}


def by_stage_model(calls: pd.DataFrame) -> pd.DataFrame:
    if calls.empty:
        return pd.DataFrame(columns=["stage", "model", "calls", "cache_hits", "prompt_tokens",
                                     "completion_tokens", "cost_usd", "p50_latency_ms"])
    g = calls.groupby(["stage", "model"])
    out = g.agg(calls=("stage", "size"), cache_hits=("cache_hit", "sum"), prompt_tokens=("prompt_tokens", "sum"),
                completion_tokens=("completion_tokens", "sum"), cost_usd=("cost_usd", "sum")).reset_index()
    lat = calls[~calls["cache_hit"]].groupby(["stage", "model"])["latency_ms"].median().rename("p50_latency_ms")
    return out.merge(lat.reset_index(), on=["stage", "model"], how="left")


def by_batch(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per batch: when it ran, its calls, cache hits, tokens and cost."""
    if calls.empty:
        return pd.DataFrame(columns=["batch_id", "started", "calls", "cache_hits", "tokens", "cost_usd", "errors"])
    c = calls.assign(tokens=calls["prompt_tokens"] + calls["completion_tokens"],
                     error=calls["error_class"].notna(), batch_id=calls["batch_id"].fillna("(none)"))
    out = c.groupby("batch_id").agg(started=("created_at", "min"), calls=("stage", "size"),
                                    cache_hits=("cache_hit", "sum"), tokens=("tokens", "sum"),
                                    cost_usd=("cost_usd", "sum"), errors=("error", "sum")).reset_index()
    return out.sort_values("started", ascending=False).reset_index(drop=True)


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
    fig = px.bar(summary, x="cost_usd", y="stage", color="model", orientation="h")
    fig.update_layout(height=max(220, 40 * summary["stage"].nunique() + 100), margin=dict(l=0, r=0, t=10, b=0),
                      xaxis_title="cost (USD)", yaxis_title="")
    return clear_of_toolbar(fig)


def timeline_figure(series: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    fig.add_bar(x=series["time"], y=series["calls"] - series["cache_hits"], name="HTTP calls")
    fig.add_bar(x=series["time"], y=series["cache_hits"], name="cache hits")
    fig.add_scatter(x=series["time"], y=series["cost_usd"].cumsum(), name="cumulative cost (USD)", yaxis="y2")
    fig.update_layout(barmode="stack", height=320, margin=dict(l=0, r=0, t=10, b=0),
                      yaxis=dict(title="calls"), yaxis2=dict(title="USD", overlaying="y", side="right"))
    return clear_of_toolbar(fig)


def errors_figure(errors: pd.DataFrame) -> go.Figure:
    fig = px.bar(errors, x="calls", y="error_class", orientation="h", color_discrete_sequence=["#c62828"])
    fig.update_layout(height=max(180, 30 * len(errors) + 60), margin=dict(l=0, r=0, t=10, b=0), yaxis_title="")
    return fig
