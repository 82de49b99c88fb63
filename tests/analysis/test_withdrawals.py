"""The Tasks page's lines on a withdrawn task and on the trajectory judge's verdict."""
import pandas as pd

from analysis import withdrawals


def test_a_withdrawal_says_who_when_and_why():
    note = withdrawals.withdrawal_note({"source": "trajectory_judge", "event_at": pd.Timestamp("2026-12-01 17:40"),
                                        "reason": "test_x wants a file never named"})
    assert note.startswith("Withdrawn from the accepted set by the trajectory judge on 2026-12-01 17:40: "
                           "test_x wants a file never named.")
    user = withdrawals.withdrawal_note({"source": "user", "event_at": pd.Timestamp(0), "reason": "r"})
    assert "by a person" in user


def test_the_trajectory_judges_newest_verdict_in_a_line():
    assert withdrawals.judgement_note(pd.DataFrame()) is None
    j = pd.DataFrame({"verdict": ["too_hard", "design_flaw"], "model": ["m2", "m1"], "n_rollouts": [4, 3],
                      "reason": ["The agents gave up.", "old"],
                      "evidence": [{"consistent": ["t.py::test_a", "t.py::test_b"]}, {}]})
    assert withdrawals.judgement_note(j) == ("Trajectory judge (m2): too hard after 4 failed LLM rollouts — The "
                                             "agents gave up. Tests failed in every rollout: t.py::test_a, t.py::test_b.")


def test_the_scripted_judge_is_named_a_test_double():
    j = pd.DataFrame({"verdict": ["design_flaw"], "model": ["scripted-trajectory-judge"], "n_rollouts": [3],
                      "reason": ["x"], "evidence": [{}]})
    assert withdrawals.judgement_note(j).startswith("Trajectory judge (scripted-trajectory-judge (test double)): ")
