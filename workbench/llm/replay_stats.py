"""The request counters of a :class:`~workbench.llm.replay_server.ReplayServer`."""
from __future__ import annotations

import collections
import threading
from typing import Any

__all__ = ["ReplayStats"]

_STATS_BODIES_CAP = 1000


class ReplayStats:
    """Counters of one server, safe to read from any thread (every read is a snapshot)."""

    _COUNTERS = ("requests_total", "chat_requests", "embedding_requests", "in_flight",
                 "max_in_flight", "faults_served", "hung_up")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._clear()

    def _clear(self) -> None:
        self._requests_total = 0
        self._chat_requests = 0
        self._embedding_requests = 0
        self._max_in_flight = self._in_flight
        self._faults_served = 0
        self._hung_up = 0  # streams the client closed before their end
        self._bodies: collections.deque[dict] = collections.deque(maxlen=_STATS_BODIES_CAP)
        self._schemas: collections.Counter[str] = collections.Counter()  # json_schema names honoured
        self._by_status: collections.Counter[int] = collections.Counter()
        # Authorization headers as received, so a test can tell which key reached this host.
        self._authorizations: collections.Counter[str] = collections.Counter()

    # -- updates (server side)
    def _arrived(self, authorization: str | None = None) -> None:
        with self._lock:
            if authorization is not None:
                self._authorizations[authorization] += 1
            self._requests_total += 1
            self._in_flight += 1
            if self._in_flight > self._max_in_flight:
                self._max_in_flight = self._in_flight

    def _finished(self, status: int) -> None:
        with self._lock:
            self._in_flight -= 1
            self._by_status[status] += 1

    def _chat(self, body: Any) -> None:
        with self._lock:
            self._chat_requests += 1
            self._bodies.append(body)

    def _schema(self, name: str | None) -> None:
        with self._lock:
            self._schemas[name or "(unnamed)"] += 1

    def _embedding(self) -> None:
        with self._lock:
            self._embedding_requests += 1

    def _fault(self) -> None:
        with self._lock:
            self._faults_served += 1

    def _hang_up(self) -> None:
        with self._lock:
            self._hung_up += 1

    def reset(self) -> None:
        """Zero everything; requests in flight stay counted as in flight."""
        with self._lock:
            self._clear()

    # -- reads
    @property
    def hung_up(self) -> int:
        """Streams the client closed before their end (an idle cut, a repetition stopped)."""
        with self._lock:
            return self._hung_up

    @property
    def requests_total(self) -> int:
        return self._requests_total

    @property
    def chat_requests(self) -> int:
        return self._chat_requests

    @property
    def embedding_requests(self) -> int:
        return self._embedding_requests

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    @property
    def faults_served(self) -> int:
        return self._faults_served

    @property
    def bodies(self) -> list[dict]:
        """The JSON bodies of the last (at most 1000) chat requests, oldest first."""
        with self._lock:
            return list(self._bodies)

    @property
    def authorizations(self) -> collections.Counter[str]:
        """How many requests carried each Authorization header value."""
        with self._lock:
            return collections.Counter(self._authorizations)

    @property
    def schemas(self) -> collections.Counter[str]:
        """How many requests the server answered constrained to each JSON schema (by name)."""
        with self._lock:
            return collections.Counter(self._schemas)

    @property
    def by_status(self) -> collections.Counter[int]:
        with self._lock:
            return collections.Counter(self._by_status)

    def as_dict(self, *, with_bodies: bool = True) -> dict:
        with self._lock:
            d: dict[str, Any] = {name: getattr(self, "_" + name) for name in self._COUNTERS}
            d["by_status"] = {str(k): v for k, v in sorted(self._by_status.items())}
            d["schemas"] = dict(self._schemas)
            if with_bodies:
                d["bodies"] = list(self._bodies)
            return d

    def __repr__(self) -> str:
        return f"ReplayStats({self.as_dict(with_bodies=False)})"
