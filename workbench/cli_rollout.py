"""`workbench rollout`: agents on tasks in the sandbox, k samples each (pipeline/rollouts)."""
from __future__ import annotations

import argparse
import json

from rich.text import Text

from workbench.cli_synthesis import _dollars   # the one rule for a dollar amount
from workbench.cli_batch_args import check_selection, refuse
from workbench.cli_signals import stop_on_signals
from workbench.console import err, out
from workbench.console import progress_bar as _progress
from workbench.workspace import Workspace

EXIT_BAD_ARGS = 2
EXIT_CANCELLED = 3


def cmd_rollout(args) -> int:
    from pipeline.rollouts.batch import check_args, run_rollouts
    from pipeline.rollouts.selection import SelectionError
    from workbench.sandbox.engine import Engine, SandboxError
    try:   # bad arguments are told before anything is touched
        _check_combination(args)
        if not args.resume:
            check_args(agent=args.agent, k=args.k, concurrency=args.concurrency, temperature=args.temperature,
                       budget_usd=args.budget_usd, max_turns=args.max_turns, replay=args.replay, model=args.model,
                       keep_p=args.p, executor=args.executor or "local", ray_address=args.ray_address)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]", soft_wrap=True)
        return EXIT_BAD_ARGS
    ws = Workspace.open(args.workspace)
    try:   # what needs no engine is checked before one is asked for
        _preflight(ws, args)
    except ValueError as exc:
        return _refused(ws, args, exc, EXIT_BAD_ARGS)
    try:
        engine = Engine()
    except SandboxError as exc:
        return _refused(ws, args, exc, 1)
    stop, restore_signals = stop_on_signals(engine)   # Ctrl-C or the dashboard's cancel: stop; twice: kill
    progress, update = _progress("rollout", not args.no_progress and not args.json)

    def tick(c: dict) -> None:
        update(c["done"], c["total"], f"{c['passed']} passed · {c['failed']} failed")
        if args.no_progress:
            print(f"progress done={c['done']} total={c['total']} passed={c['passed']} failed={c['failed']} "
                  f"skipped={c['skipped']}", flush=True)
    if args.replay:
        err.print(f"[yellow]Note:[/yellow] --replay {args.replay}: terminus-2 talks to a TEST DOUBLE (an in-process "
                  "replay server playing the scripted Terminus-2 model), not to an LLM.", soft_wrap=True)
    try:
        with progress:
            report = run_rollouts(
                ws, agent=args.agent or "oracle", task_ids=None if args.accepted or args.resume else args.tasks,
                k=args.k, model=args.model, temperature=args.temperature, concurrency=args.concurrency,
                run_id=args.resume or args.run_id, resume=bool(args.resume), budget_usd=args.budget_usd,
                max_turns=args.max_turns, replay=args.replay, progress=tick, stop=stop, engine=engine,
                allow_network=args.allow_network, keep_p=args.p, executor=args.executor, ray_address=args.ray_address)
    except (SelectionError, ValueError) as exc:
        return _refused(ws, args, exc, EXIT_BAD_ARGS)
    except SandboxError as exc:
        return _refused(ws, args, exc, 1)
    except KeyboardInterrupt:
        engine.kill_all()
        err.print("Interrupted; stored rollouts are kept. Continue with `workbench rollout --resume RUN_ID`.")
        return 130
    finally:
        restore_signals()
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        _print_report(ws, report)
    if report.status == "done":
        judge_after_batch(ws, report, args)
    if report.status == "failed" or report.not_run:
        return 1           # some rollouts could not run (their tasks' images did not build): said in the notes
    return 0 if report.status == "done" else EXIT_CANCELLED


def _preflight(ws: Workspace, args) -> None:
    from pipeline.rollouts.endpoint import check_endpoint
    from pipeline.rollouts.selection import select_tasks
    from workbench.store import rollouts as store
    if args.resume:
        if store.get_run(ws.db, args.resume) is None:
            raise ValueError(f"nothing to resume: no rollout run {args.resume!r} in this workspace")
        return
    if args.agent == "terminus-2":
        check_endpoint(ws, args.replay)
    select_tasks(ws, None if args.accepted else args.tasks)


def _check_combination(args) -> None:
    if not args.resume and not args.agent:
        raise ValueError("say which agent: --agent nop|oracle|ablation|noisy-oracle|red-team|terminus-2")
    check_selection(args, fixed_by_resume=[("--tasks", bool(args.tasks)), ("--accepted", args.accepted),
                                           ("--agent", bool(args.agent)), ("--model", bool(args.model)),
                                           ("--replay", bool(args.replay)), ("--run-id", bool(args.run_id)),
                                           ("--p", args.p is not None)])


def _refused(ws: Workspace, args, exc: Exception, code: int) -> int:
    from workbench.store import rollouts as store
    return refuse(args, exc, code, get_run=lambda r: store.get_run(ws.db, r),
                  mark_failed=lambda r, why: store.set_run_status(ws.db, r, "failed", why))


def _print_report(ws: Workspace, report) -> None:
    from workbench import double_rule
    label = double_rule.agent_config_label(report.agent, report.agent_label or report.agent, report.model)
    out.print(Text(f"Run {report.run_id} {report.status}: {label}"
                   + (f" ({double_rule.model_label(report.model)})" if report.model else "")
                   + f"; {report.summary()}; {report.seconds:.1f}s."), soft_wrap=True)
    if report.agent == "terminus-2":
        double = f" ({double_rule.COST_NOTE})" if double_rule.is_double_model(report.model) else ""
        out.print(f"  LLM cost ${report.cost_usd:.4f}{double}", soft_wrap=True)
    if report.status != "done":
        out.print(Text(f"  {report.message}"), soft_wrap=True)
    out.print(Text(f"  folders: {ws.root / report.runs_folder}/<rollout_id>/ (trajectory.json, recording.cast, "
                   "agent.log, verifier/, result.json)"), soft_wrap=True)
    for note in report.notes:
        err.print(Text.assemble(("Note: ", "yellow"), note), soft_wrap=True)


def judge_after_batch(ws: Workspace, report, args) -> None:
    """The hook after a finished batch: SETA's trajectory judge on the tasks no LLM rollout solved
    (workbench.cli_judge). Only for LLM agents and without --no-judge; with --replay the judge is
    the scripted test judge too (labelled); with no endpoint it is skipped, saying so."""
    if args.no_judge or report.agent != "terminus-2":
        return
    from workbench.cli_judge import judge_trajectories, print_report
    from workbench.store import rollouts as store
    run = store.get_run(ws.db, report.run_id) or {}
    params = json.loads(run["params"]) if isinstance(run.get("params"), str) else (run.get("params") or {})
    replay = bool(args.replay or params.get("replay"))      # a resumed replay run is judged by the test judge too
    try:
        judged = judge_trajectories(ws, run_id=report.run_id, replay=replay, budget_usd=args.budget_usd)
    except ValueError as exc:
        err.print(f"Trajectory judge skipped: {exc} (`workbench judge-trajectories` runs it later).", soft_wrap=True)
        return
    if args.json:
        err.print(Text(judged.summary()), soft_wrap=True)   # stdout stays one JSON document
    else:
        print_report(judged)


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    from pipeline.agents.protocol import AGENTS
    from pipeline.rollouts.models import DEFAULT_CONCURRENCY, DEFAULT_K
    from workbench.executors.protocol import EXECUTORS
    s = sub.add_parser("rollout", parents=[common], help="run an agent on tasks in the sandbox, k samples each")
    s.add_argument("--tasks", nargs="+", metavar="ID", default=None, help="the task ids to run on")
    s.add_argument("--accepted", action="store_true", help="run on every accepted task (withdrawn ones left out)")
    s.add_argument("--agent", choices=AGENTS, default=None,
                   help="nop (baseline), oracle (the task's solution), ablation (oracle with one solution step left "
                        "out: a verifier probe, not a model), noisy-oracle (each solution step kept with probability "
                        "--p: simulated, not a model), red-team (one reward hack per sample, never the task: "
                        "-k 6 tries every attack; a verifier probe, not a model), terminus-2 (LLM agent)")
    s.add_argument("--p", type=float, default=None, metavar="P",
                   help="noisy-oracle: the probability of keeping each solution step (default: the agent's own)")
    s.add_argument("--model", default=None, help="terminus-2: the model (default: the workspace's LLM setting)")
    s.add_argument("-k", type=int, default=DEFAULT_K, help=f"rollouts per task (default {DEFAULT_K})")
    s.add_argument("--concurrency", type=int, default=None,
                   help=f"rollouts at once (default {DEFAULT_CONCURRENCY}; on --resume the run's own)")
    s.add_argument("--temperature", type=float, default=0.0,
                   help="terminus-2: sampling temperature (above 0 each sample asks the model afresh)")
    s.add_argument("--max-turns", type=int, default=None, help="terminus-2: most turns per episode")
    s.add_argument("--replay", default=None, metavar="BEHAVIOUR",
                   help="terminus-2 only: talk to an in-process replay server playing the scripted Terminus-2 model "
                        "(a test double; oracle, malformed, never_completes, floods, early_complete) instead of an LLM")
    s.add_argument("--budget-usd", type=_dollars, default=None,
                   help="terminus-2: stop starting rollouts once this many dollars are spent (the run ends "
                        "cancelled; --resume finishes it)")
    s.add_argument("--executor", choices=EXECUTORS, default=None,
                   help="where rollouts run: local (threads here; the default) or ray (Ray tasks on the nodes with "
                        "the `docker` resource); on --resume the run's own unless given")
    s.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="--executor ray: the cluster (auto, ray://host:port or host:port; empty: start or attach a "
                        "local one)")
    s.add_argument("--resume", default=None, metavar="RUN_ID", help="continue a run: stored rollouts are skipped")
    s.add_argument("--run-id", default=None, help="the id to give the new run")
    s.add_argument("--allow-network", action="store_true",
                   help="let tasks whose task.toml asks for it reach the network (also the workspace setting)")
    s.add_argument("--no-judge", action="store_true", help="do not run the trajectory judge after the batch")
    s.add_argument("--no-progress", action="store_true", help="plain progress lines instead of a bar")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_rollout)
