"""The Repairs tab's note, history and cost tables, and the "accepted after N repairs" funnel."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis import repairs_view as rv


def _attempts(*outcomes: str) -> pd.DataFrame:
    return pd.DataFrame([{"task_id": "t", "n": i + 1, "artifact": "tests", "check_name": "oracle",
                          "reason": "assert 1 == 2", "diff": "-a\n+b\n", "evidence": [], "prompt_tokens": 1000,
                          "completion_tokens": 234, "cost_usd": 0.0031, "outcome": o}
                         for i, o in enumerate(outcomes)])


def test_the_note_tells_offline_first_time_and_repaired_tasks_apart():
    none = _attempts()
    assert rv.history_note({"provider": "offline", "verdict": "accepted"}, none) == \
        "offline task: made from recipes, never repaired"
    assert rv.history_note({"provider": "llm", "verdict": "accepted", "repairs": 0}, none) == \
        "no repairs: built right the first time"
    assert rv.history_note({"provider": "llm", "verdict": "rejected", "failed_check": "decontam", "repairs": 0},
                           none) == "no repairs: rejected at decontam before any repair was tried"
    assert rv.history_note({"provider": "llm", "verdict": "pending", "repairs": 0}, none) == \
        "no repairs so far: not verified yet"
    # an LLM task whose attempts were never saved (tasks.repairs NULL) is not called right first time
    assert rv.history_note({"provider": "llm", "verdict": "accepted", "repairs": float("nan")}, none) == \
        "no repair history recorded for this task"
    assert rv.history_note({"provider": "llm", "verdict": "accepted"}, _attempts("moved_on", "fixed")) == \
        "2 repairs (1 fixed what failed); accepted after them"
    assert rv.history_note({"provider": "llm", "verdict": "rejected"}, _attempts("still_failing")) == \
        "1 repair (0 fixed what failed); rejected after it"
    assert rv.history_note({"provider": "llm", "verdict": "accepted"}, _attempts("fixed")) == \
        "1 repair (1 fixed what failed); accepted after it"


def test_a_task_whose_repairs_ran_out_says_so_beside_its_failed_check():
    spent = _attempts("still_failing", "still_failing", "exhausted")
    assert rv.exhausted(spent) and not rv.exhausted(_attempts("still_failing")) and not rv.exhausted(_attempts())
    assert rv.history_note({"provider": "llm", "verdict": "rejected"}, spent) == \
        "3 repairs (0 fixed what failed); rejected: the repairs allowed were all spent and the last one still failed"
    assert rv.rejection_note(spent) == " Repairs exhausted: 3 made, none left to try (see the Repairs tab)."
    assert rv.rejection_note(spent.iloc[::-1]) == rv.rejection_note(spent)    # the last by n, not by row
    assert rv.rejection_note(_attempts("still_failing")) == rv.rejection_note(_attempts()) == ""


def test_history_and_cost_tables():
    table = rv.history_table(_attempts("moved_on", "fixed"))
    assert table.columns.tolist() == rv.HISTORY_COLUMNS
    assert table["check"].tolist() == ["oracle", "oracle"] and table["tokens"].tolist() == [1234, 1234]
    assert rv.history_table(_attempts()).columns.tolist() == rv.HISTORY_COLUMNS
    first = _attempts("still_failing").iloc[0]
    assert rv.attempt_title(first) == "#1 · tests · after oracle · still failing · 1,234 tokens · $0.0031"
    assert rv.attempt_icon(first) == ":material/error:"
    costs = pd.DataFrame({"stage": ["synth_plan", "task_judge"], "calls": [2, 1], "cache_hits": [0, 1],
                          "prompt_tokens": [200, 100], "completion_tokens": [20, 10], "cost_usd": [0.375, 0.125]})
    shown = rv.cost_table(costs)
    assert shown["stage"].tolist() == ["synth_plan", "task_judge", "total"]
    assert shown.iloc[-1]["calls"] == 3 and shown.iloc[-1]["cost_usd"] == pytest.approx(0.5)
    assert rv.cost_note(costs) == "3 LLM call(s), 330 tokens, $0.5000 in all"
    assert rv.cost_table(costs.iloc[:0]).empty and rv.cost_note(costs.iloc[:0]) == "No LLM calls recorded for this task."


def test_the_funnel_has_a_bar_per_n_with_gaps_filled_and_offline_tasks_left_out():
    counts = pd.DataFrame([
        {"provider": "llm", "repairs": 0, "verdict": "accepted", "tasks": 4},
        {"provider": "llm", "repairs": 0, "verdict": "rejected", "tasks": 1},
        {"provider": "llm", "repairs": 3, "verdict": "accepted", "tasks": 1},
        {"provider": "llm", "repairs": 3, "verdict": "rejected", "tasks": 2},
        {"provider": "fake", "repairs": 1, "verdict": "accepted", "tasks": 1},
        {"provider": "offline", "repairs": 0, "verdict": "accepted", "tasks": 50}])
    funnel = rv.repairs_funnel(counts)
    assert funnel.to_dict("list") == {"repairs": [0, 1, 2, 3], "accepted": [4, 1, 0, 1], "rejected": [1, 0, 0, 2]}
    fig = rv.repairs_figure(funnel)
    assert [t.name for t in fig.data] == ["accepted", "rejected"] and fig.layout.barmode == "stack"
    assert list(fig.data[0].x) == ["0", "1", "2", "3"] and list(fig.data[1].y) == [1, 0, 0, 2]
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.tickformat == ",d"  # tasks: whole numbers
    assert fig.layout.title.text == "Accepted after N repairs: 6 accepted, 4 of them with none"
    # only offline tasks (or none verified): nothing to draw
    assert rv.repairs_funnel(counts[counts["provider"] == "offline"]).empty
    assert rv.repairs_funnel(counts.iloc[:0]).empty


def test_a_test_doubles_task_cost_says_whose_it_is():
    costs = pd.DataFrame([{"stage": "synth_plan", "calls": 2, "cache_hits": 0, "prompt_tokens": 10,
                           "completion_tokens": 5, "cost_usd": 0.5}])
    assert rv.cost_note(costs, "gpt-x") == rv.cost_note(costs) == "2 LLM call(s), 15 tokens, $0.5000 in all"
    note = rv.cost_note(costs, "scripted-replay (demo price)")
    assert note.startswith("2 LLM call(s), 15 tokens, $0.5000 in all by scripted-replay (demo price, test double): ")
    assert "made-up price" in note
