"""Summaries of the call log."""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

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
