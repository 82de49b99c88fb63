"""`workbench skills evaluate --labels FILE`, run as a user would, on the demo corpus ingested
into a real DuckDB workspace, with a labels file written here."""
from __future__ import annotations

import json

from tests.helpers import cli

LABELS = [
    {"path": "archives-compression/archive-manager-bulk-extract", "label": "reject", "reason": "gui"},
    {"path": "databases/pinecone-vector-upsert", "label": "reject", "reason": "needs_account"},
    {"path": "archives-compression/zstd-dictionary-small-files", "label": "accept", "reason": "executable"},
    {"path": "nowhere/not-in-the-corpus", "label": "accept", "reason": "executable"},
]


def _write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_evaluate_prints_scores_and_the_confusion_table(demo_workspace, tmp_path):
    labels = tmp_path / "labels.jsonl"
    _write(labels, LABELS)
    r = cli("skills", "evaluate", "--workspace", str(demo_workspace.root), "--labels", str(labels), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert (s["labelled"], s["matched"]) == (4, 3)
    assert (s["true_accepts"], s["false_accepts"], s["missed_accepts"]) == (1, 0, 1)
    assert s["accepted_precision"] == 1.0 and s["accepted_recall"] == 0.5
    # both rejections are right; the pinecone one shows paid_service where the label says needs_account
    assert (s["correct_rejections"], s["reason_right_count"]) == (2, 1)
    assert s["confusion"]["gui"] == {"gui": 1}
    assert s["confusion"]["needs_account"] == {"paid_service": 1}
    assert s["confusion"]["executable"] == {"accepted": 1, "missing": 1}

    r = cli("skills", "evaluate", "--workspace", str(demo_workspace.root), "--labels", str(labels))
    assert r.returncode == 0, r.stderr
    assert "precision of accepted 1.000" in r.stdout and "recall of accepted    0.500" in r.stdout
    assert "reason right          0.500 (1 of 2 correct rejections)" in r.stdout
    assert "databases/pinecone-vector-upsert: needs_account -> paid_service" in r.stdout
    # the label no skill matches is named, with where to look
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("labelled, but no skill has that path"))
    assert lines[at + 1] == "  nowhere/not-in-the-corpus"


def test_evaluate_scores_a_saved_export_file_too(demo_workspace, tmp_path):
    labels, export = tmp_path / "labels.jsonl", tmp_path / "skills.jsonl"
    _write(labels, LABELS)
    r = cli("skills", "export", "--workspace", str(demo_workspace.root), "--out", str(export))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    assert next(x for x in rows if x["name"] == "pinecone-vector-upsert")["reason"] == "paid_service"
    r = cli("skills", "evaluate", "--workspace", str(demo_workspace.root), "--labels", str(labels),
            "--export", str(export), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["reason_right_count"] == 1


def test_evaluate_bad_labels_exit_2_naming_the_file_and_line(demo_workspace, tmp_path):
    ws = str(demo_workspace.root)
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"path": "a", "label": "accept"}\n{not json\n', encoding="utf-8")
    r = cli("skills", "evaluate", "--workspace", ws, "--labels", str(bad))
    assert r.returncode == 2 and f"{bad}:2: not JSON" in r.stderr and r.stdout == ""
    _write(bad, [{"path": "a", "label": "maybe"}])
    r = cli("skills", "evaluate", "--workspace", ws, "--labels", str(bad))
    assert r.returncode == 2 and "label 1 (a) has label 'maybe'; expected one of accept, reject" in r.stderr
    r = cli("skills", "evaluate", "--workspace", ws, "--labels", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "cannot read labels file" in r.stderr
    _write(bad, LABELS)
    not_export = tmp_path / "other.jsonl"
    _write(not_export, [{"task_id": "t1"}])
    r = cli("skills", "evaluate", "--workspace", ws, "--labels", str(bad), "--export", str(not_export))
    assert r.returncode == 2 and "row 1 lacks source_path or status" in r.stderr
