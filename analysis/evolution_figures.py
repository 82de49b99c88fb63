"""Figures of the Evolution page and the evolution notebook (plotly), built from the frames of
analysis/evolution.py. Every rate axis names the agent config the rates are of, so noisy-oracle's
read "simulated, not a model" wherever they are shown."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.evolution import OPERATOR_COLORS, AgentConfig, LineageTree, rate_text
from analysis.figures import clear_of_toolbar
from pipeline.evolve.models import OPERATORS

_LEGEND = dict(orientation="h", y=1.02, yanchor="bottom", x=0, title_text="")
RATE_SCALE = "RdYlBu"        # r = 0 red (nothing passes) … r = 1 blue (everything does)
NO_RATE = "#bdbdbd"
_SYMBOL = {"no variant": "x", "failed": "x", "rejected": "circle-open"}


def rate_axis(config: AgentConfig) -> str:
    return f"pass rate r · {config.label}"


def _rates_of(config: AgentConfig) -> dict:
    """A figure title naming whose rates a vertical axis shows (too long for the axis itself)."""
    return dict(text=f"pass rates of {config.label}", font=dict(size=13), x=0)


def lineage_tree_figure(tree: LineageTree, config: AgentConfig, highlight: str | None = None) -> go.Figure:
    """The root left, each generation a column to its right; an edge per variant tried, coloured by
    its operator; nodes coloured by r (grey: no rate — not made, rejected or not rolled out yet),
    labelled with the lineage mark and r, the change on hover; `highlight` (a task id) ringed."""
    nodes = tree.nodes.set_index("task_id")
    fig = go.Figure()
    for op in OPERATORS:
        xs: list = []
        ys: list = []
        for parent, child in tree.edges:
            if nodes.at[child, "operator"] == op:
                xs += [nodes.at[parent, "x"], nodes.at[child, "x"], None]
                ys += [nodes.at[parent, "y"], nodes.at[child, "y"], None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=op, hoverinfo="skip",
                                     line=dict(color=OPERATOR_COLORS[op], width=2)))
    df = tree.nodes
    for part, rated in ((df[df["r"].notna()], True), (df[df["r"].isna()], False)):
        if part.empty:
            continue
        hover = [f"<b>{t}</b><br>{op or 'original'} · {out}<br>r = {rate_text(r)} over {n} rollout(s)<br>{ch}"
                 for t, op, out, r, n, ch in zip(part["task_id"], part["operator"], part["outcome"], part["r"],
                                                 part["rollouts"], part["change"])]
        marker = dict(size=22, line=dict(width=[4 if t == highlight else 1 for t in part["task_id"]],
                                         color=["#000" if t == highlight else "#444" for t in part["task_id"]]),
                      symbol=[_SYMBOL.get(o, "circle") for o in part["outcome"]])
        marker |= (dict(color=part["r"], cmin=0, cmax=1, colorscale=RATE_SCALE, showscale=True,
                        colorbar=dict(title=dict(text="r"), len=0.8)) if rated else dict(color=NO_RATE))
        fig.add_trace(go.Scatter(
            x=part["x"], y=part["y"], mode="markers+text", textposition="top center", hovertext=hover,
            text=[f"{m} · r={rate_text(r)}" for m, r in zip(part["mark"], part["r"])], hoverinfo="text",
            name="rated" if rated else "no rate", showlegend=False, customdata=part["task_id"], marker=marker))
    leaves = int((-df["y"]).max()) + 1 if len(df) else 1
    depth = int(df["x"].max()) if len(df) else 0
    fig.update_layout(height=max(260, 80 * leaves + 120), legend=_LEGEND, margin=dict(l=0, r=0, t=10, b=0),
                      xaxis=dict(tickvals=list(range(depth + 1)), ticktext=["original"] +
                                 [f"generation {g}" for g in range(1, depth + 1)], range=[-0.4, depth + 0.6],
                                 showgrid=False, zeroline=False, title=""),
                      yaxis=dict(visible=False, range=[-leaves + 0.4, 0.8]), plot_bgcolor="white",
                      title=dict(text=f"{tree.root} · {rate_axis(config)}", font=dict(size=13), x=0))
    return clear_of_toolbar(fig)


def before_after_figure(summary: pd.DataFrame, config: AgentConfig) -> go.Figure:
    """Per operator, the mean r of the parents → the mean r of their variants (over the pairs with
    both rates): a dumbbell from the grey 'before' dot to the operator's 'after' arrow head."""
    fig = go.Figure()
    both = summary[summary["rated"] > 0]
    for row in both.itertuples():
        fig.add_trace(go.Scatter(x=[row.r_before, row.r_after], y=[row.operator] * 2, mode="lines+markers",
                                 name=row.operator, showlegend=False,
                                 line=dict(color=OPERATOR_COLORS[row.operator], width=4),
                                 marker=dict(size=[12, 16], symbol=["circle", "triangle-right" if row.delta >= 0
                                                                    else "triangle-left"],
                                             color=["#9e9e9e", OPERATOR_COLORS[row.operator]]),
                                 hovertemplate=f"{row.operator}: %{{x:.2f}}<extra>n = {row.rated}</extra>"))
        fig.add_annotation(x=max(row.r_before, row.r_after), y=row.operator, xshift=14, xanchor="left",
                           showarrow=False, text=f"{row.r_before:.2f} → {row.r_after:.2f} (n = {row.rated}; "
                                                 f"SETA: {row.expected})")
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="parents (before)",
                             marker=dict(size=12, color="#9e9e9e")))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="variants (after)",
                             marker=dict(size=14, symbol="triangle-right", color="#555")))
    fig.update_layout(height=max(220, 70 * max(1, len(both)) + 120), legend=_LEGEND,
                      margin=dict(l=0, r=0, t=10, b=0),
                      xaxis=dict(title=rate_axis(config), range=[-0.05, 1.6], tickvals=[0, 0.25, 0.5, 0.75, 1]),
                      yaxis=dict(title="", categoryorder="array", autorange="reversed",
                                 categoryarray=[op for op in OPERATORS if op in set(both["operator"])]))
    fig.add_vline(x=0.5, line_dash="dot", line_color="#999")   # SETA's harder / context-switch boundary
    return clear_of_toolbar(fig)


def productive_share_figure(share: pd.DataFrame, config: AgentConfig) -> go.Figure:
    """Per round, the share of its tasks in the productive zone (0 < r < 1), with the counts."""
    x = [("round 0 (originals)" if r == 0 else f"round {r}") for r in share["round"]]
    text = [f"{p}/{n}" + (f" ({u} without rollouts)" if u else "")
            for p, n, u in zip(share["productive"], share["tasks"], share["unrated"])]
    fig = go.Figure(go.Bar(x=x, y=share["share"].fillna(0.0), text=text, textposition="outside",
                           marker_color="#fc8d59", hovertemplate="%{x}: %{y:.0%} productive<extra></extra>"))
    fig.update_layout(height=340, margin=dict(l=0, r=0, t=10, b=0), showlegend=False,
                      yaxis=dict(title="share in 0 < r < 1", tickformat=".0%", range=[0, 1.15]),
                      xaxis=dict(title="", type="category"), title=_rates_of(config))
    return clear_of_toolbar(fig)


def rates_by_round_figure(rounds: pd.DataFrame, config: AgentConfig) -> go.Figure:
    """Mean r per round and operator: the variants' (solid) beside their parents' (dotted)."""
    fig = go.Figure()
    for op in OPERATORS:
        mine = rounds[rounds["operator"] == op]
        if mine.empty:
            continue
        color = OPERATOR_COLORS[op]
        fig.add_trace(go.Scatter(x=mine["round"], y=mine["r_after"], mode="lines+markers", name=f"{op}: variants",
                                 line=dict(color=color), customdata=np.stack([mine["rated"]], axis=-1),
                                 hovertemplate="round %{x}: r = %{y:.2f} (n = %{customdata[0]})<extra>" + op +
                                               "</extra>"))
        fig.add_trace(go.Scatter(x=mine["round"], y=mine["r_before"], mode="lines+markers", name=f"{op}: parents",
                                 line=dict(color=color, dash="dot"), marker=dict(symbol="circle-open"),
                                 hovertemplate="round %{x}: parents' r = %{y:.2f}<extra>" + op + "</extra>"))
    fig.update_layout(height=360, legend=_LEGEND, margin=dict(l=0, r=0, t=10, b=0), title=_rates_of(config),
                      xaxis=dict(title="round", dtick=1), yaxis=dict(title="pass rate r", range=[-0.05, 1.05]))
    return clear_of_toolbar(fig)
