"""`workbench evolve`: SETA-Evol rounds of difficulty evolution (pipeline/evolve)."""
from __future__ import annotations

import argparse
import json

from rich.table import Table
from rich.text import Text

from workbench.cli_batch_args import check_selection, refuse
from workbench.cli_signals import stop_on_signals
from workbench.console import err, out
from workbench.console import progress_bar as _progress
from workbench.workspace import Workspace

EXIT_BAD_ARGS = 2
EXIT_CANCELLED = 3


def cmd_evolve(args) -> int:
    from pipeline.evolve.run import check_evolve_args, run_evolve
    from workbench.sandbox.engine import Engine, SandboxError
    try:   # bad arguments are told before anything is touched
        _check_combination(args)
        if not args.resume:
            check_evolve_args(rounds=args.rounds, agent=args.agent, model=args.model, k=args.k, keep_p=args.p,
                              concurrency=args.concurrency, executor=args.executor or "local",
                              ray_address=args.ray_address)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]", soft_wrap=True)
        return EXIT_BAD_ARGS
    ws = Workspace.open(args.workspace)
    try:
        engine = Engine()
    except SandboxError as exc:
        return _refused(ws, args, exc, 1)
    stop, restore_signals = stop_on_signals(engine)   # Ctrl-C or the dashboard's cancel: stop; twice: kill
    progress, update = _progress("evolve", not args.no_progress and not args.json)

    def tick(p: dict) -> None:
        update(p["done"], p["total"], f"round {p['round']} · {p['phase']}")
        if args.no_progress:
            print(f"progress round={p['round']} phase={p['phase'].replace(' ', '_')} done={p['done']} "
                  f"total={p['total']}", flush=True)
    try:
        with progress:
            report = run_evolve(ws, task_ids=None if args.accepted or args.resume else args.tasks,
                                rounds=args.rounds, agent=args.agent, model=args.model, k=args.k, keep_p=args.p,
                                concurrency=args.concurrency, executor=args.executor or "local",
                                ray_address=args.ray_address, run_id=args.resume or args.run_id,
                                resume=bool(args.resume), progress=tick, stop=stop, engine=engine)
    except ValueError as exc:
        return _refused(ws, args, exc, EXIT_BAD_ARGS)
    except SandboxError as exc:
        return _refused(ws, args, exc, 1)
    except KeyboardInterrupt:
        engine.kill_all()
        err.print("Interrupted; what was made is kept. Continue with `workbench evolve --resume RUN_ID`.")
        return 130
    finally:
        restore_signals()
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        print_report(report)
    if report.status != "done":
        return EXIT_CANCELLED
    return 0 if report.made or report.reused else 1     # nothing could be made: said per parent in the lineage


def _check_combination(args) -> None:
    check_selection(args, fixed_by_resume=[("--tasks", bool(args.tasks)), ("--accepted", args.accepted),
                                           ("--run-id", bool(args.run_id)), ("--p", args.p is not None),
                                           ("--model", bool(args.model))])


def _refused(ws: Workspace, args, exc: Exception, code: int) -> int:
    from workbench.store import lineage as store
    return refuse(args, exc, code, get_run=lambda r: store.get_run(ws.db, r),
                  mark_failed=lambda r, why: store.finish_run(ws.db, r, "failed", why))


def _rate(v) -> str:
    return "–" if v is None else f"{v:.2f}"


def print_report(report) -> None:
    from pipeline.agents.protocol import AGENT_LABELS
    from workbench import double_rule
    # whose pass rates these are: a simulated agent's or a test double's say so (the one rule)
    who = double_rule.agent_config_label(report.agent, AGENT_LABELS.get(report.agent, report.agent), report.model)
    out.print(Text(f"Evolve run {report.run_id} {report.status}: {who}"
                   + (f" ({double_rule.model_label(report.model)})" if report.model else "")
                   + f"; {report.summary()}; {report.seconds:.1f}s."), soft_wrap=True)
    table = Table("round", "operator", "parents", "made", "accepted", "no variant", "failed", "pass rate before → after")
    for r in report.rows:
        table.add_row(str(r.round), r.operator, str(r.parents), str(r.made), str(r.accepted), str(r.no_variant),
                      str(r.failed), f"{_rate(r.rate_before)} → {_rate(r.rate_after)}")
    out.print(table)
    for note in report.notes:
        err.print(Text.assemble(("Note: ", "yellow"), note), soft_wrap=True)
    if report.status != "done":
        out.print(Text(f"  {report.message}"), soft_wrap=True)


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    from pipeline.agents.protocol import AGENTS
    from pipeline.evolve.models import DEFAULT_AGENT, DEFAULT_K
    from workbench.executors.protocol import EXECUTORS
    s = sub.add_parser("evolve", parents=[common],
                       help="SETA-Evol: harder / context-switch / easier variants of tasks by their pass rates")
    s.add_argument("--tasks", nargs="+", metavar="ID", default=None, help="the tasks to evolve (accepted ones)")
    s.add_argument("--accepted", action="store_true", help="evolve every accepted original task")
    s.add_argument("--rounds", type=int, default=1, help="rounds (each evolves the previous round's accepted variants)")
    s.add_argument("--agent", choices=AGENTS, default=DEFAULT_AGENT,
                   help=f"whose pass rates choose the operators, and who rolls out the variants (default "
                        f"{DEFAULT_AGENT}: the task's solution with each step kept with probability --p; simulated, "
                        "not a model)")
    s.add_argument("--p", type=float, default=None, metavar="P", help="noisy-oracle: the chance each step is kept")
    s.add_argument("--model", default=None, help="terminus-2: the model")
    s.add_argument("-k", type=int, default=DEFAULT_K,
                   help=f"rollouts per variant, and per parent that has none yet (default {DEFAULT_K})")
    s.add_argument("--concurrency", type=int, default=None, help="verifications / rollouts at once")
    s.add_argument("--executor", choices=EXECUTORS, default=None,
                   help="where verification and rollouts run: local (the default) or ray")
    s.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="--executor ray: the cluster (auto, ray://host:port or host:port; empty: a local one)")
    s.add_argument("--resume", default=None, metavar="RUN_ID",
                   help="continue a run: variants verified before are not made again, stored rollouts are skipped")
    s.add_argument("--run-id", default=None, help="the id to give the new run")
    s.add_argument("--no-progress", action="store_true", help="plain progress lines instead of a bar")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_evolve)
