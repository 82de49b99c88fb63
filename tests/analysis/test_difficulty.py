"""analysis/difficulty.py with hand-computed expectations: pass@k against a brute-force
enumeration, bands at their cut points, breakdowns, check vs task pass rates, empty frames."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis import difficulty as d
from pipeline.agents.protocol import AGENT_LABELS


def _brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Every way to draw k of n rollouts (the first c passed): the share with a pass among them."""
    draws = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in draw) for draw in draws) / len(draws)


def test_pass_at_k_is_the_brute_force_share_of_draws_with_a_pass():
    for n in range(1, 8):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert d.pass_at_k(n, c, k) == pytest.approx(_brute_pass_at_k(n, c, k), abs=1e-12), (n, c, k)


def test_pass_at_k_known_values_and_bad_counts():
    assert d.pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert d.pass_at_k(3, 1, 2) == pytest.approx(2 / 3)        # 1 - C(2,2)/C(3,2)
    assert d.pass_at_k(10, 2, 3) == pytest.approx(1 - math.comb(8, 3) / math.comb(10, 3))
    assert d.pass_at_k(200, 0, 50) == 0.0 and d.pass_at_k(200, 151, 50) == 1.0
    assert 0 < d.pass_at_k(1000, 3, 100) < 1                      # no overflow at large n
    with pytest.raises(ValueError, match="k = 4 needs 1 ≤ k ≤ n = 3"):
        d.pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="4 passed of 3 rollouts"):
        d.pass_at_k(3, 4, 1)
    with pytest.raises(ValueError, match="k = 0"):
        d.pass_at_k(3, 1, 0)


@pytest.mark.parametrize("c, n, expected", [
    (0, 3, "unsolved"), (1, 3, "hard"), (2, 3, "easy"), (3, 3, "solved"),
    (0, 1, "unsolved"), (1, 1, "solved"), (1, 2, "medium"),
    (2, 6, "hard"), (4, 6, "easy"),                 # exactly at the cut points 1/3 and 2/3
    (3, 9, "hard"), (6, 9, "easy"), (4, 9, "medium"), (5, 9, "medium"),
    (1, 4, "hard"), (2, 4, "medium"), (3, 4, "easy"), (2, 5, "medium"), (3, 5, "medium"), (4, 5, "easy"),
    (33, 100, "hard"), (34, 100, "medium"), (66, 100, "medium"), (67, 100, "easy"), (99, 100, "easy"),
])
def test_bands_at_their_edges(c, n, expected):
    assert d.band(c, n) == expected


def test_band_refuses_what_is_not_a_count():
    with pytest.raises(ValueError, match="0 passed of 0 rollouts"):
        d.band(0, 0)
    with pytest.raises(ValueError, match="4 passed of 3"):
        d.band(4, 3)


# --- frames shaped like workbench.store.rollouts.rollouts_frame -------------------------------

FACTS = {
    "t1": dict(task_name="one", category="log-analysis", n_steps=2, recipes=["app-log-errors", "lines-tally"],
               provider="offline", sampler="random-walk"),
    "t2": dict(task_name="two", category="text-processing", n_steps=3, recipes=["llm:grep", "llm:sed"],
               provider="llm", sampler=None),
    "t3": dict(task_name="three", category="log-analysis", n_steps=3, recipes=["app-log-errors", "llm:awk"],
               provider="llm", sampler="inverse-frequency"),
}


def _frame(rows: list[tuple[str, str, str | None, bool]], run_id: str = "r1") -> pd.DataFrame:
    out = []
    for i, (task, agent, model, passed) in enumerate(rows):
        out.append({"rollout_id": f"ro{i:02d}", "run_id": run_id, "task_id": task, "agent": agent,
                    "agent_label": AGENT_LABELS[agent], "model": model,
                    "sample": i, "passed": passed, "withdrawn": False, **FACTS[task]})
    return pd.DataFrame(out)


T2, MINI = "terminus-2", "gpt-4o-mini"
ROWS = ([("t1", T2, MINI, p) for p in (True, False, True)]          # 2/3 easy
        + [("t2", T2, MINI, p) for p in (False, False, False)]      # 0/3 unsolved
        + [("t3", T2, MINI, p) for p in (True, False, False, False)]   # 1/4 hard
        + [("t1", "oracle", None, True)] * 3                         # 3/3 solved
        + [("t3", "ablation", None, p) for p in (True, False)])     # 1/2 medium


def test_task_difficulty_per_task_and_agent():
    got = d.task_difficulty(_frame(ROWS)).set_index(["task_id", "agent"])
    assert list(got.columns) == [c for c in d.DIFFICULTY_COLUMNS if c not in ("task_id", "agent")]
    assert got.loc[("t1", T2), ["rollouts", "passed", "k", "band"]].tolist() == [3, 2, 3, "easy"]
    assert got.loc[("t1", T2), "pass@1"] == pytest.approx(2 / 3)
    assert got.loc[("t1", T2), "pass@k"] == 1.0                   # k = n = 3 with 2 passes
    assert got.loc[("t3", T2), "pass@k"] == 1.0 and got.loc[("t3", T2), "band"] == "hard"
    assert got.loc[("t2", T2), ["pass@1", "pass@k", "band"]].tolist() == [0.0, 0.0, "unsolved"]
    assert got.loc[("t1", "oracle"), "band"] == "solved" and got.loc[("t3", "ablation"), "band"] == "medium"
    # scripted agents have no model: an empty string, and their label says what they are
    assert got.loc[("t1", "oracle"), "model"] == ""
    assert got.loc[("t3", "ablation"), "agent_label"] == AGENT_LABELS["ablation"]
    assert got.loc[("t1", T2), "agent_label"] == f"{AGENT_LABELS[T2]} · {MINI}"
    assert got.loc[("t2", T2), "sampler"] == d.UNKNOWN and got.loc[("t1", T2), "category"] == "log-analysis"
    # protocol order of agents, hardest task first within one
    flat = got.reset_index()
    assert list(dict.fromkeys(flat["agent"])) == ["oracle", "ablation", T2]
    assert flat[flat["agent"] == T2]["task_id"].tolist() == ["t2", "t3", "t1"]


def test_pass_at_a_chosen_k_and_tasks_with_fewer_rollouts():
    got = d.task_difficulty(_frame(ROWS), k=2).set_index(["task_id", "agent"])
    assert got.loc[("t1", T2), "pass@k"] == pytest.approx(1 - math.comb(1, 2) / math.comb(3, 2))   # = 1
    assert got.loc[("t3", T2), "pass@k"] == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))   # = 0.5
    assert got.loc[("t3", "ablation"), "pass@k"] == 1.0
    four = d.task_difficulty(_frame(ROWS), k=4).set_index(["task_id", "agent"])
    assert four.loc[("t3", T2), "pass@k"] == 1.0
    assert np.isnan(four.loc[("t1", T2), "pass@k"]) and np.isnan(four.loc[("t3", "ablation"), "pass@k"])


def test_band_counts_have_every_band_per_agent():
    counts = d.band_counts(d.task_difficulty(_frame(ROWS)))
    t2 = counts[counts["agent_label"] == f"{AGENT_LABELS[T2]} · {MINI}"]
    assert t2["band"].tolist() == list(d.BANDS) and t2["tasks"].tolist() == [1, 1, 0, 1, 0]
    assert counts["tasks"].sum() == 5


def test_distributions_by_each_dimension():
    diff = d.task_difficulty(_frame(ROWS))
    mini = diff[diff["agent"] == T2]
    by_cat = d.band_distribution(mini, "category")
    assert by_cat[["value", "band", "tasks"]].astype(str).values.tolist() == [
        ["log-analysis", "hard", "1"], ["log-analysis", "easy", "1"], ["text-processing", "unsolved", "1"]]
    by_len = d.band_distribution(mini, "path length")
    assert sorted(zip(by_len["value"], by_len["band"].astype(str))) == [(2, "easy"), (3, "hard"), (3, "unsolved")]
    by_sampler = d.band_distribution(mini, "sampler")
    assert set(by_sampler["value"]) == {"random-walk", "inverse-frequency", d.UNKNOWN}
    assert d.band_distribution(mini, "provider").groupby("value")["tasks"].sum().to_dict() == {"offline": 1, "llm": 2}
    # a task counts once under each family of its steps; LLM-planned steps share one family
    fam = d.band_distribution(mini, "recipe family")
    assert fam.groupby("value")["tasks"].sum().to_dict() == {"app-log-errors": 2, "lines-tally": 1, d.LLM_FAMILY: 2}
    with pytest.raises(ValueError, match="dimension 'colour': one of category, path length"):
        d.band_distribution(mini, "colour")


def test_recipe_families():
    assert d.recipe_families(["app-log-errors", "llm:grep", "app-log-errors", "llm:sed"]) == \
        ["app-log-errors", d.LLM_FAMILY]
    assert d.recipe_families(None) == [] and d.recipe_families(np.array(["x"])) == ["x"]


def _tests(outcomes: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame([{"rollout_id": rid, "test_name": f"test_{i}", "outcome": o}
                         for rid, row in outcomes.items() for i, o in enumerate(row)])


def test_check_rate_beside_task_rate():
    rollouts = _frame([("t1", T2, MINI, True), ("t1", T2, MINI, False), ("t2", T2, MINI, False),
                       ("t1", "nop", None, False)])
    tests = _tests({"ro00": ["passed"] * 4, "ro01": ["passed", "passed", "passed", "failed"],
                    # ro02 crashed: no per-test outcomes
                    "ro03": ["failed", "failed", "error", "skipped"], "ro99": ["failed"]})   # ro99: not selected
    rates = d.check_vs_task(rollouts, tests).set_index("agent")
    assert list(rates.index) == ["nop", T2]
    mini = rates.loc[T2]
    assert (mini["rollouts"], mini["rollouts_passed"], mini["checks_run"], mini["checks_passed"]) == (3, 1, 8, 7)
    assert mini["task_rate"] == pytest.approx(1 / 3) and mini["check_rate"] == pytest.approx(7 / 8)
    assert mini["rollouts_without_tests"] == 1
    nop = rates.loc["nop"]
    assert (nop["checks_run"], nop["checks_passed"], nop["check_rate"], nop["task_rate"]) == (3, 0, 0.0, 0.0)


def test_a_config_with_no_test_outcomes_has_no_check_rate():
    rates = d.check_vs_task(_frame([("t1", T2, MINI, False)]), _tests({}).reindex(columns=["rollout_id", "outcome"]))
    assert rates["checks_run"].tolist() == [0] and np.isnan(rates["check_rate"].iloc[0])


def test_filters():
    frame = pd.concat([_frame(ROWS), _frame([("t2", T2, "qwen3-coder", True)], run_id="r2")], ignore_index=True)
    assert d.agent_options(frame) == ["oracle", "ablation", T2]
    assert d.model_options(frame) == ["(no model)", MINI, "qwen3-coder"]
    assert len(d.filter_rollouts(frame, d.DifficultyFilter())) == len(frame)     # none withdrawn
    only = d.filter_rollouts(frame, d.DifficultyFilter(models=("qwen3-coder",)))
    assert only["run_id"].tolist() == ["r2"]
    assert set(d.filter_rollouts(frame, d.DifficultyFilter(models=("(no model)",)))["agent"]) == {"oracle", "ablation"}
    assert set(d.filter_rollouts(frame, d.DifficultyFilter(agents=("oracle",)))["agent"]) == {"oracle"}
    assert len(d.filter_rollouts(frame, d.DifficultyFilter(runs=("r2",)))) == 1
    assert set(d.filter_rollouts(frame, d.DifficultyFilter(categories=("text-processing",)))["task_id"]) == {"t2"}
    diff = d.task_difficulty(frame)
    assert set(d.filter_bands(diff, ["solved"])["task_id"]) == {"t1", "t2"}
    assert len(d.filter_bands(diff, [])) == len(diff)


def test_withdrawn_tasks_are_left_out_unless_asked_for():
    frame = _frame(ROWS)
    frame.loc[frame["task_id"] == "t2", "withdrawn"] = True
    assert d.withdrawn_tasks(frame) == ["t2"] and d.withdrawn_tasks(_frame(ROWS)) == []
    assert "t2" not in set(d.filter_rollouts(frame, d.DifficultyFilter())["task_id"])
    assert len(d.filter_rollouts(frame, d.DifficultyFilter(withdrawn=True))) == len(frame)


def test_export_of_a_selection():
    diff = d.task_difficulty(_frame(ROWS))
    hard = d.filter_bands(diff, ["unsolved", "hard"])
    assert d.selected_task_ids(hard) == ["t2", "t3"]
    csv = d.export_csv(hard).decode().splitlines()
    assert csv[0] == ",".join(d.EXPORT_COLUMNS) and len(csv) == 3 and csv[1].startswith("t2,two,terminus-2,")
    doc = json.loads(d.export_json(d.task_difficulty(_frame(ROWS), k=4)))
    assert doc["task_ids"] == ["t1", "t3", "t2"]
    assert [r["band"] for r in doc["rows"]][:2] == ["solved", "medium"]
    assert doc["rows"][0]["pass@k"] is None                  # 3 rollouts, k = 4: no estimate
    assert d.rollout_command(["t2", "t3"], "terminus-2", 5, MINI) == \
        "workbench rollout --tasks t2 t3 --agent terminus-2 --model gpt-4o-mini -k 5"
    assert d.rollout_command(["t1"], "ablation") == "workbench rollout --tasks t1 --agent ablation -k 3"
    assert d.rollout_command([]) == ""


def test_the_pages_table_and_pickers():
    frame = _frame(ROWS)
    diff = d.task_difficulty(frame)
    table = d.task_table(diff)
    assert list(table.columns) == d.TABLE_COLUMNS and table["band"].tolist()[:2] == ["solved", "medium"]
    hard = d.filter_bands(diff, ["hard"])                       # t3 by terminus-2: 4 rollouts
    assert d.rollouts_in(frame, hard)["rollout_id"].tolist() == ["ro06", "ro07", "ro08", "ro09"]
    assert d.rollouts_in(frame, d.filter_bands(diff, ["solved"]))["agent"].tolist() == ["oracle"] * 3
    assert d.most_rollouts(frame) == 4 and d.most_rollouts(frame.iloc[0:0]) == 1
    runs = pd.DataFrame([{"run_id": "r2", "agent": T2, "model": MINI, "n_done": 5},
                         {"run_id": "r1", "agent": "oracle", "model": None, "n_done": 3},
                         {"run_id": "r0", "agent": "nop", "model": None, "n_done": 0}])
    both = pd.concat([frame, _frame([("t1", "nop", None, False)], run_id="lost")], ignore_index=True)
    assert d.run_labels(both, runs) == {"r1": "r1 · oracle · 3 rollouts", "lost": "lost"}
    assert d.run_labels(_frame(ROWS, run_id="r2"), runs) == {"r2": f"r2 · terminus-2 {MINI} · 5 rollouts"}


def test_empty_frames():
    empty = _frame(ROWS).iloc[0:0]
    diff = d.task_difficulty(empty)
    assert diff.empty and list(diff.columns) == d.DIFFICULTY_COLUMNS
    assert d.band_counts(diff).empty
    for dim in d.DIMENSIONS:
        assert d.band_distribution(diff, dim).empty
    assert d.check_vs_task(empty, _tests({"x": ["passed"]})).empty
    assert d.agent_options(empty) == [] and d.task_table(diff).empty and d.rollouts_in(empty, diff).empty
    assert d.selected_task_ids(diff) == [] and json.loads(d.export_json(diff)) == {"task_ids": [], "rows": []}
    assert d.export_csv(diff).decode().strip() == ",".join(d.EXPORT_COLUMNS)
