"""One row per LLM call in the store: buffered in memory, written in short transactions."""
from __future__ import annotations

import atexit
import queue
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa

from workbench.store.connection import Database


@dataclass
class CallRecord:
    stage: str
    item: str | None
    provider: str
    model: str
    attempt: int
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hit: bool = False
    error_class: str | None = None
    template_version: str | None = None
    batch_id: str | None = None
    call_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: datetime = field(default_factory=datetime.now)


_COLUMNS = ("call_id", "batch_id", "stage", "item", "provider", "model", "attempt", "latency_ms",
            "prompt_tokens", "completion_tokens", "cost_usd", "cache_hit", "error_class",
            "template_version", "created_at")
_SCHEMA = pa.schema([
    ("call_id", pa.string()), ("batch_id", pa.string()), ("stage", pa.string()), ("item", pa.string()),
    ("provider", pa.string()), ("model", pa.string()), ("attempt", pa.int32()),
    ("latency_ms", pa.float64()), ("prompt_tokens", pa.int32()), ("completion_tokens", pa.int32()),
    ("cost_usd", pa.float64()), ("cache_hit", pa.bool_()), ("error_class", pa.string()),
    ("template_version", pa.string()), ("created_at", pa.timestamp("us"))])


class CallLog:
    """Collects call rows and writes them to the store in batches.

    A full buffer is handed to one background writer thread, so that an event loop making
    hundreds of calls a second never waits on the store's write gate; `flush` writes what
    is left and waits until everything handed over is stored.
    """

    def __init__(self, db: Database | None, flush_every: int = 500):
        self.db = db
        self.flush_every = flush_every
        self._rows: list[CallRecord] = []
        self._lock = threading.Lock()
        self._pending: queue.Queue[list[CallRecord] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._errors: list[BaseException] = []
        self.records_written = 0

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._rows.append(record)
            if len(self._rows) < self.flush_every:
                return
            rows, self._rows = self._rows, []
        self._hand_over(rows)

    def _hand_over(self, rows: list[CallRecord]) -> None:
        if self.db is None:
            return
        if self._writer is None or not self._writer.is_alive():
            self._writer = threading.Thread(target=self._write_loop, name="call-log-writer", daemon=True)
            self._writer.start()
            atexit.register(self._flush_at_exit)  # rows handed over are stored before exit
        self._pending.put(rows)

    def _write_loop(self) -> None:
        while True:
            rows = self._pending.get()
            try:
                if rows:
                    self._write(rows)
            except BaseException as exc:  # surfaced by the next flush()
                self._errors.append(exc)
            finally:
                self._pending.task_done()

    def _write(self, rows: list[CallRecord]) -> None:
        batch = pa.Table.from_pylist([{c: getattr(r, c) for c in _COLUMNS} for r in rows],  # noqa: F841
                                     schema=_SCHEMA)
        with self.db.write() as con:
            con.execute(f"INSERT INTO llm_calls ({', '.join(_COLUMNS)}) SELECT * FROM batch")
        self.records_written += len(rows)

    def _flush_at_exit(self) -> None:
        try:
            self.flush()
        except Exception:  # nothing more can be done at exit; the error was the store's
            pass

    def flush(self) -> None:
        with self._lock:
            rows, self._rows = self._rows, []
        if self.db is None:
            return
        if self._writer is not None:
            self._pending.join()
        if rows:
            self._write(rows)
        if self._errors:
            raise self._errors.pop(0)
