"""Plotly figure builders shared by pages and notebooks."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

STATUS_COLORS = {"accepted": "#2e7d32", "pending": "#f9a825", "rejected": "#c62828"}


def skills_by_category(counts: pd.DataFrame) -> go.Figure:
    """Horizontal stacked bars: skills per category, split by curation status."""
    fig = px.bar(counts, x="skills", y="category", color="status", orientation="h",
                 color_discrete_map=STATUS_COLORS, category_orders={"status": list(STATUS_COLORS)})
    fig.update_layout(height=max(260, 26 * counts["category"].nunique() + 80), margin=dict(l=0, r=0, t=10, b=0),
                      legend_title_text="", yaxis_title="", xaxis_title="skills",
                      yaxis=dict(autorange="reversed"))
    return fig


def flagged_rules(counts: pd.DataFrame) -> go.Figure:
    fig = px.bar(counts, x="skills", y="rule", orientation="h", color_discrete_sequence=["#c62828"])
    fig.update_layout(height=max(200, 26 * len(counts) + 60), margin=dict(l=0, r=0, t=10, b=0),
                      yaxis_title="", yaxis=dict(autorange="reversed"))
    return fig
