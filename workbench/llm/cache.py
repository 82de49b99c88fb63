"""Response cache in the workspace, keyed by everything that decides the answer.

Kept in SQLite (WAL) under `cache/`, not in the DuckDB store: lookups and inserts come
from many concurrent calls and several processes, and must not queue behind the store's
write gate.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def cache_key(*, model: str, messages: list[dict], schema: dict | None, params: dict,
              template_version: str) -> str:
    payload = json.dumps({"model": model, "messages": messages, "schema": schema, "params": params,
                          "template": template_version}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


class ResponseCache:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, stage TEXT, model TEXT, "
            "text TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)")

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._con.execute(
                "SELECT text, prompt_tokens, completion_tokens, model FROM responses WHERE key = ?",
                (key,)).fetchone()
        return CachedResponse(*row) if row else None

    def put(self, key: str, stage: str, response: CachedResponse) -> None:
        with self._lock:
            self._con.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, stage, response.model, response.text, response.prompt_tokens,
                 response.completion_tokens, time.time()))

    def count(self, stage: str | None = None) -> int:
        with self._lock:
            if stage:
                return self._con.execute("SELECT count(*) FROM responses WHERE stage = ?", (stage,)).fetchone()[0]
            return self._con.execute("SELECT count(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._con.close()
