"""analysis/failures.py on hand-made frames shaped like workbench.store.rollouts' readers, with
counts worked out by hand."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis import failures as fx
from pipeline.agents.protocol import AGENT_LABELS


def _ro(rid, task, agent, sample, passed, cls=None, n_tests=3, n_failed=0, model=None, run="r1"):
    return {"rollout_id": rid, "run_id": run, "task_id": task, "agent": agent, "agent_label": agent,
            "model": model, "sample": sample, "passed": passed, "failure_class": cls, "n_tests": n_tests,
            "n_failed": n_failed, "task_name": f"name-{task}"}


# task A: 3 tests; ablation fails t2 in every rollout, t3 once. task B: oracle passes, terminus-2 times out
ROLLOUTS = pd.DataFrame([
    _ro("a0", "A", "ablation", 0, False, "test_assertion", 3, 1),
    _ro("a1", "A", "ablation", 1, False, "test_assertion", 3, 2),
    _ro("a2", "A", "ablation", 2, False, "test_assertion", 3, 1),
    _ro("o0", "A", "oracle", 0, True),
    _ro("b0", "B", "terminus-2", 0, False, "timeout", 0, 0, model="m1", run="r2"),
    _ro("b1", "B", "terminus-2", 1, False, "test_assertion", 4, 4, model="m1", run="r2"),
    _ro("b2", "B", "terminus-2", 2, True, None, 4, 0, model="m2", run="r2"),
])


def _t(rid, task, name, outcome, message=""):
    return {"rollout_id": rid, "task_id": task, "agent": "x", "model": None, "test_name": name,
            "outcome": outcome, "message": message}


TESTS = pd.DataFrame(
    [_t("a0", "A", "t1", "passed"), _t("a0", "A", "t2", "failed", "boom"), _t("a0", "A", "t3", "passed"),
     _t("a1", "A", "t1", "passed"), _t("a1", "A", "t2", "failed"), _t("a1", "A", "t3", "error"),
     _t("a2", "A", "t1", "passed"), _t("a2", "A", "t2", "failed"), _t("a2", "A", "t3", "passed"),
     _t("o0", "A", "t1", "passed"), _t("o0", "A", "t2", "passed"), _t("o0", "A", "t3", "passed")]
    + [_t("b1", "B", f"u{i}", "failed") for i in range(4)]
    + [_t("b2", "B", f"u{i}", "passed") for i in range(3)] + [_t("b2", "B", "u3", "skipped")])

EMPTY_RO = ROLLOUTS.iloc[0:0]
EMPTY_T = TESTS.iloc[0:0]


def test_agent_labels_come_from_agent_labels_and_fall_back_to_the_stored_label():
    labels = fx.agent_labels(ROLLOUTS)
    assert list(labels) == ["oracle", "ablation", "terminus-2"]   # AGENTS' order
    assert labels["ablation"] == AGENT_LABELS["ablation"] and "verifier probe" in labels["ablation"]
    assert fx.agent_label("harbor:claude-code", "harbor:claude-code (imported)") == "harbor:claude-code (imported)"
    assert fx.agent_label("harbor:x", None) == "harbor:x"
    assert fx.agent_labels(EMPTY_RO) == {}


def test_filters_narrow_by_each_selection_and_empty_keeps_all():
    assert len(fx.filter_rollouts(ROLLOUTS)) == 7
    assert set(fx.filter_rollouts(ROLLOUTS, agents=["ablation"])["rollout_id"]) == {"a0", "a1", "a2"}
    assert set(fx.filter_rollouts(ROLLOUTS, models=["m1"])["rollout_id"]) == {"b0", "b1"}
    assert set(fx.filter_rollouts(ROLLOUTS, models=["(no model)"])["rollout_id"]) == {"a0", "a1", "a2", "o0"}
    assert set(fx.filter_rollouts(ROLLOUTS, runs=["r2"], tasks=["B"], models=["m2"])["rollout_id"]) == {"b2"}
    assert fx.model_options(ROLLOUTS) == ["(no model)", "m1", "m2"]
    picked = fx.filter_rollouts(ROLLOUTS, tasks=["B"])
    assert set(fx.tests_of(TESTS, picked)["rollout_id"]) == {"b1", "b2"}


def test_failure_classes_are_counted_per_agent_with_shares_of_all_its_rollouts():
    counts = fx.failure_class_counts(ROLLOUTS)
    rows = {(r.agent, r.failure_class): (r.rollouts, r.share) for r in counts.itertuples()}
    assert rows == {("ablation", "test_assertion"): (3, 1.0), ("terminus-2", "timeout"): (1, pytest.approx(1 / 3)),
                    ("terminus-2", "test_assertion"): (1, pytest.approx(1 / 3))}
    # FAILURE_CLASSES' order within an agent: timeout before test_assertion
    t2 = counts[counts["agent"] == "terminus-2"]["failure_class"].tolist()
    assert t2 == ["timeout", "test_assertion"]
    assert counts["agent_label"].iloc[0] == AGENT_LABELS["ablation"]
    fig = fx.failure_class_figure(counts)
    names = {t.name for t in fig.data}
    assert fx.CLASS_LABELS["timeout"] in names and fx.CLASS_LABELS["test_assertion"] in names
    assert fx.failure_class_counts(EMPTY_RO).empty
    assert fx.failure_class_counts(ROLLOUTS[ROLLOUTS["passed"]]).empty


def test_near_misses_count_failed_rollouts_whose_tests_ran_and_missed_one_or_two():
    nm = fx.near_misses(ROLLOUTS)
    # failed: a0 a1 a2 b0 b1 = 5; with tests: a0 a1 a2 b1 (b0 timed out before the verifier); near: a0 a1 a2
    assert (nm.failed, nm.with_tests, nm.near) == (5, 4, 3)
    assert nm.share == pytest.approx(0.75)
    assert fx.near_miss_rollouts(ROLLOUTS)["rollout_id"].tolist() == ["a0", "a2", "a1"]
    hist = fx.missed_tests_histogram(ROLLOUTS)
    assert hist.to_dict("records") == [{"n_failed": 1, "rollouts": 2, "near": True},
                                       {"n_failed": 2, "rollouts": 1, "near": True},
                                       {"n_failed": 4, "rollouts": 1, "near": False}]
    fig = fx.missed_tests_figure(hist)
    # the walk: amber and red bars with no legend; each colour is now a named trace in the legend
    assert [(list(t.x), t.marker.color) for t in fig.data] == [([1, 2], fx.NEAR_COLORS[True]),
                                                              ([4], fx.NEAR_COLORS[False])]
    assert fig.layout.showlegend and fig.data[0].name.startswith("near-miss (missed 2 tests or fewer")
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.tickformat == ",d"  # rollouts: whole numbers
    empty = fx.near_misses(EMPTY_RO)
    assert (empty.failed, empty.with_tests, empty.near, empty.share) == (0, 0, 0, None)
    assert fx.near_miss_rollouts(EMPTY_RO).empty and fx.missed_tests_histogram(EMPTY_RO).empty


def test_most_failing_tests_rank_by_failures_then_rate_and_count_error_as_failing():
    top = fx.most_failing_tests(TESTS, {"A": "task a"})
    first = top.iloc[0]
    assert (first.task_id, first.task, first.test_name, first.runs, first.failed) == ("A", "task a", "t2", 4, 3)
    # u0..u2 fail 1 of 2; u3 fails 1 of 2 too (skipped still ran: 2 rollouts reported it); t3's error counts
    rest = {(r.task_id, r.test_name): (r.failed, r.runs) for r in top.iloc[1:].itertuples()}
    assert rest == {("A", "t3"): (1, 4), ("B", "u0"): (1, 2), ("B", "u1"): (1, 2), ("B", "u2"): (1, 2),
                    ("B", "u3"): (1, 2)}
    assert "t1" not in set(top["test_name"])      # never failed: not listed
    assert len(fx.most_failing_tests(TESTS, top=2)) == 2
    assert fx.most_failing_tests(EMPTY_T).empty


def test_heatmap_has_failing_tasks_and_tests_with_zero_where_a_kept_test_passed():
    m = fx.heatmap_matrix(TESTS)
    assert list(m.index) == ["A", "B"]          # 4 failures each: ties by id
    assert list(m.columns) == ["t2", "t3", "u0", "u1", "u2", "u3"]   # t2 fails 3 times, the rest once
    assert m.loc["A", "t2"] == pytest.approx(0.75) and m.loc["A", "t3"] == pytest.approx(0.25)
    assert pd.isna(m.loc["A", "u0"]) and m.loc["B", "u0"] == pytest.approx(0.5)
    assert "t1" not in m.columns
    small = fx.heatmap_matrix(TESTS, max_tasks=1, max_tests=2)
    assert small.shape == (1, 2)
    fig = fx.heatmap_figure(m, {"A": "task a"})
    assert list(fig.data[0].y) == ["task a", "B"]
    # the walk: test names at -35 degrees ran into each other; upright, by the test's own name, distinct
    long = pd.DataFrame([[0.5, 1.0, 0.25]], index=["A"],
                        columns=["tests/test_outputs.py::test_sum", "tests/other.py::test_sum",
                                 "tests/test_outputs.py::test_the_report_lists_every_" + "x" * 40])
    wide = fx.heatmap_figure(long)
    assert wide.layout.xaxis.tickangle == -90
    assert list(wide.data[0].x)[:2] == ["test_sum", "test_sum (2)"] and len(wide.data[0].x[2]) <= 32
    assert fx.heatmap_matrix(EMPTY_T).empty


def test_consistent_and_sporadic_failing_tests_per_task():
    kinds = fx.failing_test_kinds(fx.tests_of(TESTS, fx.filter_rollouts(ROLLOUTS, agents=["ablation"])))
    assert dict(zip(kinds["test_name"], kinds["kind"])) == {"t1": "never", "t2": "consistent", "t3": "sporadic"}
    by_task = fx.consistency_by_task(TESTS, ["A", "B", "C"])
    assert by_task["A"].rollouts == 4 and by_task["A"].consistent == [] and by_task["A"].sporadic == ["t2", "t3"]
    assert by_task["B"].sporadic == ["u0", "u1", "u2", "u3"] and by_task["B"].rollouts == 2
    assert by_task["C"] == fx.FailingTests("C", 0, [], [])
    ablation_only = fx.consistency_by_task(fx.tests_of(TESTS, ROLLOUTS[ROLLOUTS["agent"] == "ablation"]))
    assert ablation_only["A"].consistent == ["t2"] and ablation_only["A"].sporadic == ["t3"]
    assert fx.failing_test_kinds(EMPTY_T).empty and fx.consistency_by_task(EMPTY_T) == {}


def test_the_drilldown_lists_failed_rollouts_first():
    assert fx.drilldown_order(ROLLOUTS) == ["a0", "a1", "a2", "b0", "b1", "o0", "b2"]


def test_one_rollouts_tests_put_failures_first_and_its_label_says_how_it_ended():
    tests = fx.rollout_tests(TESTS, "a1")
    assert tests["test_name"].tolist() == ["t2", "t3", "t1"]
    assert tests["outcome"].tolist() == ["failed", "error", "passed"]
    row = ROLLOUTS.set_index("rollout_id").loc["a1"].to_dict() | {"rollout_id": "a1"}
    assert fx.rollout_label(row) == "name-A · ablation #1 · test_assertion, 2/3 tests failed · a1"
    row0 = ROLLOUTS.set_index("rollout_id").loc["b0"].to_dict() | {"rollout_id": "b0"}
    assert fx.rollout_label(row0, {"B": "Task B"}) == "Task B · terminus-2 #0 · timeout · b0"
    row2 = ROLLOUTS.set_index("rollout_id").loc["b2"].to_dict() | {"rollout_id": "b2"}
    assert fx.rollout_label(row2) == "name-B · terminus-2 #2 · passed, 4 tests · b2"


SCRIPTED = "scripted-terminus:oracle (test double)"


def test_terminus2_against_the_scripted_replay_reads_as_a_test_double_on_failures_and_difficulty_alike():
    """Issue 22.7: Failures labelled scripted terminus-2 runs "terminus-2 (LLM agent)" while Difficulty
    said "(test double)"; both now ask workbench.double_rule and agree."""
    from analysis import difficulty as d
    scripted = pd.DataFrame([_ro("s0", "B", "terminus-2", 0, False, "test_assertion", 4, 1, model=SCRIPTED),
                             _ro("s1", "B", "terminus-2", 1, True, None, 4, 0, model=SCRIPTED)])
    label = fx.agent_labels(scripted)["terminus-2"]
    assert "LLM agent" not in label and "test double" in label
    assert d.agent_label("terminus-2", SCRIPTED).startswith(label)
    assert fx.failure_class_counts(scripted)["agent_label"].tolist() == [label]
    mixed = pd.concat([scripted, ROLLOUTS[ROLLOUTS["agent"] == "terminus-2"]])
    assert "some runs against a scripted replay model (test double)" in fx.agent_labels(mixed)["terminus-2"]
    assert fx.agent_labels(ROLLOUTS)["terminus-2"] == AGENT_LABELS["terminus-2"]      # real models: unchanged
    assert "simulated, not a model" in fx.agent_label("noisy-oracle")
