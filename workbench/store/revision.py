"""The data revision of a workspace store: a token that changes with every committed write.

Readers that keep query results (the dashboard's caches) key them on this token, so that a
write by any process — the dashboard, `workbench ingest`, a synthesis batch — shows up on
the next read, while an unchanged store costs a few `stat` calls instead of queries.

Every `Database.write()` bumps a sidecar file (`workbench.duckdb.rev`) after its commit,
still holding the exclusive gate: a reader that sees the new token therefore reads the new
data. The token also carries the size and mtime of the database and its WAL, which catches
writers that bypass the gate (say, a duckdb shell).
"""
from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path


def revision_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".rev")


def bump(db_path: Path) -> None:
    """Give the store a new revision (called after each committed write)."""
    path = revision_path(db_path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    # A fresh random token, not a counter: two processes can never hand out the same one.
    # The write is committed already; if the token cannot be written (a full or read-only
    # disk) the database's own size and mtime in `current` still move on, so say nothing.
    with contextlib.suppress(OSError):
        tmp.write_text(uuid.uuid4().hex)
        os.replace(tmp, path)


def _stat(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size}@{st.st_mtime_ns}"


def current(db_path: Path) -> str:
    """The store's revision now; equal tokens mean nothing was written in between."""
    db_path = Path(db_path)
    token = "-"
    with contextlib.suppress(OSError):
        token = revision_path(db_path).read_text()
    wal = db_path.with_name(db_path.name + ".wal")
    return f"{token}/{_stat(db_path)}/{_stat(wal)}"
