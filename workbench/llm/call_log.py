"""One row per LLM call in the store: buffered in memory, written in short transactions."""
from __future__ import annotations

import threading
import uuid
from dataclasses import asdict, dataclass, field
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
    """Collects call rows; `flush` writes them (also every `flush_every` rows)."""

    def __init__(self, db: Database | None, flush_every: int = 500):
        self.db = db
        self.flush_every = flush_every
        self._rows: list[CallRecord] = []
        self._lock = threading.Lock()
        self.records_written = 0

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._rows.append(record)
            full = len(self._rows) >= self.flush_every
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            rows, self._rows = self._rows, []
        if not rows or self.db is None:
            return
        batch = pa.Table.from_pylist([{c: asdict(r)[c] for c in _COLUMNS} for r in rows],  # noqa: F841
                                     schema=_SCHEMA)
        with self.db.write() as con:
            con.execute(f"INSERT INTO llm_calls ({', '.join(_COLUMNS)}) SELECT * FROM batch")
        self.records_written += len(rows)
