"""A local OpenAI-compatible HTTP server that replays scripted replies.

The test suite and the benchmarks start it in-process so that the real ``openai``
client is exercised over real HTTP (DESIGN.md §4, §7)::

    with ReplayServer(Script([Rule(match="plan", reply={"goal": "x"})]), latency_s=0.05) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        srv.inject("rate_limit", retry_after=1.5)      # the next chat request gets a 429
        ...

The server runs on tornado in a background thread that owns its own asyncio event loop;
artificial latency is an ``await asyncio.sleep`` so thousands of requests can wait at once.

A server honours ``response_format`` (a ``json_schema`` request no rule matches gets a valid
instance of its schema), or imitates one that does not: ``structured="json_object"`` or
``"reject"`` refuse it with a 400, ``"ignore"`` takes it and answers freely; ``prose=`` is a
small model's answer to every request that no schema constrains.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/embeddings``, ``GET /v1/models`` and
``GET /_stats``.  Command line::

    python -m workbench.llm.replay_server --fixtures F.json --port 8765 --latency 0.05

The tornado handlers live in :mod:`workbench.llm.replay_handlers`, the counters in
:mod:`workbench.llm.replay_stats` and the default structured reply in
:mod:`workbench.llm.schema_instance`.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import inspect
import itertools
import json
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import tornado.httpserver
import tornado.netutil

from workbench.llm.replay_handlers import application, embedding_vector, messages_text
from workbench.llm.replay_stats import ReplayStats
from workbench.llm.replay_streams import STRUCTURED_MODES
from workbench.llm.schema_instance import schema_instance

__all__ = ["Rule", "Script", "ReplayServer", "ReplayStats", "FAULT_KINDS", "STRUCTURED_MODES", "schema_instance",
           "embedding_vector"]

FAULT_KINDS = ("rate_limit", "server_error", "malformed_content", "malformed_body", "delay",
               # imitating a small model on a slow local server: see replay_streams
               "slow_stream", "stall", "repeat", "context_error", "no_stream", "stream_refused")


# --------------------------------------------------------------------------- script


@dataclass
class Rule:
    """One scripted reply.

    ``match`` is a substring of the contents of all messages joined with newlines (None:
    any request).  ``reply`` is the message content: a string as is, a dict or list as
    JSON, a callable called with the request body (returning a string, dict or list).
    ``times`` is how many requests the rule serves (None: unlimited); ``model`` limits it
    to requests for that model.
    """

    match: str | None = None
    reply: str | dict | list | Callable[[dict], str | dict] = "ok"
    times: int | None = None
    model: str | None = None

    def applies(self, text: str, model: str | None, used: int = 0) -> bool:
        """Whether the rule answers a request with this text and model, ``used`` times served."""
        if self.times is not None and used >= self.times:
            return False
        if self.model is not None and self.model != model:
            return False
        return self.match is None or self.match in text


@dataclass
class Script:
    """Rules tried in order, plus the artificial latency of every answer."""

    rules: list[Rule] = field(default_factory=list)
    latency_s: float = 0.0

    @classmethod
    def from_dict(cls, data: dict | list) -> "Script":
        if isinstance(data, list):  # a bare list of rules
            data = {"rules": data}
        rules = []
        for i, r in enumerate(data.get("rules") or []):
            if not isinstance(r, dict):
                raise ValueError(f"rule {i} must be an object, got {type(r).__name__}")
            unknown = set(r) - {"match", "reply", "times", "model"}
            if unknown:
                raise ValueError(f"rule {i} has unknown keys: {sorted(unknown)}")
            rules.append(Rule(match=r.get("match"), reply=r.get("reply", "ok"),
                              times=r.get("times"), model=r.get("model")))
        return cls(rules=rules, latency_s=float(data.get("latency_s") or 0.0))

    @classmethod
    def from_file(cls, path: str | Path) -> "Script":
        """Read ``{"latency_s": .., "rules": [{"match": .., "reply": .., "times": ..}]}``."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


# --------------------------------------------------------------------------- faults and replies


class _Fault:
    __slots__ = ("kind", "retry_after", "delay_s", "pause_s", "after_tokens")

    def __init__(self, kind: str, retry_after: float | None, delay_s: float, pause_s: float = 0.0,
                 after_tokens: int = 0) -> None:
        self.kind, self.retry_after, self.delay_s = kind, retry_after, delay_s
        self.pause_s, self.after_tokens = pause_s, after_tokens


def _as_content(reply: Any) -> str:
    if isinstance(reply, str):
        return reply
    if isinstance(reply, (dict, list)):
        return json.dumps(reply)
    if reply is None:
        return ""
    return str(reply)


# --------------------------------------------------------------------------- server


class ReplayServer:
    """An OpenAI-compatible server on a background thread; see the module docstring."""

    def __init__(self, script: Script | None = None, *, latency_s: float | None = None,
                 host: str = "127.0.0.1", port: int = 0, context_window: int | None = None,
                 slots: int = 1, structured: str = "honour", prose: str | None = None) -> None:
        self.script = script or Script(rules=[])
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"unknown structured mode {structured!r}; expected one of {tuple(STRUCTURED_MODES)}")
        # `structured`: see STRUCTURED_MODES. `prose`: a small model's answer to any request that
        # no schema constrains (rules answer only the constrained ones; under JSON mode the
        # prose comes as {"answer": prose}).
        self.structured, self.prose = structured, prose
        # Given: /props says it (as llama.cpp, per slot) and longer prompts get its 400.
        self.context_window, self.slots = context_window, slots
        self.latency_s = float(latency_s if latency_s is not None else self.script.latency_s)
        self.host, self.port = host, port
        self.stats = ReplayStats()
        self._lock = threading.Lock()
        self._rules: list[Rule] = list(self.script.rules)
        self._uses: dict[int, int] = {}  # id(rule) -> requests served (rules stay reusable)
        self._faults: collections.deque[_Fault] = collections.deque()
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- lifecycle
    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``openai.OpenAI(base_url=...)``."""
        if self._thread is None:
            raise RuntimeError("the replay server is not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (``/_stats`` lives there)."""
        return self.base_url[: -len("/v1")]

    def start(self) -> "ReplayServer":
        if self._thread is not None:
            return self
        sockets = tornado.netutil.bind_sockets(self.port, self.host)
        self.port = sockets[0].getsockname()[1]
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, args=(sockets,),
                                        name=f"replay-server:{self.port}", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError("the replay server failed to start") from self._startup_error
        return self

    def stop(self, timeout: float = 5.0) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._stop_event.set)  # type: ignore[union-attr]
        except RuntimeError:  # loop already closed
            pass
        thread.join(timeout)
        self._thread = None
        self._loop = None

    def __enter__(self) -> "ReplayServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"{self.host}:{self.port}" if self._thread else "stopped"
        return f"<ReplayServer {where} rules={len(self._rules)} latency={self.latency_s}s>"

    def _run(self, sockets: list) -> None:
        if hasattr(signal, "pthread_sigmask"):  # let Ctrl-C and SIGTERM reach the main thread
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._serve(sockets))
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            if not self._ready.is_set():
                self._startup_error = exc
                for s in sockets:
                    s.close()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()
                self._ready.set()

    async def _serve(self, sockets: list) -> None:
        self._stop_event = asyncio.Event()
        http = tornado.httpserver.HTTPServer(application(self), xheaders=False, max_body_size=256 * 1024 * 1024)
        http.add_sockets(sockets)
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            http.stop()
            try:
                await asyncio.wait_for(http.close_all_connections(), timeout=2.0)
            except (asyncio.TimeoutError, Exception):
                pass

    # -- script and faults
    def add_rule(self, rule: Rule) -> None:
        """Append a rule (tried after the existing ones)."""
        with self._lock:
            if any(r is rule for r in self._rules):
                raise ValueError("this Rule object is already on the server; add a copy")
            self._rules.append(rule)

    def set_rules(self, rules: list[Rule]) -> None:
        """Replace all rules."""
        with self._lock:
            self._rules = list(rules)
            self._uses.clear()

    def _rules_snapshot(self) -> list[Rule]:
        with self._lock:
            return list(self._rules)

    def inject(self, kind: str, count: int = 1, *, retry_after: float | None = None,
               delay_s: float = 0.0, pause_s: float = 0.0, after_tokens: int = 0) -> None:
        """Apply a fault to the next ``count`` chat-completion requests (FIFO after earlier ones).

        Kinds: ``rate_limit`` (429 + Retry-After when given), ``server_error`` (500),
        ``malformed_content`` (200 with broken JSON content), ``malformed_body`` (200 with a
        body that is not JSON) and ``delay`` (``delay_s`` more before a normal answer).
        Streamed like a small model (see ``replay_streams``): ``slow_stream`` (a word every
        ``pause_s``), ``stall`` (silent for ``delay_s`` after ``after_tokens`` words),
        ``repeat`` (one line again and again until ``max_tokens``); ``context_error``
        (llama.cpp's 400 for a prompt over the context), ``no_stream`` (a JSON body to a
        streamed request), ``stream_refused`` (a 400 naming ``stream`` to a streamed request).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        if count < 0:
            raise ValueError("count must be >= 0")
        with self._lock:
            self._faults.extend(_Fault(kind, retry_after, delay_s, pause_s, after_tokens) for _ in range(count))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def _next_fault(self) -> _Fault | None:
        if not self._faults:
            return None
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def reset_stats(self) -> None:
        self.stats.reset()

    async def _resolve(self, body: dict, model: str, constrained: str | None = None) -> str:
        """The reply to a request; `constrained`: the ``response_format`` type it honours."""
        if self.prose is not None and constrained != "json_schema":
            return json.dumps({"answer": self.prose}) if constrained == "json_object" else self.prose
        text = messages_text(body["messages"])
        with self._lock:
            rule = next((r for r in self._rules if r.applies(text, model, self._uses.get(id(r), 0))),
                        None)
            if rule is not None:
                self._uses[id(rule)] = self._uses.get(id(rule), 0) + 1
        if rule is not None:
            reply = rule.reply
            if callable(reply):
                reply = reply(body)
                if inspect.isawaitable(reply):
                    reply = await reply
            return _as_content(reply)
        if constrained == "json_schema":
            return json.dumps(schema_instance((body["response_format"].get("json_schema") or {}).get("schema") or {}))
        return "ok"


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.llm.replay_server",
                                     description="Serve scripted OpenAI-compatible replies.")
    parser.add_argument("--fixtures", type=Path, help="JSON script: {latency_s, rules: [...]}")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=None, help="seconds added to every answer")
    parser.add_argument("--context-window", type=int, default=None,
                        help="tokens per slot, said in /props (as llama.cpp) and enforced")
    parser.add_argument("--structured", choices=tuple(STRUCTURED_MODES), default="honour",
                        help="what it does with response_format: honour it, JSON mode only, reject or ignore it")
    parser.add_argument("--prose", default=None, help="the reply to every request no schema constrains")
    args = parser.parse_args(argv)
    script = Script.from_file(args.fixtures) if args.fixtures else Script(rules=[])
    server = ReplayServer(script, latency_s=args.latency, host=args.host, port=args.port,
                          context_window=args.context_window, structured=args.structured, prose=args.prose).start()
    print(f"replay server on {server.base_url} ({len(script.rules)} rules, latency "
          f"{server.latency_s}s); Ctrl-C to stop", flush=True)
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background by a shell
        signal.signal(signal.SIGINT, interrupt)
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
