"""The driver's side of a rollout: its folder under runs/, then its rows in the store.

Files first, rows second: a batch killed between the two leaves a folder without a row, which
resume simply writes again; a row always has its folder.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from pipeline.rollouts.models import RolloutOutcome
from workbench.folder_write import write_folder
from workbench.sandbox.bundle import check_relpath
from workbench.store import rollouts as store
from workbench.workspace import Workspace


def commit_outcome(ws: Workspace, outcome: RolloutOutcome) -> Path:
    """Write the rollout's folder (replacing an older copy whole) and store its rows."""
    # Paths checked again here: outcomes may come from another machine.
    dest = write_folder(ws.root / outcome.record.folder,
                        {check_relpath(rel): data for rel, data in outcome.files.items()})
    store.save_rollout(ws.db, asdict(outcome.record), outcome.tests)
    return dest
