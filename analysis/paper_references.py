"""The figures the four papers report, defined once, and the tables that set ours beside them.

Pages and notebooks cite these; they are the papers' numbers (PAPERS.md), never measured here.
A test double's or a simulated agent's figure is never set beside one (workbench.double_rule):
the comparison tables leave them out and say so; `doubles_apart` lists them on their own.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from workbench import double_rule


@dataclass(frozen=True)
class PaperFigure:
    key: str
    value: float
    label: str          # what it measures, as the comparison tables say it
    source: str         # paper and section of PAPERS.md


SKILLSYNTH_COST_PER_TASK = PaperFigure("cost_per_task", 27.3, "cost per accepted task (USD)", "SkillSynth, PAPERS.md §1")
SKILLSYNTH_ORACLE_PASS = PaperFigure("oracle_pass", 0.957, "oracle pass rate", "SkillSynth, PAPERS.md §1")
FACET_CHECK_RATE = PaperFigure("check_rate", 0.894, "checks passed (FACET: teacher rollouts)", "FACET, PAPERS.md §3")
FACET_TASK_RATE = PaperFigure("task_rate", 0.209, "tasks passed whole (FACET: teacher rollouts)", "FACET, PAPERS.md §3")
FACET_NEAR_MISS = PaperFigure("near_miss", 0.54, "failed rollouts missing only 1–2 checks", "FACET, PAPERS.md §3")


def with_marks(fig: go.Figure, marks: list[PaperFigure], *, axis: str = "x", fmt: str = "{:.1%}") -> go.Figure:
    """`fig` with a dashed line per paper figure on its value axis, labelled as the paper's."""
    for i, m in enumerate(marks):
        line = dict(line_dash="dash" if i % 2 == 0 else "dot", line_color="grey",
                    annotation_text=f"{m.source.split(',')[0]}: {fmt.format(m.value)} (paper)",
                    annotation_position="top right" if i % 2 == 0 else "bottom right")
        (fig.add_vline(x=m.value, **line) if axis == "x" else fig.add_hline(y=m.value, **line))
    return fig


def _row(m: PaperFigure, ours: float | None, where: str) -> dict:
    return {"measure": m.label, "ours": ours, "where": where, "paper": m.value, "source": m.source}


def synthesis_comparison(check_rates: pd.DataFrame, batches: pd.DataFrame) -> pd.DataFrame:
    """Our oracle pass rate (analysis.tasks_view.check_pass_rates) and cost per accepted task per
    LLM batch (analysis.llm_costs.by_batch with tasks) beside SkillSynth's."""
    rows = []
    oracle = check_rates[check_rates["check"] == "oracle"] if "check" in check_rates else check_rates.iloc[0:0]
    rows.append(_row(SKILLSYNTH_ORACLE_PASS, float(oracle["pass_rate"].iloc[0]) if len(oracle) else None,
                     f"{int(oracle['ran'].iloc[0])} tasks" if len(oracle) else "no oracle check ran"))
    priced = batches.dropna(subset=["cost_per_accepted"]) if "cost_per_accepted" in batches else batches.iloc[0:0]
    doubled = _by_double_batch(priced)
    for _, b in priced[~doubled].iterrows():
        model = f" ({b['model']})" if isinstance(b.get("model"), str) and b["model"] else ""
        rows.append(_row(SKILLSYNTH_COST_PER_TASK, float(b["cost_per_accepted"]), f"batch {b['batch_id']}{model}"))
    if not (~doubled).any():
        left_out = f" ({int(doubled.sum())} test-double batch(es) left out: see doubles_apart)" if doubled.any() else ""
        rows.append(_row(SKILLSYNTH_COST_PER_TASK, None, "no LLM batch by a model with accepted tasks" + left_out))
    return pd.DataFrame(rows, columns=["measure", "ours", "where", "paper", "source"])


def _by_double_batch(batches: pd.DataFrame) -> pd.Series:
    """Per batch (analysis.llm_costs.by_batch): any of its calls was a test double's."""
    if "test_double" in batches:
        return batches["test_double"].fillna(False).astype(bool)
    models = batches["model"] if "model" in batches else pd.Series("", index=batches.index)
    return models.map(double_rule.is_double_model).astype(bool)


def doubles_apart(batches: pd.DataFrame) -> pd.DataFrame:
    """The test doubles' batches (analysis.llm_costs.by_batch with tasks) on their own, never beside a
    paper's figure: batch, model, accepted, cost and cost per accepted task, and what they are."""
    cols = ["batch_id", "model", "accepted", "cost_usd", "cost_per_accepted", "what"]
    mine = batches[_by_double_batch(batches)] if len(batches) else batches
    out = mine.reindex(columns=cols[:-1]).copy()
    out["what"] = double_rule.COST_NOTE
    return out.reset_index(drop=True)


def rollout_comparison(check_vs_task: pd.DataFrame, near_misses: dict, labels: dict[str, str]) -> pd.DataFrame:
    """Per agent config, our check- and task-level pass rates (analysis.difficulty.check_vs_task)
    and per agent the near-miss share (analysis.rollout_eval.near_misses_by_agent) beside FACET's;
    simulated agents and runs against a test double are left out (their labels say they are)."""
    rows = []
    for _, r in check_vs_task.iterrows():
        if double_rule.is_double(agent=r.get("agent"), model=r.get("model")):
            continue     # a simulated agent's or a double's rates are no teacher's: never beside FACET's
        rows.append(_row(FACET_CHECK_RATE, r["check_rate"], r["agent_label"]))
        rows.append(_row(FACET_TASK_RATE, r["task_rate"], r["agent_label"]))
    for agent, nm in near_misses.items():
        if double_rule.is_simulated_agent(agent) or double_rule.TAG in labels.get(agent, ""):
            continue
        rows.append(_row(FACET_NEAR_MISS, nm.share, f"{labels.get(agent, agent)} ({nm.near} of {nm.with_tests})"))
    return pd.DataFrame(rows, columns=["measure", "ours", "where", "paper", "source"])
