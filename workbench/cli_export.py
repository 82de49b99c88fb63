"""What leaves or enters the workspace as files: `skills export` and `tasks export` (the current
skills with the rules that fired, the tasks a batch made with their steps, as JSONL or CSV),
`export harbor` (accepted tasks as Harbor task folders), `export trajectories` (rollouts as an
SFT dataset) and `import harbor-job` (a Harbor job's trials as rollouts)."""
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
from workbench.console import err, out
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


def cmd_export_harbor(args) -> int:
    from pipeline.export.harbor import export_harbor
    ws = Workspace.open(args.workspace)
    report = export_harbor(ws, Path(args.out), task_ids=args.task or None)
    if args.json:
        print(json.dumps(asdict(report), indent=2, default=str))
    else:
        out.print(f"Exported {len(report.exported)} task(s) to {args.out}"
                  + (f"; skipped {len(report.skipped)}" if report.skipped else ""), soft_wrap=True)
        for e in report.exported:
            if e.renamed_from:
                err.print(f"  {e.task_id}: folder {e.renamed_from!r} was taken, written to {e.slug!r}", soft_wrap=True)
        for item in report.skipped:
            err.print(f"  skipped {item.task_id}: {item.reason}", soft_wrap=True)
        if report.left_behind:
            err.print(f"[red]{len(report.left_behind)} accepted task(s) were NOT exported[/red] (reasons above).")
    return 1 if report.left_behind else 0


def cmd_export_trajectories(args) -> int:
    """0 when written (even with nothing left after the filters: the card says why), 2 when refused."""
    from pipeline.export.trajectories import TrajectoryExportError, export_trajectories
    ws = Workspace.open(args.workspace)
    try:
        report = export_trajectories(ws, args.out, fmt=args.format, flt=args.filter, run_id=args.run,
                                     benchmark=args.benchmark, agents=args.agents, episodes=args.episodes)
    except TrajectoryExportError as exc:
        err.print(f"[red]Cannot export trajectories:[/red] {exc}", soft_wrap=True)
        return 2
    if args.json:
        print(json.dumps(asdict(report), indent=2, default=str))
    else:
        out.print(report.summary(), soft_wrap=True)
        for d in report.contaminated[:20]:
            err.print(f"  dropped {d.rollout_id}{' ' + d.episode if d.episode else ''} ({d.task}): {d.why}",
                      soft_wrap=True)
        for d in report.unreadable[:20]:
            err.print(f"  skipped {d.rollout_id} ({d.task}): {d.why}", soft_wrap=True)
        out.print(f"Dataset card: {report.out / 'README.md'}", soft_wrap=True)
    return 0


def cmd_import_harbor_job(args) -> int:
    """0 when every trial was imported; 1 when some were imported and others not (reported);
    2 when nothing was."""
    from pipeline.export.harbor_job_import import import_harbor_job
    ws = Workspace.open(args.workspace)
    report = import_harbor_job(ws, Path(args.dir))
    if args.json:
        print(json.dumps(asdict(report), indent=2, default=str))
    else:
        out.print(report.summary(), soft_wrap=True)
        for title, items in (("matched no task", report.unmatched), ("could not be read", report.malformed),
                             ("note", report.notes)):
            for p in items:
                err.print(f"  {title}: {p.trial or args.dir}: {p.what}", soft_wrap=True)
    if not report.imported:
        return 2
    return 1 if report.unmatched or report.malformed else 0


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

    s = sub.add_parser("tasks", parents=[common], help="the synthesized tasks: export, verifier strength")
    tsub = s.add_subparsers(dest="tasks_command", required=True)
    te = tsub.add_parser("export", parents=[common],
                         help="one JSON row per task: id, name, verdict, category, bundle folder, steps "
                              "(skill id, skill name, recipe, fidelity)")
    te.add_argument("--format", choices=["jsonl"], default="jsonl", help="jsonl: one JSON object a line (the only one)")
    te.add_argument("--run-id", default=None, help="only the tasks of this synthesis run (default: every task)")
    te.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout")
    te.set_defaults(func=cmd_tasks_export)
    from workbench import cli_strength
    cli_strength.add_command(tsub, common)

    from pipeline.export.chat_rows import EPISODES
    from pipeline.export.trajectories import FILTERS, FORMATS
    s = sub.add_parser("export", parents=[common], help="export tasks or trajectories")
    esub = s.add_subparsers(dest="export_command", required=True)
    eh = esub.add_parser("harbor", parents=[common], help="accepted tasks as Harbor task folders")
    eh.add_argument("out", help="folder to write the tasks into")
    eh.add_argument("--task", action="append", help="only this task id (repeatable)")
    eh.add_argument("--json", action="store_true", help="print the report as JSON")
    eh.set_defaults(func=cmd_export_harbor)
    et = esub.add_parser("trajectories", parents=[common],
                         help="rollouts' trajectories as an SFT dataset with a dataset card (README.md)")
    et.add_argument("out", type=Path, help="folder to write into")
    et.add_argument("--format", choices=FORMATS, default="chat-jsonl",
                    help="atif: the trajectory.json files; chat-jsonl (default) or parquet: rows in the shape of "
                         "Harbor's traces export (conversations, agent, model, task, episode, run_id, trial_name)")
    et.add_argument("--filter", choices=FILTERS, default="all",
                    help="all (default); complete: the agent finished on its own; success: reward 1")
    et.add_argument("--run", default=None, help="only this rollout run (default: every run)")
    et.add_argument("--benchmark", type=Path, default=None,
                    help="drop rows sharing a 14-gram with any text file under this folder (named in the card)")
    et.add_argument("--agents", nargs="+", default=None,
                    help="only these agents; also the only way to include the scripted probes (nop, oracle, "
                         "ablation), which chat-jsonl and parquet leave out otherwise")
    et.add_argument("--episodes", choices=EPISODES, default="all",
                    help="chat rows: all (default; one row per agent turn, as Harbor exports) or last")
    et.add_argument("--json", action="store_true", help="print the report as JSON")
    et.set_defaults(func=cmd_export_trajectories)

    s = sub.add_parser("import", parents=[common], help="bring outside results into the workspace")
    isub = s.add_subparsers(dest="import_command", required=True)
    ih = isub.add_parser("harbor-job", parents=[common],
                         help="a Harbor job folder (jobs/<job>/<trial>/...) as rollouts of the matching tasks")
    ih.add_argument("dir", help="the job folder (or a folder of jobs)")
    ih.add_argument("--json", action="store_true", help="print the report as JSON")
    ih.set_defaults(func=cmd_import_harbor_job)
