"""Short-lived DuckDB connections behind a fair file gate.

DuckDB lets one process write a file at a time, and a writer also shuts readers out.
Every process of the workbench therefore takes an advisory `flock` on a sidecar file
before it opens the database: shared for reads, exclusive for writes, held only for one
short transaction. Waiting on that gate replaces lock errors; a process outside the
workbench (say, a duckdb shell) that holds the file is waited out with backoff.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from workbench.store import revision


class WorkspaceBusyError(RuntimeError):
    """The database stayed locked by another program for longer than we wait."""


_LOCK_WORDS = ("lock", "conflicting", "being used")


class Database:
    def __init__(self, path: Path, busy_timeout_s: float = 120.0):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".gate")
        self.busy_timeout_s = busy_timeout_s
        # Threads of one process (the Streamlit server) also queue on the gate,
        # because flock on separate descriptors conflicts even within a process.
        self._local = threading.local()

    @contextlib.contextmanager
    def _gate(self, exclusive: bool) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + self.busy_timeout_s
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise WorkspaceBusyError(
                            f"workspace {self.path.parent} stayed busy for {self.busy_timeout_s:.0f}s"
                        ) from None
                    time.sleep(0.005 + random.random() * 0.02)
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.busy_timeout_s
        delay = 0.01
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as exc:  # held by a program that ignores our gate
                text = str(exc).lower()
                if not any(w in text for w in _LOCK_WORDS) or time.monotonic() > deadline:
                    if any(w in text for w in _LOCK_WORDS):
                        raise WorkspaceBusyError(
                            f"{self.path} is locked by another program: {exc}"
                        ) from exc
                    raise
                time.sleep(delay + random.random() * delay)
                delay = min(delay * 2, 0.5)

    @contextlib.contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection for one short look at the data."""
        if getattr(self._local, "con", None) is not None:  # nested inside a write
            yield self._local.con
            return
        with self._gate(exclusive=False):
            con = self._connect(read_only=True)
            try:
                yield con
            finally:
                con.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction; committed on success, rolled back on any error."""
        if getattr(self._local, "con", None) is not None:
            yield self._local.con
            return
        with self._gate(exclusive=True):
            con = self._connect(read_only=False)
            self._local.con = con
            try:
                con.begin()
                yield con
                con.commit()
                # still under the exclusive gate: whoever sees the new revision reads the new data
                revision.bump(self.path)
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    con.rollback()
                raise
            finally:
                self._local.con = None
                con.close()
