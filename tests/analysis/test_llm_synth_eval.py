"""Figures of an LLM synthesis measurement: prompt size summaries and a batch's outcome."""
from __future__ import annotations

from analysis.llm_synth_eval import batch_outcome, estimated_tokens, fidelity_levels, size_summary


def test_size_summary_gives_median_95th_percentile_and_max_with_token_estimates():
    s = size_summary(list(range(1, 101)))
    assert (s.n, s.p50, s.p95, s.max) == (100, 50, 95, 100)
    assert estimated_tokens(4001) == 1001 and "~13/24/25 tokens" in s.as_text()
    assert size_summary([]).n == 0


def test_batch_outcome_counts_tasks_paths_without_one_and_repairs_by_check():
    o = batch_outcome(5, ["accepted", "rejected", "accepted", "rejected"], [None, "oracle", None, "judge"],
                      ["build", "oracle", "oracle"])
    assert (o.accepted, o.rejected, o.no_task, o.repairs) == (2, 2, 1, 3)
    assert o.failed_checks == {"oracle": 1, "judge": 1} and o.repairs_by_check == {"build": 1, "oracle": 2}
    assert o.accepted_share == 0.4
    assert o.as_text() == ("2/5 accepted (0.40), 2 rejected {'oracle': 1, 'judge': 1}, 1 without a task, "
                           "3 repairs {'build': 1, 'oracle': 2}")
    assert batch_outcome(1, ["accepted"], [None], []).as_text() == \
        "1/1 accepted (1.00), 0 rejected, 0 without a task, 0 repairs"
    assert batch_outcome(0, [], [], []).accepted_share == 0.0


def test_fidelity_levels_count_steps_over_tasks():
    assert fidelity_levels([["tool", "artifact"], ["tool"]]) == {"tool": 2, "artifact": 1}
