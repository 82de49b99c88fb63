"""Where the command line writes: results to stdout, progress and messages to stderr."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

err = Console(stderr=True)
out = Console()


def progress_bar(label: str, enabled: bool):
    """A transient bar on stderr and its `update(done, total, what)` callback."""
    progress = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("{task.description}"), console=err,
                        transient=True, disable=not enabled)
    task = progress.add_task("", total=None)

    def update(done: int, total: int, what: str) -> None:
        progress.update(task, completed=done, total=total, description=Path(what).name[:40])
    return progress, update
