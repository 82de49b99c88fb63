"""`workbench skills evaluate --labels FILE`: how the curation agrees with hand labels —
precision and recall of "accepted", the share of correct rejections whose reason is right,
and the confusion table (label reason x predicted)."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from analysis.curation_eval import CurationScores, confusion_lines, score
from workbench.console import err
from workbench.workspace import Workspace

LABEL_VALUES = ("accept", "reject")


class LabelFileError(ValueError):
    pass


def read_jsonl(path: Path, what: str) -> list[dict]:
    """The JSON objects of a JSONL file; a clear error naming the file and line otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelFileError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelFileError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise LabelFileError(f"{path}:{n}: a {what} line must be a JSON object")
        records.append(rec)
    return records


def read_labels(path: Path) -> list[dict]:
    labels = read_jsonl(path, "labels file")
    for n, rec in enumerate(labels, start=1):
        if not isinstance(rec.get("path"), str) or not rec["path"].strip():
            raise LabelFileError(f"{path}: label {n} has no 'path' (the skill folder relative to the corpus)")
        if rec.get("label") not in LABEL_VALUES:
            raise LabelFileError(f"{path}: label {n} ({rec['path']}) has label {rec.get('label')!r}; "
                                 f"expected one of {', '.join(LABEL_VALUES)}")
    if not labels:
        raise LabelFileError(f"{path}: no labels")
    return labels


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_lines(s: CurationScores) -> list[str]:
    lines = [f"{s.labelled} labels, {s.matched} found in the workspace",
             f"precision of accepted {_fmt(s.accepted_precision)} "
             f"({s.true_accepts} right, {s.false_accepts} wrongly accepted)",
             f"recall of accepted    {_fmt(s.accepted_recall)} ({s.missed_accepts} labelled accepts not accepted)",
             f"reason right          {_fmt(s.reason_right)} "
             f"({s.reason_right_count} of {s.correct_rejections} correct rejections)",
             "", *confusion_lines(s.confusion)]
    if s.missing_paths:   # "78 found" alone did not say which two or why
        lines += ["", "labelled, but no skill has that path (not ingested? the ingest report and the "
                      "Overview page list what was not):", *(f"  {p}" for p in s.missing_paths)]
    if s.false_accept_paths:
        lines += ["", "wrongly accepted:", *(f"  {p}" for p in s.false_accept_paths)]
    if s.wrong_reason:
        lines += ["", "rejected with another reason (label -> shown):",
                  *(f"  {p}: {lab} -> {got}" for p, lab, got in s.wrong_reason)]
    return lines


def cmd_skills_evaluate(args, rows_of) -> int:
    try:
        labels = read_labels(args.labels)
        if args.export:
            rows = read_jsonl(args.export, "skills export")
        else:
            rows = [asdict(r) for r in rows_of(Workspace.open(args.workspace))]
    except LabelFileError as exc:
        err.print(f"[red]{exc}[/red]", soft_wrap=True, markup=True, highlight=False)
        return 2
    bad = next((n for n, r in enumerate(rows, 1) if not {"source_path", "status"} <= set(r)), None)
    if bad:
        err.print(f"[red]{args.export}: row {bad} lacks source_path or status; is it a "
                  "`workbench skills export --format jsonl` file?[/red]", soft_wrap=True)
        return 2
    s = score(rows, labels)
    if args.json:
        sys.stdout.write(json.dumps(asdict(s), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\n".join(report_lines(s)) + "\n")
    return 0


def add_command(ssub, common: argparse.ArgumentParser, rows_of) -> None:
    """`rows_of(workspace)`: the current skills' export rows with their reasons."""
    ev = ssub.add_parser("evaluate", parents=[common],
                         help="compare the curation with hand labels: precision and recall of accepted, "
                              "reason right among correct rejections, confusion table")
    ev.add_argument("--labels", type=Path, required=True,
                    help="JSONL of {path, label accept|reject, reason}; path relative to the corpus root")
    ev.add_argument("--export", type=Path, default=None,
                    help="score this `skills export` JSONL file instead of the workspace's current skills")
    ev.add_argument("--json", action="store_true", help="print the scores as one JSON object")
    ev.set_defaults(func=lambda args: cmd_skills_evaluate(args, rows_of))
