"""analysis/rollout_eval.py on hand-made frames shaped like workbench.store.rollouts' readers,
with the figures worked out by hand."""
from __future__ import annotations

import json

import pandas as pd

from analysis import rollout_eval as ev


def _ro(rid, task, agent, sample, passed, cls=None, n_tests=2, n_failed=0, left=None, steps=3, total_s=10.0,
        error=None, details_as_text=True, aborted=False):
    details = {} if agent != "ablation" else {"left_out": left, "steps": steps if left else 0}
    if aborted:
        details["script_failed"] = "solution/solve.sh exited with code 1"
    return {"rollout_id": rid, "run_id": f"run-{agent}", "task_id": task, "agent": agent, "agent_label": agent,
            "model": None, "sample": sample, "passed": passed, "failure_class": cls, "n_tests": n_tests,
            "n_failed": n_failed, "task_name": f"name-{task}", "category": "c", "n_steps": 2, "recipes": None,
            "provider": "offline", "sampler": "s", "withdrawn": False, "total_s": total_s, "agent_s": total_s / 2,
            "verifier_s": total_s / 4, "error": error,
            "details": json.dumps(details) if details_as_text else details}


def _step(n, label):
    return {"step": n, "label": label, "text": f"cmd{n}", "marked": True, "lines": [[n, n + 1]]}


# A: 3 steps; ablation leaves out each once, step 3 ("echo done") goes unnoticed.
# B: 2 steps; both caught (one by a timeout, not a test). C: no step to leave out.
# The oracle fails B once (a finding); the no-op passes C (a finding).
ROLLOUTS = pd.DataFrame([
    _ro("a0", "A", "ablation", 0, False, "test_assertion", 2, 1, _step(1, "step 1 (make)"), aborted=True),
    _ro("a1", "A", "ablation", 1, False, "test_assertion", 2, 2, _step(2, "step 2 (copy)")),
    _ro("a2", "A", "ablation", 2, True, None, 2, 0, _step(3, "step 3 (echo done)"), details_as_text=False),
    _ro("b0", "B", "ablation", 0, False, "test_assertion", 2, 1, _step(1, "step 1"), steps=2),
    _ro("b1", "B", "ablation", 1, False, "timeout", 0, 0, _step(2, "step 2"), steps=2),
    _ro("c0", "C", "ablation", 0, False, "crashed", 0, 0, None),
    _ro("oA", "A", "oracle", 0, True, total_s=4.0),
    _ro("oB", "B", "oracle", 0, False, "test_assertion", 2, 1, total_s=6.0, error="tests failed"),
    _ro("oC", "C", "oracle", 0, True, total_s=8.0),
    _ro("nA", "A", "nop", 0, False, "test_assertion", 2, 2),
    _ro("nC", "C", "nop", 0, True),
])


def _t(rid, name, outcome):
    return {"rollout_id": rid, "task_id": rid, "agent": "x", "model": None, "test_name": name, "outcome": outcome,
            "message": ""}


# Tests named after their step (the offline synthesizer's test_s<k>_…).
TESTS = pd.DataFrame([_t("a0", "test_s1_a", "passed"), _t("a0", "test_s2_b", "failed"),
                      _t("a1", "test_s1_a", "failed"), _t("a1", "test_s2_b", "failed"),
                      _t("a2", "test_s1_a", "passed"), _t("a2", "test_s2_b", "passed"),
                      _t("b0", "test_s1_a", "passed"), _t("b0", "test_s2_b", "failed")])


def test_pass_rates_per_agent_in_the_protocols_order():
    rates = ev.pass_rates(ROLLOUTS).set_index("agent")
    assert list(rates.index) == ["nop", "oracle", "ablation"]
    assert rates.loc["oracle", ["rollouts", "passed", "tasks", "tasks_all_passed"]].tolist() == [3, 2, 3, 2]
    assert rates.loc["nop", "pass_rate"] == 0.5
    assert "verifier probe" in rates.loc["ablation", "agent_label"]


def test_off_expectation_lists_the_failed_oracle_and_the_passing_nop():
    off = ev.off_expectation(ROLLOUTS)
    assert off[["agent", "task_id"]].values.tolist() == [["nop", "C"], ["oracle", "B"]]
    assert off.loc[1, "error"] == "tests failed"


def test_ablation_probes_read_the_left_out_step_from_text_or_dict_details():
    p = ev.ablation_probes(ROLLOUTS)
    assert len(p) == 6
    assert p.loc[2, "step_label"] == "step 3 (echo done)" and not p.loc[2, "caught"]   # dict details
    assert p.loc[3, "step_label"] == "step 1" and p.loc[3, "steps"] == 2               # JSON text details
    assert p.loc[0, "aborted"] and not p.loc[1, "aborted"]
    assert not p.loc[5, "probed"] and pd.isna(p.loc[5, "step"])                        # C: nothing to leave out


def test_catch_rate_counts_probed_rollouts_only_and_says_what_caught_them():
    c = ev.catch_rate(ev.ablation_probes(ROLLOUTS))
    assert (c.probed, c.caught, c.by_tests, c.missed, c.not_probed) == (5, 4, 3, 1, 1)
    assert (c.aborted, c.caught_intact) == (1, 3)      # a0 stopped at an error; a1, b0, b1 ran on
    assert c.rate == 0.8


def test_own_step_tests_tell_a_step_checked_itself_from_one_seen_only_through_later_steps():
    assert ev.step_of_test("test_s12_rows") == 12 and ev.step_of_test("test_rows") is None
    own = ev.own_step_tests(ev.ablation_probes(ROLLOUTS), TESTS)
    # a1 (step 2 out) failed test_s2_b; a0 and b0 (step 1 out) passed test_s1_a and failed only
    # test_s2_b; a2 (step 3) has no test_s3_*; b1's tests never ran; c0 was not probed
    assert (own.with_own, own.own_failed, own.only_others, own.without_own) == (3, 1, 2, 2)


def test_weakest_tasks_first_with_the_steps_left_out_unnoticed():
    w = ev.weakest_tasks(ev.ablation_probes(ROLLOUTS))
    assert w["task_id"].tolist() == ["A", "B"]            # C has no probe
    a = w.iloc[0]
    assert (a["probes"], a["caught"], a["steps"], a["steps_probed"]) == (3, 2, 3, 3)
    assert a["missed_steps"] == ["step 3 (echo done)"]
    assert w.iloc[1]["catch_rate"] == 1.0 and w.iloc[1]["missed_steps"] == []


def test_seconds_per_rollout():
    s = ev.seconds_per_rollout(ROLLOUTS).set_index("agent")
    assert s.loc["oracle", "mean_s"] == 6.0 and s.loc["oracle", "p50_s"] == 6.0
    assert s.loc["oracle", "agent_s"] == 3.0 and s.loc["oracle", "verifier_s"] == 1.5


def test_report_lines_carry_every_figure():
    text = "\n".join(ev.report_lines(ROLLOUTS, TESTS))
    assert "oracle: 2/3 = 66.7% over 3 tasks (2 all passed)" in text
    assert "off expectation (oracle failed / nop passed): 2" in text
    assert "ablation catch rate: 4/5 = 80.0% (by a failed test 3; missed 1; not probed 1); script stopped at an error " \
           "without the step 1/5, caught with the rest of the script run 3" in text
    assert "A name-A: caught 2/3 (steps 3, probed 3); unnoticed: step 3 (echo done)" in text
    # ablation's checks: a0 1/2, a1 0/2, a2 2/2, b0 1/2 -> 4/8; tasks 1 passed of 6 rollouts
    assert "ablation: checks 4/8 = 50.0%, tasks 1/6 = 16.7%" in text
    # ablation's failed rollouts whose tests ran: a0 (1 missed), a1 (2), b0 (1): all near
    assert "ablation: 3/3 = 100.0% (failed 5)" in text
    assert "ablation timeout: 1" in text
    assert "left-out step with tests of its own: 3 (one of them failed 1; only other steps' tests failed 2); " \
           "step with none 2" in text


def test_empty_frames_give_empty_figures():
    empty = ROLLOUTS.iloc[0:0]
    assert ev.pass_rates(empty).empty and ev.off_expectation(empty).empty
    assert ev.catch_rate(ev.ablation_probes(empty)).rate is None
    assert ev.weakest_tasks(ev.ablation_probes(empty)).empty
