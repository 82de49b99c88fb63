"""Verifier strength (pipeline/verify/strength.py, stored by workbench/store/strength.py) as the
pages and notebooks show it: one task's commands as a table, a batch's distribution as a figure."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

TARGET = 0.95          # issue 27.3: the tests catch at least 95% of the effective commands
COMMAND_COLUMNS = ["command", "verdict", "failing tests", "state changed"]
HOW_TO_MEASURE = ("Measured on demand (each solution command left out once, one trial each): "
                  "`workbench tasks strength{scope}`.")


def command_verdict(row: Mapping) -> str:
    caught = bool(row.get("caught"))
    effect = row.get("effect")
    if caught:
        return "caught"
    if effect:
        return "untested"
    return "no effect" if effect is False else "state unread"


def command_table(report: Mapping | None) -> pd.DataFrame:
    """One row per solution command: untested first (work no test checks), then no effect, then caught."""
    rows = [{"command": c.get("command", ""), "verdict": command_verdict(c),
             "failing tests": ", ".join(c.get("failing_tests") or []),
             "state changed": ", ".join(c.get("changed") or [])} for c in (report or {}).get("commands") or []]
    order = {"untested": 0, "state unread": 1, "no effect": 2, "caught": 3}
    df = pd.DataFrame(rows, columns=COMMAND_COLUMNS)
    return df.sort_values("verdict", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def summary(report: Mapping | None) -> str:
    if not report:
        return "Not measured."
    if report.get("strength") is None:
        return report.get("problem") or "No command of the solution has an effect a test could check."
    table = command_table(report)
    untested, noise = (int((table["verdict"] == v).sum()) for v in ("untested", "no effect"))
    return (f"{report['strength']:.0%} of the effective solution commands are caught by a test "
            f"({report['caught']} of {report['effective']}); {untested} untested, {noise} without effect.")


def strength_figure(frame: pd.DataFrame) -> go.Figure:
    """Histogram of the tasks' strength (0-100%), the target marked."""
    values = frame["strength"].dropna() * 100 if len(frame) else pd.Series(dtype=float)
    fig = go.Figure(go.Histogram(x=values, xbins=dict(start=0, end=100.01, size=5), marker_color="#4c78a8",
                                 hovertemplate="%{x}%: %{y} task(s)<extra></extra>"))
    fig.add_vline(x=TARGET * 100, line_dash="dash", line_color="#c62828",
                  annotation_text=f"target {TARGET:.0%}", annotation_position="top left")
    below = int((frame["strength"].dropna() < TARGET).sum()) if len(frame) else 0
    fig.update_layout(title=f"Verifier strength of {len(values)} task(s): {below} below the target",
                      xaxis=dict(title="effective solution commands a test catches (%)", range=[0, 101]),
                      yaxis=dict(title="tasks", rangemode="tozero", tickformat="d"), height=300,
                      margin=dict(l=0, r=0, t=40, b=0), bargap=0.05)
    return fig
