"""A workspace: one folder with the DuckDB store, task bundles, run logs and caches."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from workbench.config import resolve_workspace_dir
from workbench.store.connection import Database
from workbench.store.migrations import migrate


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def db_path(self) -> Path:
        return self.root / "workbench.duckdb"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def db(self) -> Database:
        return Database(self.db_path)

    @classmethod
    def open(cls, explicit: str | os.PathLike | None = None) -> "Workspace":
        """Open (creating and migrating when needed) the workspace chosen by the user."""
        ws = cls(resolve_workspace_dir(explicit))
        for d in (ws.root, ws.tasks_dir, ws.runs_dir, ws.cache_dir):
            d.mkdir(parents=True, exist_ok=True)
        migrate(ws.db)
        return ws
