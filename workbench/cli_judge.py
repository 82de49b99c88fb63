"""`workbench judge-trajectories [--run RUN_ID]`: SETA's trajectory judge on the accepted tasks
no LLM agent solved (pipeline.judge.trajectory_judge). A design flaw withdraws the task (undo
on the Tasks page). Needs an LLM endpoint, or `--replay` for the scripted judge (a test double).

`judge_trajectories` is also what `workbench rollout` runs after a batch, and the demo build."""
from __future__ import annotations

import argparse
import json

from pydantic import SecretStr

from pipeline.judge.trajectory_judge import TrajectoryJudgeReport, judge_unsolved
from workbench.console import err, out
from workbench.workspace import Workspace

NO_ENDPOINT = ("the trajectory judge needs an LLM endpoint: set WORKBENCH_LLM_BASE_URL (an OpenAI-compatible URL) "
               "or configure one on the Settings page; or use the scripted test judge with --replay")


def judge_trajectories(ws: Workspace, *, run_id: str | None = None, replay: bool = False, min_rollouts: int = 3,
                       budget_usd: float | None = None) -> TrajectoryJudgeReport:
    """Open the judge's client (the workspace's endpoint, or the scripted judge on an in-process
    replay server when `replay`), judge, close. Raises ValueError when there is no endpoint."""
    from workbench.llm.caller import LLMCaller
    from workbench.llm.runtime import open_client, workspace_settings
    from workbench.store import rollouts as rollout_store
    if min_rollouts < 1:
        raise ValueError(f"--min-rollouts must be at least 1, got {min_rollouts}")
    if run_id and rollout_store.get_run(ws.db, run_id) is None and rollout_store.rollouts_frame(ws.db, run_id).empty:
        # else it judges nothing and says "0 unsolved", as if the run had been judged
        raise ValueError(f"no rollout run {run_id!r} in this workspace (the Rollouts page lists them)")
    settings = workspace_settings(ws)
    server = None
    if replay:   # the scripted judge, a test double: imported only when asked for
        from pipeline.judge import scripted_trajectory_judge as scripted
        from workbench.llm.replay_server import ReplayServer, Script
        server = ReplayServer(Script(rules=scripted.scripted_judge_rules())).start()
        settings = settings.model_copy(update={"base_url": server.base_url, "api_key": SecretStr("replay"),
                                               "stored_key_endpoint": None, "model": scripted.MODEL})
    elif not settings.online:
        raise ValueError(NO_ENDPOINT)
    try:
        caller = LLMCaller(open_client(ws, settings, budget_usd=budget_usd,
                                       batch_id=f"judge-{run_id}" if run_id else None))
        try:
            report = judge_unsolved(ws, caller, run_id=run_id, min_rollouts=min_rollouts)
        finally:
            caller.close()
    finally:
        if server is not None:
            server.stop()
    if replay:
        report.note = scripted.NOTE
    return report


def print_report(report: TrajectoryJudgeReport) -> None:
    if report.note:
        out.print(f"[yellow]Note: {report.note}[/yellow]")
    out.print(report.summary())
    for j in report.judged:
        mark = "[red]design flaw[/red]" if j.verdict == "design_flaw" else "too hard"
        tail = " — withdrawn (undo: Tasks page)" if j.withdrawn else (f" — {j.note}" if j.note else "")
        out.print(f"  {j.task_id} {j.name}: {mark} over {j.n_rollouts} rollouts: {j.reason}{tail}", markup=True)
    for task_id, why in report.skipped.items():
        out.print(f"  {task_id}: not sent: {why}")
    for task_id, why in report.errors.items():
        err.print(f"  {task_id}: {why}")


def cmd_judge_trajectories(args) -> int:
    ws = Workspace.open(args.workspace)
    try:
        report = judge_trajectories(ws, run_id=args.run, replay=args.replay, min_rollouts=args.min_rollouts,
                                    budget_usd=args.budget_usd)
    except ValueError as exc:
        err.print(str(exc))
        return 2
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        print_report(report)
    return 1 if report.stopped or report.errors else 0


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("judge-trajectories", parents=[common],
                       help="send accepted tasks no LLM agent solved to the trajectory judge (SETA)")
    s.add_argument("--run", default=None, metavar="RUN_ID", help="only the tasks of this rollout batch")
    s.add_argument("--min-rollouts", type=int, default=3, help="LLM rollouts a task needs, all failed (default 3)")
    s.add_argument("--replay", action="store_true",
                   help="use the scripted judge (a test double on an in-process replay server), no endpoint needed")
    s.add_argument("--budget-usd", type=float, default=None, help="stop judging once this much is spent")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_judge_trajectories)
