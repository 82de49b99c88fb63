"""Scoring the curation against hand labels, on small hand-made export rows."""
from __future__ import annotations

import pytest

from analysis.curation_eval import confusion_lines, match_labels, score

ROOT = "/data/corpus"


def _row(path: str, status: str, reason: str | None = None) -> dict:
    return {"source_path": f"{ROOT}/{path}", "status": status, "reason": reason, "name": path}


ROWS = [
    _row("a/jq", "accepted"),
    _row("a/ffmpeg", "accepted"),
    _row("a/notion", "accepted"),                       # wrongly accepted
    _row("b/gh-pr", "rejected", "needs_account"),
    _row("b/k8s", "rejected", "needs_account"),         # right rejection, wrong reason
    _row("b/blog", "rejected", "not_terminal_work"),
    _row("b/tool", "pending", "os"),                    # a warning left it to a person
    _row("c/skills/x/sub/deep", "rejected", "no_workflow"),
]
LABELS = [
    {"path": "a/jq", "label": "accept", "reason": "executable"},
    {"path": "a/ffmpeg", "label": "accept", "reason": "executable"},
    {"path": "b/tool", "label": "accept", "reason": "executable"},
    {"path": "a/never-ingested", "label": "accept", "reason": "executable"},
    {"path": "a/notion", "label": "reject", "reason": "needs_account"},
    {"path": "b/gh-pr", "label": "reject", "reason": "needs_account"},
    {"path": "b/k8s", "label": "reject", "reason": "needs_network_service"},
    {"path": "b/blog", "label": "reject", "reason": "not_terminal_work"},
    {"path": "x/sub/deep", "label": "reject", "reason": "no_workflow"},   # matched by its path's end
]


def test_precision_recall_and_reason_right():
    s = score(ROWS, LABELS)
    assert (s.labelled, s.matched) == (9, 8)
    assert (s.true_accepts, s.false_accepts, s.missed_accepts) == (2, 1, 2)
    assert s.accepted_precision == pytest.approx(2 / 3)
    assert s.accepted_recall == pytest.approx(2 / 4)     # pending and not ingested are not accepted
    assert (s.correct_rejections, s.reason_right_count) == (4, 3)
    assert s.reason_right == pytest.approx(3 / 4)
    assert s.false_accept_paths == ["a/notion"]
    assert s.wrong_reason == [("b/k8s", "needs_network_service", "needs_account")]
    assert s.missing_paths == ["a/never-ingested"]


def test_confusion_table_has_label_reasons_down_and_predictions_across():
    s = score(ROWS, LABELS)
    assert s.confusion == {
        "executable": {"accepted": 2, "pending": 1, "missing": 1},
        "needs_account": {"accepted": 1, "needs_account": 1},
        "needs_network_service": {"needs_account": 1},
        "not_terminal_work": {"not_terminal_work": 1},
        "no_workflow": {"no_workflow": 1},
    }
    lines = confusion_lines(s.confusion)
    assert lines[0].split()[:5] == ["label", "\\", "predicted", "accepted", "missing"]
    assert lines[1].split()[0] == "executable"          # accepts first
    assert len(lines) == 1 + len(s.confusion)


def test_a_path_matches_only_on_whole_folder_names():
    rows = [_row("b/tool-v2", "accepted")]
    [o] = match_labels(rows, [{"path": "tool-v2", "label": "accept"}])
    assert o.predicted == "accepted"
    [o] = match_labels(rows, [{"path": "v2", "label": "accept"}])
    assert o.predicted == "missing"


def test_nothing_to_score_gives_none_not_a_division_error():
    s = score([_row("a/x", "rejected", "gui")], [{"path": "a/x", "label": "reject", "reason": "gui"}])
    assert s.accepted_precision is None and s.accepted_recall is None and s.reason_right == 1.0
