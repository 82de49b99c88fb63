"""`workbench` command line: ingest, filter, status, app, demo."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.table import Table

from pipeline.graph.samplers import SAMPLERS, UNCOVERED_IN
from workbench import app_server, cli_export, cli_graph, cli_judge, cli_replay, cli_rollout, cli_synthesis, cli_verify
from workbench import cli_evolve
from workbench.console import err, out
from workbench.console import progress_bar as _progress
from workbench.demo_build import DEMO_TASKS, ensure_demo  # noqa: F401  (moved there; still importable from here)
from workbench.store.status import workspace_status
from workbench.workspace import Workspace

def cmd_ingest(args) -> int:
    from pipeline.ingest.run import ingest
    ws = Workspace.open(args.workspace)
    progress, update = _progress("Ingesting", not args.json and err.is_terminal)
    with progress:
        report = ingest(ws, [Path(p) for p in args.paths], on_progress=update)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        t = Table(title=f"Ingest {report.run_id} into {ws.root}")
        for col in ("found", "new skills", "new versions", "unchanged", "errors"):
            t.add_column(col, justify="right")
        t.add_row(str(report.found), str(len(report.new)), str(len(report.new_versions)),
                  str(report.unchanged), str(len(report.problems)))
        out.print(t)
        if report.problems:
            pt = Table(title="Not ingested", show_lines=False)
            pt.add_column("file", overflow="fold")
            pt.add_column("reason", overflow="fold")
            for p in report.problems:
                pt.add_row(p.file, p.reason)
            out.print(pt)
        s = workspace_status(ws.db)["skills"]
        out.print(f"Workspace now holds {s['total']} skills: {s['accepted']} accepted, "
                  f"{s['rejected']} rejected, {s['pending']} pending.")
    # Non-zero only when nothing at all could be ingested.
    return 0 if report.ingested > 0 else 1


def cmd_filter(args) -> int:
    from pipeline.ingest.run import refilter
    from workbench.llm.runtime import workspace_settings
    ws = Workspace.open(args.workspace)
    settings = workspace_settings(ws) if args.judge == "llm" else None
    if args.judge_all and args.judge != "llm":
        err.print("[red]--judge-all needs --judge llm.[/red]")
        return 2
    if settings is not None and not settings.online:
        err.print("[red]No LLM endpoint configured for --judge llm.[/red] Set WORKBENCH_LLM_BASE_URL (and "
                  "OPENAI_API_KEY) or use the Settings page; --judge rules (the default) needs none.")
        return 2
    progress, update = _progress("Filtering", err.is_terminal)
    with progress:
        n = refilter(ws, on_progress=update)
    code = _judge_with_llm(args, ws, settings) if settings is not None else 0
    s = workspace_status(ws.db)["skills"]
    out.print(f"Filtered {n} skills: {s['accepted']} accepted, {s['rejected']} rejected, {s['pending']} pending.")
    return code


def _judge_with_llm(args, ws, settings) -> int:
    from pipeline.filters import llm_judge
    from workbench.llm.runtime import open_client
    if args.concurrency:
        settings = settings.model_copy(update={"concurrency": args.concurrency})
    progress, update = _progress("LLM judge", err.is_terminal)
    with progress:
        report = llm_judge.judge(ws, open_client(ws, settings, budget_usd=args.budget_usd),
                                 judge_all=args.judge_all, on_progress=update)
    out.print(f"LLM judge {report.model}: {report.accepted} accepted, {report.rejected} rejected, "
              f"{len(report.warned)} without a usable verdict (left for a person), {report.not_started} "
              f"not started, of {report.todo}; {report.cache_hits} from cache, ${report.cost_usd:.4f}.")
    if report.stopped:
        out.print(f"[yellow]Stopped early:[/yellow] {report.stopped}. Verdicts so far are kept; run again to go on.")
    for sid, problem in report.warned[:20]:
        out.print(f"  warn {sid}: {problem}", soft_wrap=True)
    return 1 if report.todo and not (report.accepted or report.rejected) else 0


def cmd_status(args) -> int:
    ws = Workspace.open(args.workspace)
    status = workspace_status(ws.db)
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    t = Table(title=f"Workspace {ws.root}")
    t.add_column("part")
    t.add_column("counts")
    for part, counts in status.items():
        t.add_row(part, ", ".join(f"{k}={v}" for k, v in counts.items()))
    out.print(t)
    return 0


def cmd_scenarios_infer(args) -> int:
    from pipeline.scenarios import run as scen
    from workbench.llm.runtime import open_client, workspace_settings
    ws = Workspace.open(args.workspace)
    settings = workspace_settings(ws)
    use_llm = args.provider == "llm" or (args.provider == "auto" and settings.online)
    if args.provider == "llm" and not settings.online:
        err.print("[red]No LLM endpoint configured.[/red] Set WORKBENCH_LLM_BASE_URL (and OPENAI_API_KEY) "
                  "or use the Settings page; --provider offline needs none.")
        return 2
    if args.concurrency:
        settings = settings.model_copy(update={"concurrency": args.concurrency})
    progress, update = _progress("Inferring scenarios", not args.json and err.is_terminal)
    with progress:
        if use_llm:
            client = open_client(ws, settings, budget_usd=args.budget_usd)
            report = scen.infer_online(ws, client, force=args.force, on_progress=update)
        else:
            report = scen.infer_offline(ws, force=args.force, on_progress=update)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        out.print(f"Provider {report.provider} ({report.model}): {report.inferred} of {report.todo} skills "
                  f"inferred, {len(report.failed)} failed, {report.not_started} not started"
                  + (f", {report.cache_hits} from cache, ${report.cost_usd:.4f}" if use_llm else ""))
        if report.stopped:
            out.print(f"[yellow]Stopped early:[/yellow] {report.stopped}. Results so far are kept; run again to go on.")
        for sid, reason in report.failed[:20]:
            out.print(f"  failed {sid}: {reason}")
    return 0 if report.inferred or not report.todo else 1


def cmd_graph_build(args) -> int:
    from pipeline.graph.build import BuildOptions, build_graph
    from workbench.llm.runtime import open_client, workspace_settings
    ws = Workspace.open(args.workspace)
    settings = workspace_settings(ws)
    llm = open_client(ws, settings, budget_usd=args.budget_usd) if (
        args.verifier == "llm" or (args.verifier == "auto" and settings.online)) else None
    if args.verifier == "llm" and not settings.online:
        err.print("[red]No LLM endpoint configured[/red] for --verifier llm.")
        return 2
    opts = BuildOptions(embedder=args.embedder, threshold=args.threshold, bridge_threshold=args.bridge_threshold,
                        force=args.force)
    progress, update = _progress("graph build", not args.json and err.is_terminal)
    with progress:
        try:
            report = build_graph(ws, opts, llm=llm, on_progress=lambda stage, d, t: update(d, t or None, stage))
        except ValueError as exc:
            err.print(f"[red]{exc}[/red]")
            return 1
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        out.print(f"Graph {report.build_id}: {report.scenarios} scenarios → {report.clusters} clusters"
                  f"{' (dedup unchanged, reused)' if report.dedup_reused else ''}; {report.embedded} texts embedded; "
                  f"{report.verified} of {report.candidates} bridges verified by {report.bridge_provider} "
                  f"({report.verdicts_reused} verdicts reused).")
        out.print("  " + ", ".join(f"{k} {v:.1f}s" for k, v in report.timings.items()))
    return 0


def cmd_sample(args) -> int:
    from pipeline.graph.sample_run import sample
    ws = Workspace.open(args.workspace)
    try:
        report = sample(ws, args.sampler, args.n, args.seed, args.min_len, args.max_len, args.uncovered_in)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]")
        return 1
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        out.print(f"Batch {report.batch_id}: {report.n_paths} {report.sampler} paths, {report.steps} steps, "
                  f"{report.unique_pairs} unique (scenario, skill) pairs"
                  + (f"; {report.redrawn} repeated path(s) drawn again." if report.redrawn else "."))
        if report.note:
            err.print(f"[yellow]Note:[/yellow] {report.note}", soft_wrap=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", default=argparse.SUPPRESS,
                        help="workspace folder (default: $WORKBENCH_HOME or data/workspace)")
    p = argparse.ArgumentParser(prog="workbench", parents=[common],
                                description="SkillGraph Workbench: skills in, verified terminal tasks out.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("ingest", parents=[common], help="read skill folders, git checkouts or JSONL exports")
    s.add_argument("paths", nargs="+")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_ingest)
    s = sub.add_parser("filter", parents=[common], help="run every filter rule again")
    s.add_argument("--judge", choices=["rules", "llm"], default="rules",
                   help="rules (default), or llm: after the rules, the configured LLM judges every skill "
                        "they did not reject (verdicts of rule judge.llm, cached, cost-accounted)")
    s.add_argument("--judge-all", action="store_true", help="with --judge llm: judge rejected skills too")
    s.add_argument("--budget-usd", type=float, default=None, help="stop the LLM judge cleanly once this much is spent")
    s.add_argument("--concurrency", type=int, default=None,
                   help="LLM requests at once (default: the workspace's LLM setting)")
    s.set_defaults(func=cmd_filter)
    s = sub.add_parser("status", parents=[common], help="workspace counts")
    s.add_argument("--json", action="store_true", help="print the counts as JSON (the shape of DESIGN §3)")
    s.set_defaults(func=cmd_status)
    s = sub.add_parser("scenarios", parents=[common], help="scenario inference")
    ssub = s.add_subparsers(dest="scenarios_command", required=True)
    si = ssub.add_parser("infer", parents=[common], help="pre- and postcondition scenarios for accepted skills")
    si.add_argument("--provider", choices=["auto", "offline", "llm"], default="auto",
                    help="auto: the LLM when an endpoint is configured, else offline")
    si.add_argument("--force", action="store_true", help="infer again even where scenarios exist")
    si.add_argument("--budget-usd", type=float, default=None, help="stop cleanly once this much is spent")
    si.add_argument("--concurrency", type=int, default=None,
                    help="LLM requests at once (default: the workspace's LLM setting)")
    si.add_argument("--json", action="store_true", help="print the report as JSON")
    si.set_defaults(func=cmd_scenarios_infer)
    s = sub.add_parser("graph", parents=[common], help="the scenario–skill graph")
    gsub = s.add_subparsers(dest="graph_command", required=True)
    gb = gsub.add_parser("build", parents=[common], help="embeddings, dedup, bridges, projection (incremental)")
    gb.add_argument("--embedder", default="minilm", choices=["minilm", "hashing", "openai"],
                    help="minilm: all-MiniLM-L6-v2 in numpy (default); hashing: no model; "
                         "openai: the configured endpoint's /embeddings")
    gb.add_argument("--threshold", type=float, default=0.88, help="cosine similarity that makes one scenario")
    gb.add_argument("--bridge-threshold", type=float, default=0.6,
                    help="cosine similarity from which a postcondition and another skill's precondition "
                         "become a bridge candidate (default 0.6)")
    gb.add_argument("--verifier", choices=["auto", "offline", "llm"], default="auto",
                    help="who verifies bridge candidates: auto (the LLM when an endpoint is configured, "
                         "else offline), offline (shared-artifact check) or llm")
    gb.add_argument("--budget-usd", type=float, default=None, help="stop LLM verification cleanly once this much is spent")
    gb.add_argument("--force", action="store_true", help="recompute dedup even when nothing changed")
    gb.add_argument("--json", action="store_true", help="print the report as JSON")
    gb.set_defaults(func=cmd_graph_build)
    cli_graph.add_stats_command(gsub, common)
    s = sub.add_parser("sample", parents=[common], help="draw paths over the graph")
    s.add_argument("--sampler", default="inverse-frequency", choices=SAMPLERS,
                   help="how paths are drawn (default inverse-frequency)")
    s.add_argument("--n", type=int, default=100, help="how many distinct paths to draw (default 100)")
    s.add_argument("--seed", type=int, default=0, help="same seed and graph, same paths (default 0)")
    s.add_argument("--min-len", type=int, default=2, help="fewest steps a path aims for (default 2)")
    s.add_argument("--max-len", type=int, default=6, help="most steps per path (default 6)")
    s.add_argument("--uncovered-in", default="batch", choices=UNCOVERED_IN,
                   help="coverage-aware only: steer to the (scenario, skill) pairs not yet covered by this batch "
                        "(default) or also by every path stored in the workspace")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_sample)
    cli_synthesis.add_commands(sub, common, SAMPLERS)
    cli_verify.add_commands(sub, common)
    cli_export.add_commands(sub, common)
    app_server.add_commands(sub, common)
    cli_replay.add_commands(sub, common)
    cli_rollout.add_commands(sub, common)
    cli_judge.add_commands(sub, common)
    cli_evolve.add_commands(sub, common)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.workspace = getattr(args, "workspace", None)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        err.print("Interrupted; everything committed so far is kept.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
