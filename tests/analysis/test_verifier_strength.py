"""analysis.verifier_strength: a task's commands ordered for a reader, the summary line, and the
batch histogram with its target."""
from __future__ import annotations

import pandas as pd

from analysis import verifier_strength as vs
from tests.pages.test_strength_pages import REPORT


def test_commands_are_ordered_untested_first_and_named_by_verdict():
    table = vs.command_table(REPORT)
    assert table["verdict"].tolist() == ["untested", "no effect", "caught"]
    assert table.loc[2, "failing tests"] == "test_outputs.py::test_count"
    unread = dict(REPORT["commands"][2], effect=None)
    assert vs.command_verdict(unread) == "state unread"
    assert vs.command_table(None).empty


def test_the_summary_counts_and_says_why_there_is_no_figure():
    assert vs.summary(REPORT) == ("50% of the effective solution commands are caught by a test (1 of 2); "
                                  "1 untested, 1 without effect.")
    assert vs.summary(None) == "Not measured."
    assert vs.summary({"strength": None, "problem": "the full solution gives no reference: x"}).endswith(": x")


def test_the_histogram_marks_the_target_and_counts_the_tasks_below_it():
    frame = pd.DataFrame({"strength": [1.0, 0.96, 0.5, None]})
    fig = vs.strength_figure(frame)
    assert sorted(fig.data[0].x) == [50.0, 96.0, 100.0]
    assert fig.layout.title.text == "Verifier strength of 3 task(s): 1 below the target"
    assert fig.layout.shapes[0].x0 == 95.0
    assert vs.strength_figure(pd.DataFrame(columns=["strength"])).layout.title.text.startswith("Verifier strength of 0")
