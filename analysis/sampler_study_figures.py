"""Plotly builders for the sampler study (:mod:`analysis.sampler_study`): growth curves and
the ratios next to the reported figures."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.figures import clear_of_toolbar
from analysis.sampler_study import SKILLSYNTH_VS_SINGLE_SKILL, TARGET_VS_RANDOM_WALK

# one colour per sampler, the same in every figure (the coverage-aware one stands out)
SAMPLER_COLORS = {"inverse-frequency": "#1565c0", "random-walk": "#757575", "single-skill": "#bdbdbd",
                  "random-multi-skill": "#8d6e63", "coverage-aware": "#2e7d32"}


def _legend_below(fig: go.Figure) -> go.Figure:
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.18, x=0), legend_title_text="",
                      margin=dict(l=0, r=0, t=10, b=0))
    return clear_of_toolbar(fig)


def growth_curves(growth: pd.DataFrame) -> go.Figure:
    """Unique (scenario, skill) pairs after each path, one line per sampler."""
    fig = px.line(growth, x="paths", y="unique_pairs", color="sampler", color_discrete_map=SAMPLER_COLORS)
    fig.update_layout(height=380, xaxis_title="paths sampled", yaxis_title="unique (scenario, skill) pairs")
    return _legend_below(fig)


def ratio_growth(growth: pd.DataFrame) -> go.Figure:
    """Unique pairs over the random walk's at the same number of paths, with the issue's
    1.3x target as a line."""
    frame = growth[growth["sampler"] != "random-walk"]
    fig = px.line(frame, x="paths", y="vs_random_walk", color="sampler", color_discrete_map=SAMPLER_COLORS)
    fig.add_hline(y=TARGET_VS_RANDOM_WALK, line_dash="dash", line_color="#2e7d32",
                  annotation_text=f"target {TARGET_VS_RANDOM_WALK:.1f}x", annotation_position="top left")
    fig.add_hline(y=1.0, line_color="#757575", line_width=1)
    fig.update_layout(height=380, xaxis_title="paths sampled", yaxis_title="unique pairs vs random walk")
    return _legend_below(fig)


def ratio_bars(table: pd.DataFrame) -> go.Figure:
    """Per sampler: unique pairs vs random walk and vs single-skill (equal paths, equal
    steps), next to SkillSynth's reported +31% over single-skill and the 1.3x target."""
    cols = {"vs_random_walk": "vs random walk (equal paths)",
            "vs_random_walk_equal_steps": "vs random walk (equal steps)", "vs_single_skill_equal_steps":
            "vs single-skill (equal steps)", "vs_single_skill": "vs single-skill (equal paths)"}
    long = (table[list(cols)].rename(columns=cols).reset_index()
            .melt(id_vars="sampler", var_name="ratio", value_name="x"))
    fig = px.bar(long, x="sampler", y="x", color="ratio", barmode="group", text_auto=".2f",
                 color_discrete_sequence=["#2e7d32", "#a5d6a7", "#1565c0", "#90caf9"])
    fig.add_hline(y=SKILLSYNTH_VS_SINGLE_SKILL, line_dash="dot", line_color="#1565c0",
                  annotation_text="SkillSynth: +31% vs single-skill", annotation_position="top right")
    fig.add_hline(y=TARGET_VS_RANDOM_WALK, line_dash="dash", line_color="#2e7d32",
                  annotation_text=f"target {TARGET_VS_RANDOM_WALK:.1f}x vs random walk", annotation_position="top left")
    fig.update_layout(height=420, xaxis_title="", yaxis_title="unique pairs ratio")
    return _legend_below(fig)


def entropy_bars(table: pd.DataFrame) -> go.Figure:
    """Normalised entropy of the pair distribution per sampler (1 = perfectly even)."""
    frame = table.reset_index()
    fig = px.bar(frame, x="sampler", y="normalized_entropy", color="sampler", color_discrete_map=SAMPLER_COLORS,
                 text_auto=".3f")
    fig.update_layout(height=320, xaxis_title="", yaxis_title="normalised entropy", showlegend=False,
                      yaxis_range=[0, 1])
    return _legend_below(fig)
