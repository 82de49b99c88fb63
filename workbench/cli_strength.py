"""`workbench tasks strength`: verifier strength per task (pipeline/verify/strength.py), measured
on demand — two full runs and one run per solution command each — and stored per bundle, so a
task is measured once unless its bundle changes (or --again)."""
from __future__ import annotations

import argparse
import json
import statistics

from workbench.console import err, out
from workbench.workspace import Workspace


def _selected(ws: Workspace, args):
    from workbench.store import strength as strength_store
    from workbench.store import tasks as store
    frame = store.tasks_frame(ws.db)
    if args.tasks:
        missing = sorted(set(args.tasks) - set(frame["task_id"]))
        if missing:
            raise ValueError(f"no task {', '.join(missing)} in {ws.root}")
        frame = frame[frame["task_id"].isin(args.tasks)]
    else:
        accepted = set(store.accepted_tasks(ws.db)["task_id"])
        frame = frame[frame["task_id"].isin(accepted)]
        if args.run_id:
            frame = frame[frame["run_id"] == args.run_id]
    done = set() if args.again else strength_store.measured(ws.db)
    return [r for r in frame.sort_values("name").itertuples() if (r.task_id, r.bundle_hash) not in done]


def cmd_tasks_strength(args) -> int:
    from analysis.verifier_strength import TARGET     # here, not at start-up: it brings plotly
    from pipeline.verify.strength import measure_strength
    from workbench.sandbox.bundle import BundleError, read_bundle
    from workbench.sandbox.engine import Engine, SandboxError
    from workbench.sandbox.task_toml import parse
    from workbench.store import strength as strength_store
    ws = Workspace.open(args.workspace)
    if args.concurrency < 1:
        err.print(f"[red]--concurrency must be at least 1, got {args.concurrency}[/red]")
        return 2
    try:
        todo = _selected(ws, args)
        engine = Engine()
    except (ValueError, SandboxError) as exc:
        err.print(f"[red]{exc}[/red]", soft_wrap=True)
        return 2
    if not todo:
        out.print("Nothing to measure: every selected task is measured on its current bundle (--again measures anew).")
        return 0
    results = []
    try:
        for i, t in enumerate(todo, 1):
            try:
                bundle = read_bundle(ws.root / t.bundle_dir)
                cfg = parse(bundle.text("task.toml"))
            except (BundleError, OSError, ValueError) as exc:
                err.print(f"[{i}/{len(todo)}] {t.name}: skipped, its bundle cannot be read: {exc}", soft_wrap=True)
                continue
            built = engine.build(bundle.under("environment"), bundle.environment_hash(), cfg.build_timeout_sec)
            if not built.ok:
                err.print(f"[{i}/{len(todo)}] {t.name}: skipped, its image does not build: {built.reason}", soft_wrap=True)
                continue
            report = measure_strength(engine, built.image, bundle, cfg, concurrency=args.concurrency)
            strength_store.save_strength(ws.db, t.task_id, t.bundle_hash, report.as_dict())
            results.append(report)
            line = f"[{i}/{len(todo)}] {t.name}: {report.summary()} ({report.seconds:.0f} s)"
            out.print(line, soft_wrap=True, highlight=False, markup=False)
            for c in report.untested[:3] if not args.json else []:
                out.print(f"      untested: {c.command}", soft_wrap=True, highlight=False, markup=False)
    except KeyboardInterrupt:
        engine.kill_all()
        err.print(f"Interrupted; {len(results)} measured task(s) are kept. Run the command again for the rest.")
        return 130
    values = [r.strength for r in results if r.strength is not None]
    summary = {"measured": len(results), "with_strength": len(values),
               "median": statistics.median(values) if values else None,
               "below_target": sum(v < TARGET for v in values), "target": TARGET}
    if args.json:
        print(json.dumps(summary))
    elif values:
        out.print(f"Verifier strength over {len(values)} task(s): median {summary['median']:.0%}, "
                  f"{summary['below_target']} below {TARGET:.0%}.", soft_wrap=True)
    return 0


def add_command(tsub, common: argparse.ArgumentParser) -> None:
    s = tsub.add_parser("strength", parents=[common],
                        help="verifier strength: each solution command left out once (one trial each); the share "
                             "of effective commands whose removal fails a test, the untested and no-effect ones listed")
    s.add_argument("--tasks", nargs="+", metavar="ID", default=None, help="these tasks (default: every accepted one)")
    s.add_argument("--run-id", default=None, help="only the accepted tasks of this synthesis run")
    s.add_argument("--again", action="store_true", help="measure tasks already measured on their current bundle too")
    s.add_argument("--concurrency", type=int, default=3, help="trials at once (default 3)")
    s.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    s.set_defaults(func=cmd_tasks_strength)
