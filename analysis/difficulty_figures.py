"""Figures of the Difficulty page (plotly), built from the frames of analysis/difficulty.py."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.difficulty import BAND_COLORS, BANDS
from analysis.figures import clear_of_toolbar, count_ticks

_LEGEND = dict(orientation="h", y=1.02, yanchor="bottom", x=0, title_text="")


def bands_by_agent_figure(counts: pd.DataFrame) -> go.Figure:
    """Tasks per band, one stacked bar per agent config (analysis.difficulty.band_counts)."""
    fig = px.bar(counts, x="tasks", y="agent_label", color="band", orientation="h",
                 color_discrete_map=BAND_COLORS, category_orders={"band": list(BANDS)})
    fig.update_layout(height=max(220, 48 * counts["agent_label"].nunique() + 110), legend=_LEGEND,
                      margin=dict(l=0, r=0, t=10, b=0), yaxis_title="", xaxis_title="tasks",
                      yaxis=dict(autorange="reversed"))
    fig.update_xaxes(**count_ticks(float(counts.groupby("agent_label")["tasks"].sum().max()) if len(counts) else 0))
    return clear_of_toolbar(fig)


def distribution_figure(dist: pd.DataFrame, dimension: str) -> go.Figure:
    """Tasks per value of `dimension` and band (analysis.difficulty.band_distribution): stacked
    bars, one panel per agent config with its label above it, the same values on every x axis."""
    labels = list(dict.fromkeys(dist["agent_label"]))
    # path lengths in number order, names in letter order ("unknown" among them)
    values = [str(v) for v in sorted(set(dist["value"]), key=lambda v: (isinstance(v, str), v))]
    fig = make_subplots(rows=max(1, len(labels)), cols=1, shared_xaxes=True, subplot_titles=labels or None,
                        vertical_spacing=min(0.12, 0.5 / max(1, len(labels))))
    for row, label in enumerate(labels, 1):
        mine = dist[dist["agent_label"] == label]
        for band in BANDS:
            part = mine[mine["band"].astype(str) == band]
            if part.empty:
                continue
            fig.add_trace(go.Bar(x=part["value"].astype(str), y=part["tasks"], name=band, legendgroup=band,
                                 marker_color=BAND_COLORS[band], showlegend=band not in _shown(fig),
                                 hovertemplate=f"%{{x}}: %{{y}} {band}<extra>{label}</extra>"), row=row, col=1)
    fig.update_annotations(x=0, xanchor="left", font=dict(size=12))
    fig.update_layout(barmode="stack", height=max(260, 200 * len(labels) + 100), legend=_LEGEND,
                      legend_traceorder="normal", margin=dict(l=0, r=0, t=10, b=0))
    fig.update_yaxes(title_text="tasks", **count_ticks(float(dist.groupby(["agent_label", "value"])["tasks"].sum()
                                                               .max()) if len(dist) else 0))
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=values)
    fig.update_xaxes(title_text=dimension, row=max(1, len(labels)), col=1)
    return clear_of_toolbar(fig)


def _shown(fig: go.Figure) -> set[str]:
    """The bands that already have a legend entry."""
    return {t.name for t in fig.data if t.showlegend is not False}


def check_vs_task_figure(rates: pd.DataFrame) -> go.Figure:
    """Per agent config: the share of individual tests that passed beside the share of rollouts that
    passed whole (FACET: 89.4% of checks, 20.9% of tasks) — the gap is what near-misses cost."""
    fig = go.Figure()
    for column, name, color in (("check_rate", "tests passed (check level)", "#91bfdb"),
                                ("task_rate", "rollouts passed whole (task level)", "#d7301f")):
        counts = (rates["checks_passed"].astype(str) + "/" + rates["checks_run"].astype(str)
                  if column == "check_rate" else
                  rates["rollouts_passed"].astype(str) + "/" + rates["rollouts"].astype(str))
        fig.add_trace(go.Bar(name=name, y=rates["agent_label"], x=rates[column], orientation="h",
                             marker_color=color, text=[f"{v:.0%} ({n})" if pd.notna(v) else "no tests"
                                                       for v, n in zip(rates[column], counts)],
                             # beside the bar, never in it: a 0% bar has no length, and its text inside
                             # was dropped, so 0 read as missing
                             textposition="outside", cliponaxis=False,
                             hovertemplate="%{y}: %{x:.1%}<extra>" + name + "</extra>"))
    fig.update_layout(barmode="group", height=max(220, 70 * len(rates) + 110), legend=_LEGEND,
                      margin=dict(l=0, r=0, t=10, b=0), xaxis=dict(title="pass rate", tickformat=".0%",
                                                                    range=[0, 1.15]),
                      yaxis=dict(autorange="reversed", title=""))
    return clear_of_toolbar(fig)
