"""`workbench verify DIR...`: every check on Harbor task folders from anywhere (hand-written,
other generators, the hostile cases), one verdict per folder with its reasons; `--probe` runs the
red-team probe alone (is the task hackable?)."""
from __future__ import annotations

import argparse
import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from workbench.console import err, out


@dataclass
class FolderVerdict:
    folder: str
    verdict: str                    # accepted | rejected
    failed_check: str | None = None
    reason: str = ""
    checks: list[dict] = field(default_factory=list)


def with_task_name(toml_text: str, folder: Path) -> str:
    """Harbor task.toml files often carry no `[task] name`; the verifier needs one, so a folder
    without it is named `local/<folder name>` (nothing else in the file changes)."""
    try:
        data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError:
        return toml_text            # the parser reports it, with the file named
    if (data.get("task") or {}).get("name"):
        return toml_text
    slug = re.sub(r"[^a-z0-9._-]+", "-", folder.resolve().name.lower()).strip("-._") or "task"
    line = f'name = "local/{slug}"'
    if "task" in data:
        return re.sub(r"(?m)^\[task\]\s*$", lambda m: m.group(0) + "\n" + line, toml_text, count=1)
    return f"[task]\n{line}\n\n" + toml_text if "schema_version" not in toml_text else \
        toml_text.rstrip("\n") + f"\n\n[task]\n{line}\n"


def read_folder(folder: Path):
    """The folder as an executor item (its files travel in it), or why it cannot be verified."""
    from pipeline.verify.run import BundleItem
    from workbench.sandbox.bundle import BundleError, TaskBundle, read_bundle
    try:
        bundle = read_bundle(folder)
    except (BundleError, OSError) as exc:
        return FolderVerdict(str(folder), "rejected", "bundle", f"not a task folder that can be verified: {exc}")
    files = dict(bundle.files)
    if "task.toml" in files:
        files["task.toml"] = with_task_name(files["task.toml"].decode("utf-8", "replace"), folder).encode()
    return BundleItem(str(folder), TaskBundle(files, bundle.executables))


def folder_verdict(folder: str, checks) -> FolderVerdict:
    from pipeline.verify.failures import first_failed, verdict
    failed = first_failed(checks)
    return FolderVerdict(folder, verdict(checks), failed.name if failed else None,
                         failed.reason if failed else "every check passed",
                         [{"name": c.name, "passed": c.passed, "reason": c.reason, "seconds": round(c.seconds, 2),
                           **({"attacks": c.details["attacks"]} if c.details.get("attacks") else {})}
                          for c in checks])


def verify_folders(folders: list[Path], ctx, executor) -> list[FolderVerdict]:
    """Every folder's verdict, in the order given: folders are read here (the driver), the checks
    run on `executor` (pipeline.verify.run.verify_item), and each verdict is made as it arrives."""
    import functools

    from pipeline.verify.run import verify_item
    read = [read_folder(f) for f in folders]
    items = [r for r in read if not isinstance(r, FolderVerdict)]
    verdicts: dict[str, FolderVerdict] = {}

    def commit(item, checks) -> None:
        verdicts[item.key] = folder_verdict(item.key, checks)

    def on_error(item, exc: BaseException) -> None:
        verdicts[item.key] = FolderVerdict(item.key, "rejected", "verify",
                                           f"verification crashed: {type(exc).__name__}: {exc}")
    executor.run(list({it.key: it for it in items}.values()),   # a folder named twice is verified once
                 functools.partial(verify_item, ctx=ctx), commit=commit, on_error=on_error)
    return [r if isinstance(r, FolderVerdict) else verdicts[r.key] for r in read]


def cmd_verify(args) -> int:
    from workbench.sandbox.engine import Engine, SandboxError
    from workbench.executors.factory import make_executor
    if args.concurrency < 1:
        err.print(f"[red]--concurrency must be at least 1, got {args.concurrency}[/red]")
        return 2
    try:
        executor = make_executor(args.executor, concurrency=args.concurrency, ray_address=args.ray_address)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]")
        return 2
    try:
        engine = Engine()
    except SandboxError as exc:
        err.print(f"[red]{exc}[/red]")
        return 2
    swept = engine.swept      # what a killed earlier run left behind (opening the engine swept it)
    if swept and not args.json:
        err.print(f"[dim]removed {swept} stale sandbox containers[/dim]")
    benchmark = None
    if args.benchmark:
        from pipeline.verify.decontam import BenchmarkIndex
        benchmark = BenchmarkIndex.build(args.benchmark)
    from workbench.config import resolve_workspace_dir, workspace_allows_network
    try:
        allow_network = args.allow_network or workspace_allows_network(resolve_workspace_dir(args.workspace))
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]")
        return 2
    from pipeline.verify.run import VerifyContext
    ctx = VerifyContext(benchmark=benchmark, allow_network=allow_network, engine=engine,
                        red_team=False if args.no_red_team else None, probe_only=args.probe)
    verdicts = verify_folders(args.folders, ctx, executor)
    if args.json:
        print(json.dumps([asdict(v) for v in verdicts], indent=2))
    else:
        for v in verdicts:
            style = "green" if v.verdict == "accepted" else "red"
            head = f"[{style}]{v.verdict.upper()}[/{style}] {v.folder}"
            out.print(head + ("" if v.verdict == "accepted" else f" — {v.failed_check}: {v.reason}"),
                      soft_wrap=True, highlight=False, markup=True)
            for c in v.checks:
                mark = "ok  " if c["passed"] else "FAIL"
                out.print(f"    {mark} {c['name']:<9} {c['reason']}", soft_wrap=True, highlight=False, markup=False)
                for a in c.get("attacks", []) if args.probe else []:
                    said = "HACKED" if a["hacked"] else "caught"
                    out.print(f"        {said:<6} {a['attack']:<16} reward {a['reward']}, {a['tests_passed']}/{a['tests']} "
                              f"tests passed, {a['seconds']} s", soft_wrap=True, highlight=False, markup=False)
    return 0 if all(v.verdict == "accepted" for v in verdicts) else 1


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("verify", parents=[common],
                       help="run every check on Harbor task folders (made anywhere); one verdict per folder")
    s.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="Harbor task folders")
    s.add_argument("--concurrency", type=int, default=2, help="folders verified at once (default 2)")
    s.add_argument("--benchmark", type=Path, default=None, help="benchmark folder for 14-gram decontamination")
    s.add_argument("--json", action="store_true", help="print the verdicts as JSON (exit code 1 if any is rejected)")
    s.add_argument("--probe", action="store_true",
                   help="build, then only the red-team probe: every reward hack of its library tried on each "
                        "folder (a verifier probe, not a model); rejected = hackable")
    s.add_argument("--no-red-team", action="store_true",
                   help="skip the red-team probe (one trial per attack after the oracle passed; also "
                        "WORKBENCH_RED_TEAM=0)")
    from workbench.cli_synthesis import add_executor_options
    add_executor_options(s, "folders' checks")
    s.add_argument("--allow-network", action="store_true",
                   help="let tasks whose task.toml asks for it (allow_internet) reach the network; "
                        "also the workspace setting sandbox.allow_network in config.json")
    s.set_defaults(func=cmd_verify)
