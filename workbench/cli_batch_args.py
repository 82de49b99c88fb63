"""What the batch commands (`workbench rollout`, `workbench evolve`) share about their arguments:
one rule for --resume against a new selection, and one way to refuse a batch."""
from __future__ import annotations

from typing import Callable

from workbench.console import err


def check_selection(args, *, fixed_by_resume: list[tuple[str, bool]]) -> None:
    """--resume continues a run as it was started, so none of `fixed_by_resume` (flag, given)
    may come with it; a new run names its tasks one way: --tasks ID… or --accepted."""
    if args.resume:
        given = [flag for flag, present in fixed_by_resume if present]
        if given:
            raise ValueError(f"--resume continues a run as it was started: {', '.join(given)} cannot be given with it")
        return
    if not (args.tasks or args.accepted):
        raise ValueError("say which tasks: --tasks ID… or --accepted")
    if args.tasks and args.accepted:
        raise ValueError("--tasks and --accepted exclude each other")


def refuse(args, exc: Exception, code: int, *, get_run: Callable[[str], dict | None],
           mark_failed: Callable[[str, str], None]) -> int:
    """Say why the batch cannot go on; launched from the dashboard (its run row exists and is
    pending or running), say it on the run itself so the page shows the reason."""
    err.print(f"[red]{exc}[/red]", soft_wrap=True)
    run_id = args.run_id or args.resume
    if run_id:
        run = get_run(run_id)
        if run is not None and run["status"] in ("pending", "running"):
            mark_failed(run_id, str(exc)[:2000])
    return code
