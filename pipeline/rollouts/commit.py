"""The driver's side of a rollout: its folder under runs/, then its rows in the store.

Files first, rows second: a batch killed between the two leaves a folder without a row, which
resume simply writes again; a row always has its folder.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from pipeline.rollouts.models import RolloutOutcome
from workbench.sandbox.bundle import check_relpath
from workbench.store import rollouts as store
from workbench.workspace import Workspace


def commit_outcome(ws: Workspace, outcome: RolloutOutcome) -> Path:
    """Write the rollout's folder (replacing an older copy whole) and store its rows."""
    dest = ws.root / outcome.record.folder
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for rel, data in outcome.files.items():
            target = tmp / check_relpath(rel)      # checked again here: outcomes may come from another machine
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    store.save_rollout(ws.db, asdict(outcome.record), outcome.tests)
    return dest
