"""The sandbox and synthesis commands: `images bootstrap`, `doctor`, `synth` (`export harbor` is in cli_export)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.text import Text

from workbench.console import err, out
from workbench.console import progress_bar as _progress
from workbench.workspace import Workspace


def cmd_images_bootstrap(args) -> int:
    from workbench.sandbox.base_image import bootstrap
    from workbench.sandbox.engine import SandboxError, connect
    try:
        report = bootstrap(connect(), log=lambda m: err.print(f"[dim]{m}[/dim]"), force=args.force)
    except (SandboxError, RuntimeError) as exc:
        err.print(f"[red]{exc}[/red]")
        return 1
    out.print(f"Base image {report.tag}: {report.action} in {report.seconds:.1f}s")
    return 0


STATE_STYLE = {"ok": "green", "missing": "red", "optional": "yellow"}


def cmd_doctor(args) -> int:
    """One line per check and its fix on a line of its own, never wrapped or cut (a table
    cut at 80 columns when piped left `scripts/setup-harbo…`): commands stay pasteable."""
    from workbench.sandbox.doctor import diagnose
    findings = diagnose()
    width = max(len(f.name) for f in findings)
    for f in findings:
        out.print(Text.assemble(f.name.ljust(width), "  ", (f.state.ljust(8), STATE_STYLE[f.state]), "  ", f.detail),
                  soft_wrap=True)
        if not f.ok and f.fix:
            out.print(Text(" " * width + "  fix: " + f.fix), soft_wrap=True)
    return 0 if all(f.ok or not f.required for f in findings) else 1


def _double_cost(ws: Workspace, run_id: str) -> str:
    """What the run's cost is when a test double answered its LLM calls (workbench.double_rule), else ""."""
    from workbench import double_rule
    from workbench.store.tasks import runs
    mine = runs(ws.db)
    models = mine.loc[mine["run_id"] == run_id, "llm_model"].dropna()
    names = models.iloc[0].split(", ") if len(models) else []
    return f" by {double_rule.models_label(names)}: {double_rule.COST_NOTE}" if double_rule.any_double(names) else ""


def cmd_synth(args) -> int:
    import signal
    import threading

    from pipeline.synth.batch import check_lengths, run_synth
    from workbench.sandbox.engine import Engine, SandboxError
    if not args.resume:   # bad arguments are told before anything is touched
        try:
            check_lengths(args.min_len, args.max_len)
        except ValueError as exc:
            err.print(f"[red]{exc}[/red]")
            return 2
    ws = Workspace.open(args.workspace)
    from pipeline.synth.batch import check_executor
    try:   # an executor or provider that cannot run here is told before the engine is asked
        check_executor(args.executor, args.ray_address, None if args.resume else args.provider)
        if not args.resume:
            from pipeline.synth.providers import check_provider
            check_provider(ws, args.provider)
    except ValueError as exc:
        return _refused(ws, args, exc)
    stop = threading.Event()
    try:
        engine = Engine()
    except SandboxError as exc:
        return _refused(ws, args, exc)

    def on_term(signum, frame):  # cancel from the dashboard or `kill`: stop cleanly
        stop.set()
        engine.kill_all()

    def on_int(signum, frame):   # Ctrl-C: the containers go first, so the workers in flight end at once
        on_term(signum, frame)
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_int)
    progress, update = _progress("synth", not args.no_progress and not args.json)
    def tick(r: dict) -> None:
        update(r["verified"] + r["failed"], r["sampled"] or args.paths,
               f"{r['accepted']} accepted · {r['rejected']} rejected · {r['failed']} failed")
        if args.no_progress:
            print(f"progress verified={r['verified']} accepted={r['accepted']} rejected={r['rejected']} "
                  f"failed={r['failed']}", flush=True)
    try:
        with progress:
            report = run_synth(ws, n_paths=args.paths, sampler=args.sampler, seed=args.seed,
                               concurrency=args.concurrency, provider=args.provider, run_id=args.run_id,
                               resume=args.resume, min_len=args.min_len, max_len=args.max_len,
                               benchmark_dir=args.benchmark, progress=tick, stop=stop, engine=engine,
                               allow_network=args.allow_network, budget_usd=args.budget_usd,
                               executor=args.executor, ray_address=args.ray_address,
                               ship_skills=not args.no_skill_packages,
                               red_team=False if args.no_red_team else None)
    except KeyboardInterrupt:
        stop.set()
        engine.kill_all()
        err.print("Interrupted; finished tasks are kept. Continue with `workbench synth --resume`.")
        return 130
    except (ValueError, SandboxError) as exc:   # e.g. no Ray cluster at --ray-address: said on the run too
        return _refused(ws, args, exc)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        rate = report.accepted / report.sampled if report.sampled else 0.0
        out.print(f"Run {report.run_id} {report.status}: {report.sampled} paths → {report.synthesized} tasks, "
                  f"{report.accepted} accepted ({rate:.0%} of sampled), {report.rejected} rejected, "
                  f"{report.failed} failed, {report.reused} reused; {report.seconds:.1f}s.")
        if report.provider == "llm":
            t = report.timings
            out.print(f"  LLM cost ${report.cost_usd:.4f}{_double_cost(ws, report.run_id)}; "
                      f"waited {t['llm_s']:.1f}s on the LLM and "
                      f"{t['docker_s']:.1f}s on Docker (summed over paths)", soft_wrap=True)
        if report.reasons:
            out.print("  first failing check: " + ", ".join(f"{k} {v}" for k, v in sorted(report.reasons.items())))
        _print_failures(report.failures)
        for note in report.notes:
            err.print(f"[yellow]Note:[/yellow] {note}", soft_wrap=True)
        if report.near_duplicates:
            out.print(f"  {len(report.near_duplicates)} near-duplicate task(s) (same recipe chain and step text):",
                      soft_wrap=True)
            for d in report.near_duplicates:
                out.print(f"    {d['task_id']} {d['name']} repeats {d['duplicate_of']}", soft_wrap=True)
    return 0 if report.status == "finished" else 3


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of dollars: {text!r}") from None
    if not value >= 0:   # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _refused(ws: Workspace, args, exc: Exception) -> int:
    """Say why the batch cannot start; launched from the dashboard, say it on the run itself."""
    err.print(f"[red]{exc}[/red]", soft_wrap=True)
    if args.run_id:
        from workbench.store import tasks as task_store
        if task_store.get_run(ws.db, args.run_id):
            task_store.set_run_status(ws.db, args.run_id, "failed", str(exc))
    return 1


FAILURES_SHOWN = 20   # the Synthesis page and `--json` list every one


def _print_failures(failures: list[dict]) -> None:
    """Why each path gave no task ("5 failed" alone left the user guessing), whole lines, never cut."""
    if not failures:
        return
    out.print(f"  {len(failures)} path(s) gave no task:", soft_wrap=True)
    for f in failures[:FAILURES_SHOWN]:
        out.print(Text(f"    {f['path_id']}: {f['error'] or 'no reason recorded'}"), soft_wrap=True)
    if len(failures) > FAILURES_SHOWN:
        out.print(f"    … and {len(failures) - FAILURES_SHOWN} more (`--json` or the Synthesis page lists them all)",
                  soft_wrap=True)


def add_executor_options(parser: argparse.ArgumentParser, what: str, note: str = "") -> None:
    """`--executor local|ray --ray-address ADDR`, as every stage that runs containers takes them."""
    from workbench.executors.protocol import EXECUTORS
    parser.add_argument("--executor", choices=list(EXECUTORS), default="local",
                        help=f"where the {what} run: local threads (default) or Ray tasks on a cluster whose "
                             f"nodes have Docker and the `docker` resource{note}")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --executor ray: the cluster (auto, ray://host:port or host:port); "
                             "none: start or attach a local one")


def add_commands(sub, common: argparse.ArgumentParser, samplers: tuple[str, ...]) -> None:
    from pipeline.synth.limits import DEFAULT_CONCURRENCY, MAX_STEPS, MIN_LEN
    from pipeline.synth.protocol import PROVIDERS
    s = sub.add_parser("images", parents=[common], help="sandbox images")
    isub = s.add_subparsers(dest="images_command", required=True)
    ib = isub.add_parser("bootstrap", parents=[common], help="make the local base image (debootstrap + docker import)")
    ib.add_argument("--force", action="store_true", help="build again even when the image exists")
    ib.set_defaults(func=cmd_images_bootstrap)
    s = sub.add_parser("doctor", parents=[common], help="check Docker, the base image and tools; say how to fix")
    s.set_defaults(func=cmd_doctor)
    s = sub.add_parser("synth", parents=[common], help="sample paths, synthesize tasks, verify them in Docker")
    s.add_argument("--paths", type=int, default=20, help="how many distinct paths to sample (default 20)")
    s.add_argument("--sampler", default="inverse-frequency", choices=samplers,
                   help="how paths are drawn (default inverse-frequency)")
    s.add_argument("--provider", choices=list(PROVIDERS), default="offline",
                   help="who writes the tasks: offline recipes, or llm (planner and constructor; needs an "
                        "endpoint: WORKBENCH_LLM_BASE_URL or the Settings page). --resume keeps the run's own")
    s.add_argument("--budget-usd", type=_dollars, default=None,
                   help="with --provider llm: stop taking paths once this many dollars are spent (the run ends "
                        "cancelled; --resume finishes it). Default: the workspace's LLM budget, if any")
    s.add_argument("--concurrency", type=int, default=None,
                   help=f"tasks verified at once (default {DEFAULT_CONCURRENCY}; on --resume the run's own value)")
    s.add_argument("--seed", type=int, default=0, help="same seed and graph, same paths and tasks (default 0)")
    s.add_argument("--min-len", type=int, default=MIN_LEN, help=f"fewest steps per path (default {MIN_LEN})")
    s.add_argument("--max-len", type=int, default=MAX_STEPS,
                   help=f"most steps per path (default and ceiling {MAX_STEPS}: what the synthesizer composes)")
    s.add_argument("--benchmark", type=Path, default=None, help="benchmark folder for 14-gram decontamination")
    s.add_argument("--allow-network", action="store_true",
                   help="let tasks whose task.toml asks for it (allow_internet) reach the network; "
                        "also the workspace setting sandbox.allow_network in config.json")
    add_executor_options(s, "paths", " (offline provider only)")
    s.add_argument("--resume", action="store_true",
                   help="continue an unfinished run: the latest one, or the one given by --run-id")
    s.add_argument("--run-id", default=None,
                   help="with --resume: the run to continue; otherwise the id to give the new run")
    s.add_argument("--no-skill-packages", action="store_true",
                   help="ship no skill package with the tasks (offline): then no step can run a skill's own "
                        "script; the choice is in each task's metadata (give it again with --resume)")
    s.add_argument("--no-red-team", action="store_true",
                   help="verify without the red-team probe (reward hacks tried on each task whose oracle passed, "
                        "one trial per attack; also WORKBENCH_RED_TEAM=0)")
    s.add_argument("--no-progress", action="store_true", help="plain progress lines instead of a bar")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_synth)
