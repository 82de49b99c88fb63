"""Plotly figure builders shared by pages and notebooks."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

STATUS_COLORS = {"accepted": "#2e7d32", "pending": "#f9a825", "rejected": "#c62828"}

# Plotly's toolbar is drawn over the figure's top right corner while the mouse is on it; a
# legend there (beside the plot, or in a row above it) must start below it.
TOOLBAR_PX = 32
LEGEND_ROW_PX = 28


def clear_of_toolbar(fig: go.Figure) -> go.Figure:
    """Give the figure a top margin that keeps its legend's first entry clear of the toolbar."""
    legend = fig.layout.legend
    above = legend.orientation == "h" and legend.y is not None and legend.y >= 1
    need = TOOLBAR_PX + (LEGEND_ROW_PX if above else 0)
    fig.update_layout(margin_t=max(need, fig.layout.margin.t or 0))
    return fig


def count_ticks(vmax: float, small: int = 10) -> dict:
    """Axis (or colour bar) settings for a count: whole-number labels, and a tick per unit while
    the counts are small, where plotly would otherwise tick 0.5 or 1.2."""
    ticks: dict = {"tickformat": ",d"}
    if vmax <= small:
        ticks.update(tick0=0, dtick=1)
    return ticks


def legend_below(fig: go.Figure, entries: int, title: str = "") -> go.Figure:
    """Put the legend under the plot, its entries in rows, and make the figure taller by what they
    take: beside a plot in a narrow column, long entries (model names) squeezed the plot itself."""
    row = 22
    fig.update_layout(height=(fig.layout.height or 450) + row * entries + 20,
                      margin_b=row * entries + 50,
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0,
                                  title=dict(text=title, side="top")))
    return fig


def skills_by_category(counts: pd.DataFrame) -> go.Figure:
    """Horizontal stacked bars: skills per category, split by curation status."""
    fig = px.bar(counts, x="skills", y="category", color="status", orientation="h",
                 color_discrete_map=STATUS_COLORS, category_orders={"status": list(STATUS_COLORS)})
    fig.update_layout(height=max(260, 26 * counts["category"].nunique() + 80), margin=dict(l=0, r=0, t=10, b=0),
                      legend_title_text="", yaxis_title="", xaxis_title="skills",
                      yaxis=dict(autorange="reversed"))
    fig.update_xaxes(**count_ticks(float(counts.groupby("category")["skills"].sum().max()) if len(counts) else 0))
    return clear_of_toolbar(fig)


def flagged_rules(counts: pd.DataFrame) -> go.Figure:
    fig = px.bar(counts, x="skills", y="rule", orientation="h", color_discrete_sequence=["#c62828"])
    fig.update_layout(height=max(200, 26 * len(counts) + 60), margin=dict(l=0, r=0, t=10, b=0),
                      yaxis_title="", yaxis=dict(autorange="reversed"))
    fig.update_xaxes(**count_ticks(float(counts["skills"].max()) if len(counts) else 0))
    return fig
