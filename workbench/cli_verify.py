"""`workbench verify DIR...`: every check on Harbor task folders from anywhere (hand-written,
other generators, the hostile cases), one verdict per folder with its reasons."""
from __future__ import annotations

import argparse
import json
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor
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


def verify_folder(folder: Path, engine, benchmark=None, allow_network: bool = False) -> FolderVerdict:
    from pipeline.verify.failures import first_failed, verdict
    from pipeline.verify.run import verify_bundle
    from workbench.sandbox.bundle import BundleError, TaskBundle, read_bundle
    try:
        bundle = read_bundle(folder)
    except (BundleError, OSError) as exc:
        return FolderVerdict(str(folder), "rejected", "bundle", f"not a task folder that can be verified: {exc}")
    files = dict(bundle.files)
    if "task.toml" in files:
        files["task.toml"] = with_task_name(files["task.toml"].decode("utf-8", "replace"), folder).encode()
    checks = verify_bundle(TaskBundle(files, bundle.executables), engine=engine, benchmark=benchmark,
                           allow_network=allow_network)
    failed = first_failed(checks)
    return FolderVerdict(str(folder), verdict(checks), failed.name if failed else None,
                         failed.reason if failed else "every check passed",
                         [{"name": c.name, "passed": c.passed, "reason": c.reason, "seconds": round(c.seconds, 2)}
                          for c in checks])


def cmd_verify(args) -> int:
    from workbench.sandbox.engine import Engine, SandboxError
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
    with ThreadPoolExecutor(max(1, args.concurrency)) as pool:
        verdicts = list(pool.map(lambda f: verify_folder(f, engine, benchmark, allow_network), args.folders))
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
    return 0 if all(v.verdict == "accepted" for v in verdicts) else 1


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("verify", parents=[common],
                       help="run every check on Harbor task folders (made anywhere); one verdict per folder")
    s.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="Harbor task folders")
    s.add_argument("--concurrency", type=int, default=2, help="folders verified at once (default 2)")
    s.add_argument("--benchmark", type=Path, default=None, help="benchmark folder for 14-gram decontamination")
    s.add_argument("--json", action="store_true", help="print the verdicts as JSON (exit code 1 if any is rejected)")
    s.add_argument("--allow-network", action="store_true",
                   help="let tasks whose task.toml asks for it (allow_internet) reach the network; "
                        "also the workspace setting sandbox.allow_network in config.json")
    s.set_defaults(func=cmd_verify)
