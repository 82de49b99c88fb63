"""`workbench skills export` and `workbench tasks export`: the current skills with the rules
that fired, and the tasks a batch made with their steps, as JSONL (or CSV for skills) for scripts."""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from pipeline.filters.reasons import primary_reason
from workbench import cli_evaluate
from workbench.console import err
from workbench.store.export_rows import SKILL_STATUSES, FiredRule, SkillRow, run_exists, skill_rows, task_rows
from workbench.workspace import Workspace

SKILL_CSV_COLUMNS = ("id", "name", "source_path", "status", "reason", "category", "tools", "binaries", "rules")
LIST_SEPARATOR = "; "


def skills_csv(rows: list[SkillRow]) -> str:
    """List fields joined with "; ", the fired rules as one JSON string column."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SKILL_CSV_COLUMNS)
    for r in rows:
        w.writerow([r.id, r.name, r.source_path, r.status, r.reason or "", r.category or "", LIST_SEPARATOR.join(r.tools),
                    LIST_SEPARATOR.join(r.binaries), json.dumps([asdict(x) for x in r.rules], ensure_ascii=False)])
    return buf.getvalue()


def jsonl(rows) -> str:
    return "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in rows)


def _emit(text: str, n_rows: int, out_path: Path | None) -> int:
    """To stdout, or to `out_path` through a temporary file beside it, so a failed write
    leaves an existing file as it was."""
    if out_path is None:
        sys.stdout.write(text)
        return 0
    try:
        fd, tmp = tempfile.mkstemp(dir=out_path.parent, prefix=f".{out_path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.replace(tmp, out_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        err.print(f"[red]Cannot write --out {out_path}:[/red] {exc.strerror or exc}", soft_wrap=True)
        return 2
    err.print(f"Wrote {n_rows} rows to {out_path}", soft_wrap=True)
    return 0


def rules_reason(rules: list[FiredRule]) -> str | None:
    return primary_reason((r.rule, r.verdict, r.evidence) for r in rules)


def current_skill_rows(ws: Workspace, statuses: list[str] | None = None) -> list[SkillRow]:
    """The export rows with the reason each skill that is not accepted shows."""
    return skill_rows(ws.db, statuses, rules_reason)


def cmd_skills_export(args) -> int:
    ws = Workspace.open(args.workspace)
    rows = current_skill_rows(ws, args.status)
    return _emit(skills_csv(rows) if args.format == "csv" else jsonl(rows), len(rows), args.out)


def cmd_tasks_export(args) -> int:
    ws = Workspace.open(args.workspace)
    if args.run_id and not run_exists(ws.db, args.run_id):
        err.print(f"[red]No synthesis run {args.run_id!r} in {ws.root}.[/red] "
                  "The Synthesis page (or `workbench status`) lists the runs.", soft_wrap=True)
        return 2
    rows = task_rows(ws.db, ws.root, args.run_id)
    return _emit(jsonl(rows), len(rows), args.out)


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("skills", parents=[common], help="the workspace's skills")
    ssub = s.add_subparsers(dest="skills_command", required=True)
    se = ssub.add_parser("export", parents=[common],
                         help="one row per current skill: id, name, source path, status, reason (why it is not "
                              "accepted), category, tools, binaries, the rules that fired and their evidence")
    se.add_argument("--format", choices=["jsonl", "csv"], default="jsonl",
                    help="jsonl (default): one JSON object a line; csv: lists joined with '; ', "
                         "rules as a JSON string column")
    se.add_argument("--status", nargs="+", action="extend", choices=SKILL_STATUSES, default=None,
                    help="only skills of these statuses (curation applied); may be given more than once")
    se.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout")
    se.set_defaults(func=cmd_skills_export)
    cli_evaluate.add_command(ssub, common, current_skill_rows)

    s = sub.add_parser("tasks", parents=[common], help="the synthesized tasks")
    tsub = s.add_subparsers(dest="tasks_command", required=True)
    te = tsub.add_parser("export", parents=[common],
                         help="one JSON row per task: id, name, verdict, category, bundle folder, steps "
                              "(skill id, skill name, recipe, fidelity)")
    te.add_argument("--format", choices=["jsonl"], default="jsonl", help="jsonl: one JSON object a line (the only one)")
    te.add_argument("--run-id", default=None, help="only the tasks of this synthesis run (default: every task)")
    te.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout")
    te.set_defaults(func=cmd_tasks_export)
