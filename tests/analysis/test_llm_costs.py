"""Summaries of the call log."""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import pytest

from analysis import llm_costs


def _calls():
    t = datetime(2026, 1, 1, 12, 0, 0)
    rows = []
    for i in range(10):
        rows.append({"created_at": t + timedelta(seconds=30 * i), "batch_id": "b1" if i < 6 else "b2",
                     "stage": "scenario_inference" if i % 2 else "bridges", "item": str(i),
                     "provider": "openai-compatible", "model": "m", "attempt": 1, "latency_ms": 40.0 + i,
                     "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.0 if i == 9 else 0.01,
                     "cache_hit": i == 9, "error_class": "RateLimitError" if i == 0 else None})
    return pd.DataFrame(rows)


def test_totals_and_groupings():
    calls = _calls()
    t = llm_costs.totals(calls)
    assert t == {"calls": 10, "http_calls": 9, "cache_hit_rate": 0.1, "tokens": 1100,
                 "cost_usd": t["cost_usd"], "errors": 1}
    assert abs(t["cost_usd"] - 0.09) < 1e-9
    by = llm_costs.by_stage_model(calls).set_index("stage")
    assert by.loc["bridges", "calls"] == 5 and by.loc["scenario_inference", "cache_hits"] == 1
    batches = llm_costs.by_batch(calls).set_index("batch_id")
    assert batches.loc["b1", "calls"] == 6 and batches.loc["b2", "cache_hits"] == 1
    assert list(llm_costs.error_classes(calls)["error_class"]) == ["RateLimitError"]
    series = llm_costs.over_time(calls, "1min")
    assert series["calls"].sum() == 10 and len(series) == 5


def test_empty_log():
    empty = _calls().iloc[0:0]
    assert llm_costs.totals(empty)["calls"] == 0
    assert llm_costs.by_batch(empty).empty and llm_costs.over_time(empty).empty


def _synthesis_calls():
    """Two runs of LLM synthesis: run r1 makes tasks t-acc (accepted, with a solution repair)
    and t-rej (rejected); r2 makes t-acc2 (accepted) and fails a path whose task was never
    stored (t-lost); a scenario-inference batch besides."""
    t = datetime(2026, 1, 1, 12, 0, 0)
    plan = [("r1", "t-acc", "synth_plan", 0.02), ("r1", "t-acc", "synth_solution", 0.03),
            ("r1", "t-acc", "synth_repair_solution", 0.04), ("r1", "t-acc", "task_judge", 0.01),
            ("r1", "t-rej", "synth_plan", 0.02), ("r1", "t-rej", "task_judge", 0.0),
            ("r2", "t-acc2", "synth_plan", 0.05), ("r2", "t-lost", "synth_plan", 0.06),
            ("b-scen", "skill-1", "scenario_inference", 0.5)]
    rows = [{"created_at": t + timedelta(seconds=i), "batch_id": b, "stage": stage, "item": item,
             "provider": "openai-compatible", "model": "m", "attempt": 1, "latency_ms": 10.0,
             "prompt_tokens": 100, "completion_tokens": 20, "cost_usd": cost, "cache_hit": cost == 0.0,
             "error_class": None} for i, (b, item, stage, cost) in enumerate(plan)]
    tasks = pd.DataFrame({"task_id": ["t-acc", "t-rej", "t-acc2", "t-offline"],
                          "name": ["workbench/llm-join", "workbench/llm-sort", "workbench/llm-join", "workbench/x"],
                          "verdict": ["accepted", "rejected", "accepted", "accepted"]})
    return pd.DataFrame(rows), tasks


def test_cost_per_task_counts_synthesis_stages_and_names_the_task():
    calls, tasks = _synthesis_calls()
    per = llm_costs.by_task(calls, tasks).set_index("task_id")
    assert list(per.index) == ["t-acc", "t-lost", "t-acc2", "t-rej"]  # the most expensive first
    assert "skill-1" not in per.index  # scenario inference is no task's cost
    assert per.loc["t-acc", "cost_usd"] == pytest.approx(0.10) and per.loc["t-acc", "calls"] == 4
    assert per.loc["t-acc", "tokens"] == 480 and per.loc["t-rej", "cache_hits"] == 1
    assert (per.loc["t-acc", "name"], per.loc["t-acc", "verdict"]) == ("workbench/llm-join", "accepted")
    assert (per.loc["t-lost", "name"], per.loc["t-lost", "verdict"]) == (llm_costs.NOT_STORED, "no task")


def test_cost_per_task_and_stage_feeds_a_figure_with_one_bar_per_task():
    calls, tasks = _synthesis_calls()
    long = llm_costs.task_stage_costs(calls, tasks)
    acc = long[long["task_id"] == "t-acc"].set_index("stage")
    assert acc["cost_usd"].to_dict() == pytest.approx({"synth_plan": 0.02, "synth_solution": 0.03,
                                                       "synth_repair_solution": 0.04, "task_judge": 0.01})
    # two tasks of one name stay apart by their ids
    assert set(long["task"]) >= {"workbench/llm-join · t-acc", "workbench/llm-join · t-acc2"}
    fig = llm_costs.task_cost_figure(long, top=2)
    shown = {y for trace in fig.data for y in trace.y}
    assert shown == {"workbench/llm-join · t-acc", f"{llm_costs.NOT_STORED} · t-lost"}
    assert [t.name for t in fig.data] == ["synth_plan", "synth_solution", "synth_repair_solution", "task_judge"]


def test_a_synthesis_batch_shows_its_accepted_tasks_and_the_cost_per_accepted_task():
    calls, tasks = _synthesis_calls()
    batches = llm_costs.by_batch(calls, tasks).set_index("batch_id")
    assert batches.loc["r1", "accepted"] == 1 and batches.loc["r2", "accepted"] == 1
    assert batches.loc["r1", "cost_per_accepted"] == pytest.approx(0.12)  # the rejected task's cost counts too
    assert batches.loc["r2", "cost_per_accepted"] == pytest.approx(0.11)
    assert batches.loc["b-scen", "accepted"] == 0 and pd.isna(batches.loc["b-scen", "cost_per_accepted"])
    assert "accepted" not in llm_costs.by_batch(calls).columns  # without tasks: as before
    assert list(llm_costs.by_batch(calls.iloc[0:0], tasks).columns)[-2:] == ["accepted", "cost_per_accepted"]


def test_no_synthesis_calls_and_no_tasks():
    calls, tasks = _synthesis_calls()
    scen = calls[calls["stage"] == "scenario_inference"]
    assert llm_costs.by_task(scen, tasks).empty and llm_costs.task_stage_costs(scen, tasks).empty
    per = llm_costs.by_task(calls, tasks.iloc[0:0])
    assert set(per["verdict"]) == {"no task"}


def test_the_cost_by_stage_legend_sits_below_the_plot_and_error_counts_are_whole():
    """Beside the plot, in the page's narrow column, long model names squeezed the plot to ~90 px."""
    summary = pd.DataFrame({"stage": ["plan", "plan", "tests"], "cost_usd": [0.01, 0.03, 0.02],
                            "model": ["a-rather-long-model-name-2024-07-18", "another-model-q4", "another-model-q4"]})
    fig = llm_costs.cost_figure(summary)
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.yref == "container" and legend.y == 0
    assert fig.layout.margin.b >= 2 * 22 and fig.layout.height >= 220 + 2 * 22  # room for its two rows
    errors = llm_costs.errors_figure(pd.DataFrame({"error_class": ["timeout", "bad_json"], "calls": [2, 1]}))
    assert errors.layout.xaxis.dtick == 1 and errors.layout.xaxis.tickformat == ",d"


def test_the_timeline_legend_sits_above_the_plot_clear_of_the_cost_axis():
    """Beside the plot (plotly's default) the legend covered the right-hand cost axis' labels."""
    calls = pd.DataFrame({"created_at": pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:01"]),
                          "stage": ["synth_plan", "task_judge"], "cost_usd": [0.1, 0.3],
                          "cache_hit": [False, True]})
    fig = llm_costs.timeline_figure(llm_costs.over_time(calls, "1min"))
    assert fig.layout.yaxis2.side == "right"
    legend = fig.layout.legend
    assert legend.orientation == "h" and legend.y >= 1 and legend.yanchor == "bottom"
    assert fig.layout.margin.t >= 60      # the row above the plot stays clear of the toolbar too


def _with_double():
    """Four calls by a real model (batch b-real) and six by the demo's scripted replay (batch b-demo)."""
    calls, tasks = _synthesis_calls()
    calls = calls[calls["batch_id"].isin(["r1"])].assign(batch_id="b-real", model="gpt-x")
    demo = calls.assign(batch_id="b-demo", model="scripted-replay (demo price)", cost_usd=0.5,
                        item=calls["item"].map({"t-acc": "t-acc2", "t-rej": "t-lost"}))
    return pd.concat([calls, demo], ignore_index=True), tasks


def test_the_headline_never_adds_a_test_doubles_calls_or_cost_to_a_models():
    """Issue 22.4: the LLM & cost page's "Cost (USD)" summed the scripted replay's made-up price with
    a model's; the doubles' group is apart and every one of its labels says so."""
    calls, _ = _with_double()
    groups = llm_costs.headline(calls)
    assert [g["group"] for g in groups] == [llm_costs.MODELS_GROUP, llm_costs.DOUBLES_GROUP]
    real, double = (g["totals"] for g in groups)
    assert real["calls"] == 6 and real["cost_usd"] == pytest.approx(0.12)
    assert double["calls"] == 6 and double["cost_usd"] == pytest.approx(3.0)
    assert groups[0]["suffix"] == "" and "test double" in groups[1]["suffix"]
    assert "made-up price" in groups[1]["group"]
    only_double = llm_costs.headline(calls[calls["batch_id"] == "b-demo"])
    assert [g["group"] for g in only_double] == [llm_costs.DOUBLES_GROUP]
    assert [g["group"] for g in llm_costs.headline(calls.iloc[0:0])] == [llm_costs.MODELS_GROUP]


def test_tables_and_figures_label_a_test_doubles_model_batch_and_tasks():
    calls, tasks = _with_double()
    by = llm_costs.by_stage_model(calls)
    assert set(by["model"]) == {"gpt-x", "scripted-replay (demo price, test double)"}
    assert by.set_index("model")["test_double"].groupby(level=0).all().to_dict() == \
        {"gpt-x": False, "scripted-replay (demo price, test double)": True}
    batches = llm_costs.by_batch(calls, tasks).set_index("batch_id")
    assert batches.loc["b-demo", "test_double"] and not batches.loc["b-real", "test_double"]
    assert batches.loc["b-demo", "model"] == "scripted-replay (demo price, test double)"
    per_task = llm_costs.by_task(calls, tasks).set_index("task_id")
    assert per_task.loc["t-lost", "model"] == "scripted-replay (demo price, test double)"
    bars = llm_costs.task_stage_costs(calls, tasks).drop_duplicates("task_id").set_index("task_id")["task"]
    assert bars["t-lost"].endswith("· test double") and not bars["t-acc"].endswith("test double")
    fig = llm_costs.cost_figure(by)
    assert {t.name for t in fig.data} == {"gpt-x", "scripted-replay (demo price, test double)"}
