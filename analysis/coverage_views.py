"""Data shaping and figures for the Coverage page.

Labels for sample batches and the default pair to compare, (cluster × skill category)
visit heatmaps alone and side by side, per-batch coverage metrics and coverage growth
curves. Pure functions of DataFrames: nothing here reads the store or imports Streamlit,
so notebooks can use it too.

Coverage metrics over a ``path_steps`` frame count a step ``u --s--> v`` as the pair
(src_anchor, skill_id), the same definition as :mod:`analysis.coverage` uses over sampler
output; logarithms are natural (KL in nats).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.display import short, short_unique
from analysis.figures import clear_of_toolbar, count_ticks

HEATMAP_ROWS = 40

GONE = "(cluster gone since sampling)"


# --- sample batches -------------------------------------------------------------------------

def batch_label(row: Mapping | pd.Series) -> str:
    """"sampler · n paths · time" for a sample batch row."""
    at = row["created_at"]
    when = at.strftime("%Y-%m-%d %H:%M:%S") if isinstance(at, (datetime, pd.Timestamp)) else str(at)
    n = int(row["paths"]) if "paths" in row and pd.notna(row["paths"]) else int(row["n_paths"])
    return f"{row['sampler']} · {n} paths · {when}"


def batch_labels(batches: pd.DataFrame) -> dict[str, str]:
    labels = {r["batch_id"]: batch_label(r) for _, r in batches.iterrows()}
    counts = pd.Series(list(labels.values())).value_counts()
    return {b: (f"{lab} · {b[:6]}" if counts[lab] > 1 else lab) for b, lab in labels.items()}


def default_pair(batches: pd.DataFrame) -> tuple[str | None, str | None]:
    """The newest inverse-frequency and the newest random-walk batch (falling back to the
    newest batches of any sampler)."""
    if batches.empty:
        return None, None
    b = batches.sort_values("created_at", ascending=False)
    ids = b["batch_id"].tolist()

    def newest(sampler: str, other_than: str | None = None) -> str | None:
        hit = b[(b["sampler"] == sampler) & (b["batch_id"] != other_than)]
        return None if hit.empty else hit.iloc[0]["batch_id"]

    left = newest("inverse-frequency") or ids[0]
    right = newest("random-walk", left) or next((i for i in ids if i != left), left)
    return left, right


# --- heatmaps -------------------------------------------------------------------------------

def heatmap_matrix(cells: pd.DataFrame, top: int = HEATMAP_ROWS, rows: list[str] | None = None,
                   columns: list[str] | None = None) -> pd.DataFrame:
    """Visits pivoted to (cluster × skill category): the ``top`` clusters by visits (most
    visited first) unless ``rows`` fixes them; categories alphabetical unless ``columns``."""
    c = cells.assign(cluster=cells["cluster"].fillna(GONE))
    m = c.pivot_table(index="cluster", columns="category", values="visits", aggfunc="sum", fill_value=0)
    if rows is None:
        rows = m.sum(axis=1).sort_values(ascending=False, kind="stable").head(top).index.tolist()
    if columns is None:
        columns = sorted(m.columns)
    return m.reindex(index=rows, columns=columns, fill_value=0).astype(np.int64)


def heatmap_pair(cells_a: pd.DataFrame, cells_b: pd.DataFrame, top: int = HEATMAP_ROWS
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two batches' matrices over the same rows (top clusters by their summed visits) and
    the same categories, so that the two heatmaps compare cell by cell."""
    both = pd.concat([cells_a, cells_b], ignore_index=True)
    if both.empty:
        return heatmap_matrix(cells_a), heatmap_matrix(cells_b)
    joint = heatmap_matrix(both, top=top)
    rows, cols = joint.index.tolist(), joint.columns.tolist()
    return (heatmap_matrix(cells_a, rows=rows, columns=cols), heatmap_matrix(cells_b, rows=rows, columns=cols))


HEAT_SCALE = [[0.0, "#c6dbef"], [0.35, "#6baed6"], [0.7, "#2171b5"], [1.0, "#08306b"]]


def _heat_trace(matrix: pd.DataFrame, ylabels: list[str], zmax: float | None, **kw) -> go.Heatmap:
    # Zero visits are left blank, so that any visited cell shows (a 1 is not lost in a pale 0).
    z = matrix.astype(float).where(matrix > 0).to_numpy()
    full = np.array([[r] * matrix.shape[1] for r in matrix.index], dtype=object)
    return go.Heatmap(z=z, x=list(matrix.columns), y=ylabels, customdata=full, colorscale=HEAT_SCALE,
                      zmin=1, zmax=zmax if zmax is not None else max(float(np.nanmax(z, initial=1)), 1.0),
                      xgap=1, ygap=1, hoverongaps=False,
                      hovertemplate="%{customdata}<br>category %{x}<br>visits %{z}<extra></extra>", **kw)


def _heat_layout(fig: go.Figure, n_rows: int, title: bool) -> None:
    # the top margin clears the toolbar, which otherwise covers the top right cells and the colour
    # bar's title
    fig.update_layout(height=max(320, 19 * n_rows + 150), margin=dict(l=0, r=0, t=40 if title else 10, b=0),
                      plot_bgcolor="#ffffff")
    clear_of_toolbar(fig)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=11), showgrid=False)
    fig.update_xaxes(tickangle=-40, tickfont=dict(size=11), showgrid=False, side="bottom")


def coverage_heatmap(matrix: pd.DataFrame, title: str = "", zmax: float | None = None, label_len: int = 48,
                     show_scale: bool = True) -> go.Figure:
    """Visits per (cluster row × category column); blank cells were not visited."""
    trace = _heat_trace(matrix, short_unique(matrix.index, label_len), zmax, showscale=show_scale)
    trace.update(colorbar=dict(title="visits", thickness=12, **count_ticks(trace.zmax)))
    fig = go.Figure(trace)
    _heat_layout(fig, len(matrix), bool(title))
    if title:
        fig.update_layout(title=dict(text=title, font=dict(size=14)))
    return fig


def coverage_heatmap_pair(left: pd.DataFrame, right: pd.DataFrame, titles: tuple[str, str],
                          label_len: int = 48) -> go.Figure:
    """Two batches' matrices (same rows and columns, from :func:`heatmap_pair`) side by side in
    one figure: shared rows labelled once, one colour scale, panels of equal width."""
    from plotly.subplots import make_subplots
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=[short(t, 60) for t in titles])
    zmax = float(max(left.to_numpy().max(initial=0), right.to_numpy().max(initial=0), 1))
    ylabels = short_unique(left.index, label_len)
    fig.add_trace(_heat_trace(left, ylabels, zmax, coloraxis="coloraxis"), row=1, col=1)
    fig.add_trace(_heat_trace(right, ylabels, zmax, coloraxis="coloraxis"), row=1, col=2)
    fig.update_layout(coloraxis=dict(colorscale=HEAT_SCALE, cmin=1, cmax=zmax,
                                     colorbar=dict(title="visits", thickness=12, **count_ticks(zmax))))
    _heat_layout(fig, len(left), True)
    fig.update_annotations(font=dict(size=13))
    return fig


# --- metrics and growth ---------------------------------------------------------------------

def pair_counts(steps: pd.DataFrame) -> np.ndarray:
    """Steps per distinct (src_anchor, skill_id) pair."""
    if steps.empty:
        return np.zeros(0, dtype=np.int64)
    return steps.groupby(["src_anchor", "skill_id"]).size().to_numpy(np.int64)


def unique_pairs(steps: pd.DataFrame) -> int:
    return int(len(steps[["src_anchor", "skill_id"]].drop_duplicates())) if len(steps) else 0


def _check(counts: np.ndarray, universe: int) -> None:
    if universe < 1:
        raise ValueError("universe must be >= 1")
    if counts.size > universe:
        raise ValueError(f"{counts.size} distinct pairs observed but the universe has {universe}")


def normalized_entropy(counts: np.ndarray, universe: int) -> float:
    """Entropy of the pair distribution / log(universe): 1 = every pair equally often."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    if universe == 1:
        return 1.0
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum() / np.log(universe))


def gini(counts: np.ndarray, universe: int) -> float:
    """Gini of per-pair step counts over the whole universe (unseen pairs are zeros)."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    x = np.concatenate([np.zeros(universe - counts.size), np.sort(counts).astype(np.float64)])
    i = np.arange(1, universe + 1, dtype=np.float64)
    return float(((2 * i - universe - 1) * x).sum() / (universe * x.sum()))


def kl_to_uniform(counts: np.ndarray, universe: int) -> float:
    """KL(p ‖ uniform over the universe) in nats = log(U) − H(p)."""
    _check(counts, universe)
    if counts.size == 0 or counts.sum() == 0:
        return float("nan")
    p = counts / counts.sum()
    return float(max(0.0, (p * np.log(p * universe)).sum()))


def effective_universe(universe: int | None, all_steps: pd.DataFrame) -> tuple[int, bool]:
    """The universe to normalise by, and whether it had to be widened: batches sampled on an
    older graph can hold pairs the current graph no longer has, so the universe is at least
    the distinct pairs of all batches (and that alone when the graph's is unknown)."""
    seen = unique_pairs(all_steps)
    if not universe:
        return max(seen, 1), False
    return (max(universe, seen), seen > universe)


def batch_metrics(steps_by_batch: Mapping[str, pd.DataFrame], universe: int) -> pd.DataFrame:
    """One row per batch: paths, steps, unique pairs, coverage, normalised entropy, Gini, KL."""
    rows = []
    for label, st in steps_by_batch.items():
        c = pair_counts(st)
        rows.append({"batch": label, "paths": int(st["path_id"].nunique()) if len(st) else 0,
                     "steps": int(len(st)), "unique_pairs": int(c.size), "coverage": c.size / universe,
                     "normalized_entropy": normalized_entropy(c, universe), "gini": gini(c, universe),
                     "kl_to_uniform": kl_to_uniform(c, universe)})
    return pd.DataFrame(rows, columns=["batch", "paths", "steps", "unique_pairs", "coverage",
                                       "normalized_entropy", "gini", "kl_to_uniform"])


def coverage_growth(steps: pd.DataFrame, n_paths: int | None = None) -> np.ndarray:
    """Unique pairs after each path (paths in ``idx`` order; one entry per path)."""
    n = int(n_paths if n_paths is not None else (steps["idx"].max() + 1 if len(steps) else 0))
    if steps.empty:
        return np.zeros(n, dtype=np.int64)
    s = steps.sort_values(["idx", "step"], kind="stable")
    first = s.drop_duplicates(["src_anchor", "skill_id"])
    return np.cumsum(np.bincount(first["idx"].to_numpy(np.int64), minlength=n)[:n]).astype(np.int64)


def growth_curves(steps_by_batch: Mapping[str, pd.DataFrame], n_paths: Mapping[str, int] | None = None
                  ) -> pd.DataFrame:
    parts = []
    for label, st in steps_by_batch.items():
        g = coverage_growth(st, (n_paths or {}).get(label))
        parts.append(pd.DataFrame({"batch": label, "paths": np.arange(1, len(g) + 1), "unique_pairs": g}))
    if not parts:
        return pd.DataFrame(columns=["batch", "paths", "unique_pairs"])
    return pd.concat(parts, ignore_index=True)


def growth_figure(curves: pd.DataFrame, universe: int | None = None) -> go.Figure:
    """Unique pairs after each path, one line per batch. The y axis is scaled to the curves (with
    the axis up to a universe of hundreds of pairs, curves of a few dozen lay flat on 0); the
    universe is stated in a note, and drawn as a line only once the curves near it."""
    fig = px.line(curves, x="paths", y="unique_pairs", color="batch",
                  color_discrete_sequence=["#1f77b4", "#d62728", "#2ca02c", "#9467bd"])
    top = int(curves["unique_pairs"].max()) if len(curves) else 0
    y_max = max(top * 1.15, 1.0)
    if universe:
        if top >= 0.8 * universe:
            y_max = universe * 1.05
            fig.add_hline(y=universe, line_dash="dot", line_color="#888",
                          annotation_text=f"all {universe:,} pairs", annotation_position="bottom right")
        fig.add_annotation(xref="paper", yref="paper", x=0.01, y=0.99, xanchor="left", yanchor="top",
                           showarrow=False, align="left", font=dict(size=12, color="#555"),
                           text=f"universe: {universe:,} pairs; the highest curve reaches {top:,} "
                                f"({top / universe:.1%})")
    fig.update_layout(height=380, margin=dict(l=0, r=0, t=10, b=0), xaxis_title="paths sampled",
                      yaxis_title="unique (scenario, skill) pairs",
                      legend=dict(title="", orientation="h", yanchor="bottom", y=1.02, x=0))
    fig.update_yaxes(range=[0, y_max], **count_ticks(y_max))
    fig.update_xaxes(**count_ticks(curves["paths"].max() if len(curves) else 0))
    return clear_of_toolbar(fig)


# --- equal budgets --------------------------------------------------------------------------

def equal_budget(n_paths: Mapping[str, int]) -> int:
    """The number of paths every compared batch can give: the smallest batch's size. A batch
    with more paths covers more pairs by that alone, so comparisons cut every batch to this."""
    return min((int(n) for n in n_paths.values()), default=0)


def first_paths(steps: pd.DataFrame, budget: int | None) -> pd.DataFrame:
    """The steps of a batch's first ``budget`` paths in sampling order (``idx``); all of them for None."""
    return steps if budget is None or steps.empty else steps[steps["idx"] < budget]


def budget_note(n_paths: Mapping[str, int], budget: int | None) -> str:
    """What the comparison below counts: the same number of paths per batch, or each batch whole."""
    if budget is None:
        return ("Each batch with all its paths: batches of different sizes do not compare (more paths "
                "cover more pairs by themselves).")
    cut = [f"{label} ({int(n)} paths)" for label, n in n_paths.items() if int(n) > budget]
    if not cut:
        return f"Every batch compared has {budget} paths: compared whole."
    return (f"Compared at an equal budget: the first {budget} paths of each batch, the size of the smallest; "
            f"cut: {'; '.join(cut)}. Turn off 'Equal budget' to compare whole batches.")
