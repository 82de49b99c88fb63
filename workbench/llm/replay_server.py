"""A local OpenAI-compatible HTTP server that replays scripted replies.

The test suite and the benchmarks start it in-process so that the real ``openai``
client is exercised over real HTTP (DESIGN.md §4, §7)::

    with ReplayServer(Script([Rule(match="plan", reply={"goal": "x"})]), latency_s=0.05) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
        srv.inject("rate_limit", retry_after=1.5)      # the next chat request gets a 429
        ...

The server runs on tornado in a background thread that owns its own asyncio event loop;
artificial latency is an ``await asyncio.sleep`` so thousands of requests can wait at once.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/embeddings``, ``GET /v1/models`` and
``GET /_stats``.  Command line::

    python -m workbench.llm.replay_server --fixtures F.json --port 8765 --latency 0.05
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import hashlib
import inspect
import itertools
import json
import math
import signal
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import tornado.httpserver
import tornado.netutil
import tornado.web

__all__ = ["Rule", "Script", "ReplayServer", "ReplayStats", "FAULT_KINDS", "schema_instance"]

FAULT_KINDS = ("rate_limit", "server_error", "malformed_content", "malformed_body", "delay")

#: The broken JSON that a ``malformed_content`` fault puts in the message content.
MALFORMED_CONTENT = '{"goal": "x", '
#: The body (served as ``application/json``) of a ``malformed_body`` fault.
MALFORMED_BODY = '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{'

DEFAULT_MODEL = "replay-model"
_STATS_BODIES_CAP = 1000


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


# --------------------------------------------------------------------------- stats


class ReplayStats:
    """Counters of one server, safe to read from any thread (every read is a snapshot)."""

    _COUNTERS = ("requests_total", "chat_requests", "embedding_requests", "in_flight",
                 "max_in_flight", "faults_served")

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
        self._bodies: collections.deque[dict] = collections.deque(maxlen=_STATS_BODIES_CAP)
        self._by_status: collections.Counter[int] = collections.Counter()

    # -- updates (server side)
    def _arrived(self) -> None:
        with self._lock:
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

    def _embedding(self) -> None:
        with self._lock:
            self._embedding_requests += 1

    def _fault(self) -> None:
        with self._lock:
            self._faults_served += 1

    def reset(self) -> None:
        """Zero everything; requests in flight stay counted as in flight."""
        with self._lock:
            self._clear()

    # -- reads
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
    def by_status(self) -> collections.Counter[int]:
        with self._lock:
            return collections.Counter(self._by_status)

    def as_dict(self, *, with_bodies: bool = True) -> dict:
        with self._lock:
            d: dict[str, Any] = {name: getattr(self, "_" + name) for name in self._COUNTERS}
            d["by_status"] = {str(k): v for k, v in sorted(self._by_status.items())}
            if with_bodies:
                d["bodies"] = list(self._bodies)
            return d

    def __repr__(self) -> str:
        return f"ReplayStats({self.as_dict(with_bodies=False)})"


# --------------------------------------------------------------------------- helpers


def _count_tokens(text: str) -> int:
    return max(1, len(text.split()))


def _content_text(content: Any) -> str:
    """The text of one message's content: a string or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return json.dumps(content)


def _messages_text(messages: list) -> str:
    return "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, dict))


def _as_content(reply: Any) -> str:
    if isinstance(reply, str):
        return reply
    if isinstance(reply, (dict, list)):
        return json.dumps(reply)
    if reply is None:
        return ""
    return str(reply)


def embedding_vector(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic unit vector derived from a hash of ``text``."""
    raw = hashlib.shake_256(text.encode("utf-8")).digest(4 * dimensions)
    ints = struct.unpack(f"<{dimensions}I", raw)
    vec = [(i / 2147483647.5) - 1.0 for i in ints]  # uniform in [-1, 1]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


# --------------------------------------------------------------------------- schema instances

_FORMAT_EXAMPLES = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "x@example.com",
    "idn-email": "x@example.com",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
}

_MAX_DEPTH = 12


def _resolve_ref(ref: str, root: dict) -> dict:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for token in ref[1:].split("/"):
        if not token:
            continue
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _merge_all_of(schema: dict, root: dict) -> dict:
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for sub in schema["allOf"]:
        while isinstance(sub, dict) and "$ref" in sub:
            sub = {**_resolve_ref(sub["$ref"], root), **{k: v for k, v in sub.items() if k != "$ref"}}
        if not isinstance(sub, dict):
            continue
        if "allOf" in sub:
            sub = _merge_all_of(sub, root)
        for key, value in sub.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def schema_instance(schema: dict | bool, root: dict | None = None, *, name: str | None = None,
                    variant: int = 0, _depth: int = 0) -> Any:
    """A deterministic minimal instance valid for a JSON schema.

    Handles object/properties/required, strings (the property name or "x"; enum, const,
    minLength, maxLength, common formats), integer/number (minimum, exclusiveMinimum,
    maximum), boolean, null, arrays (minItems; one item otherwise), ``$ref`` into
    ``$defs``/``definitions``, ``anyOf``/``oneOf`` (first non-null branch) and ``allOf``.
    """
    if root is None:
        root = schema if isinstance(schema, dict) else {}
    if schema is True or schema == {} or not isinstance(schema, dict):
        return name or "x"
    if "$ref" in schema:
        target = _resolve_ref(schema["$ref"], root)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return schema_instance({**target, **rest} if rest else target, root, name=name,
                               variant=variant, _depth=_depth + 1)
    if "allOf" in schema:
        return schema_instance(_merge_all_of(schema, root), root, name=name, variant=variant,
                               _depth=_depth)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema and schema["enum"]:
        values = schema["enum"]
        return values[variant % len(values)]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = schema[key]
            chosen = next((b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")),
                          None)
            if chosen is None:
                return None
            rest = {k: v for k, v in schema.items() if k != key}
            if isinstance(chosen, dict) and rest:
                # keep the outer keywords (e.g. a $defs-free title/description) next to the branch
                chosen = {**{k: v for k, v in rest.items() if k not in ("type",)}, **chosen}
            return schema_instance(chosen, root, name=name, variant=variant, _depth=_depth + 1)

    typ = schema.get("type")
    if isinstance(typ, list):
        non_null = [t for t in typ if t != "null"]
        typ = non_null[0] if non_null else "null"
    if typ is None:
        if "properties" in schema or "required" in schema:
            typ = "object"
        elif "items" in schema or "prefixItems" in schema:
            typ = "array"
        else:
            return name or "x"

    if typ == "object":
        props = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for key in schema.get("required") or []:
            sub = props.get(key, True)
            out[key] = schema_instance(sub, root, name=key, _depth=_depth + 1)
        return out
    if typ == "array":
        prefix = schema.get("prefixItems") or []
        min_items = int(schema.get("minItems", 0))
        max_items = schema.get("maxItems")
        count = max(min_items, len(prefix) if prefix else 1)
        if min_items == 0 and _depth >= _MAX_DEPTH:
            count = 0  # stop recursive structures
        if max_items is not None:
            count = min(count, int(max_items))
        items = schema.get("items", True)
        item_name = name[:-1] if name and name.endswith("s") and len(name) > 1 else name
        out_list = []
        for i in range(count):
            sub = prefix[i] if i < len(prefix) else items
            if sub is False:
                break
            out_list.append(schema_instance(sub, root, name=item_name,
                                            variant=i if schema.get("uniqueItems") else 0,
                                            _depth=_depth + 1))
        return out_list
    if typ == "string":
        fmt = schema.get("format")
        if fmt in _FORMAT_EXAMPLES:
            return _FORMAT_EXAMPLES[fmt]
        value = name or "x"
        if variant:
            value = f"{value}{variant}"
        min_len = int(schema.get("minLength", 0))
        if len(value) < min_len:
            value = (value * (min_len // len(value) + 1))[:min_len]
        if schema.get("maxLength") is not None:
            value = value[: int(schema["maxLength"])]
        return value
    if typ in ("integer", "number"):
        value: float = 0
        if "minimum" in schema:
            value = schema["minimum"]
        elif "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            value = schema["exclusiveMinimum"] + 1
        elif "maximum" in schema and schema["maximum"] < 0:
            value = schema["maximum"]
        elif "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool) \
                and schema["exclusiveMaximum"] <= 0:
            value = schema["exclusiveMaximum"] - 1
        value += variant
        if typ == "integer":
            value = int(math.ceil(value))
        return value
    if typ == "boolean":
        return bool(variant % 2)
    if typ == "null":
        return None
    return name or "x"


# --------------------------------------------------------------------------- handlers


def _no_access_log(handler: tornado.web.RequestHandler) -> None:
    """Injected 429/500s are expected; keep tornado's access log out of test output."""


class _Fault:
    __slots__ = ("kind", "retry_after", "delay_s")

    def __init__(self, kind: str, retry_after: float | None, delay_s: float) -> None:
        self.kind, self.retry_after, self.delay_s = kind, retry_after, delay_s


def _error_body(message: str, type_: str, code: str | None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


class _Handler(tornado.web.RequestHandler):
    server: "ReplayServer"

    def initialize(self, server: "ReplayServer") -> None:
        self.server = server
        self._counted = False

    def prepare(self) -> None:
        self.server.stats._arrived()
        self._counted = True

    def on_finish(self) -> None:
        if self._counted:
            self._counted = False
            self.server.stats._finished(self.get_status())

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json")

    def send_json(self, obj: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(obj))

    def send_error_json(self, status: int, message: str, type_: str = "invalid_request_error",
                        code: str | None = None) -> None:
        self.send_json(_error_body(message, type_, code), status)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish(json.dumps(_error_body(self._reason, "server_error" if status_code >= 500
                                           else "invalid_request_error", None)))

    def json_body(self) -> Any:
        try:
            return json.loads(self.request.body or b"null")
        except ValueError:
            return None

    async def latency(self) -> None:
        if self.server.latency_s > 0:
            await asyncio.sleep(self.server.latency_s)


class _ChatHandler(_Handler):
    async def post(self) -> None:
        body = self.json_body()
        self.server.stats._chat(body)
        fault = self.server._next_fault()
        await self.latency()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self.send_error_json(400, "The body must be a JSON object with a 'messages' list.")
        model = body.get("model") or DEFAULT_MODEL
        if fault is not None:
            self.server.stats._fault()
            if fault.kind == "rate_limit":
                if fault.retry_after is not None:
                    self.set_header("Retry-After", _format_seconds(fault.retry_after))
                return self.send_error_json(429, "Rate limit reached (injected by the replay server).",
                                            "rate_limit_error", "rate_limit_exceeded")
            if fault.kind == "server_error":
                return self.send_error_json(500, "The server had an error (injected by the replay server).",
                                            "server_error", None)
            if fault.kind == "malformed_body":
                self.set_status(200)
                return self.finish(MALFORMED_BODY)
            if fault.kind == "delay" and fault.delay_s > 0:
                await asyncio.sleep(fault.delay_s)
        if fault is not None and fault.kind == "malformed_content":
            content = MALFORMED_CONTENT
        else:
            try:
                content = await self.server._resolve(body, model)
            except Exception as exc:  # a callable reply failed: report it like a server
                return self.send_error_json(500, f"reply callable failed: {exc!r}", "server_error", None)
        prompt_tokens = _count_tokens(_messages_text(body["messages"]))
        completion_tokens = _count_tokens(content)
        completion_id = f"chatcmpl-replay{next(self.server._ids):08d}"
        created = int(time.time())
        if body.get("stream"):
            return self._stream(completion_id, created, model, content, prompt_tokens, completion_tokens,
                                bool((body.get("stream_options") or {}).get("include_usage")))
        self.send_json({
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
            "system_fingerprint": "replay",
        })

    def _stream(self, cid: str, created: int, model: str, content: str, prompt_tokens: int,
                completion_tokens: int, include_usage: bool) -> None:
        """A minimal server-sent-events answer: the whole content in one delta."""
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        if include_usage:
            chunks.append({**base, "choices": [], "usage": {
                "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens}})
        for chunk in chunks:
            self.write(f"data: {json.dumps(chunk)}\n\n")
        self.finish("data: [DONE]\n\n")


class _EmbeddingsHandler(_Handler):
    async def post(self) -> None:
        body = self.json_body()
        self.server.stats._embedding()
        await self.latency()
        if not isinstance(body, dict) or "input" not in body:
            return self.send_error_json(400, "The body must be a JSON object with an 'input'.")
        inputs = body["input"]
        if isinstance(inputs, str) or (isinstance(inputs, list) and inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            return self.send_error_json(400, "'input' must be a string or a non-empty list.")
        texts = [x if isinstance(x, str) else json.dumps(x) for x in inputs]
        dims = body.get("dimensions") or 64
        if not isinstance(dims, int) or dims < 1:
            return self.send_error_json(400, "'dimensions' must be a positive integer.")
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = embedding_vector(text, dims)
            emb: Any = (base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode("ascii")
                        if as_base64 else vec)
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(_count_tokens(t) for t in texts)
        self.send_json({"object": "list", "data": data, "model": body.get("model") or DEFAULT_MODEL,
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


class _ModelsHandler(_Handler):
    def get(self) -> None:
        names = [DEFAULT_MODEL] + [r.model for r in self.server._rules_snapshot() if r.model]
        self.send_json({"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": "replay"}
            for n in dict.fromkeys(names)]})


class _StatsHandler(_Handler):
    def get(self) -> None:
        with_bodies = self.get_query_argument("bodies", "1") not in ("0", "false", "no")
        self.send_json(self.server.stats.as_dict(with_bodies=with_bodies))


class _NotFoundHandler(_Handler):
    def prepare(self) -> None:
        super().prepare()
        self.send_error_json(404, f"Unknown endpoint: {self.request.method} {self.request.path}",
                             "invalid_request_error", "unknown_url")


# --------------------------------------------------------------------------- server


class ReplayServer:
    """An OpenAI-compatible server on a background thread; see the module docstring."""

    def __init__(self, script: Script | None = None, *, latency_s: float | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script or Script(rules=[])
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
        kw = {"server": self}
        app = tornado.web.Application([
            (r"(?:/v1)?/chat/completions/?", _ChatHandler, kw),
            (r"(?:/v1)?/embeddings/?", _EmbeddingsHandler, kw),
            (r"(?:/v1)?/models/?", _ModelsHandler, kw),
            (r"/_stats/?", _StatsHandler, kw),
            (r".*", _NotFoundHandler, kw),
        ], compress_response=False, serve_traceback=False, log_function=_no_access_log)
        http = tornado.httpserver.HTTPServer(app, xheaders=False, max_body_size=256 * 1024 * 1024)
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
               delay_s: float = 0.0) -> None:
        """Apply a fault to the next ``count`` chat-completion requests (FIFO after earlier ones).

        Kinds: ``rate_limit`` (429 + Retry-After when given), ``server_error`` (500),
        ``malformed_content`` (200 with broken JSON content), ``malformed_body`` (200 with a
        body that is not JSON) and ``delay`` (``delay_s`` more before a normal answer).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        if count < 0:
            raise ValueError("count must be >= 0")
        with self._lock:
            self._faults.extend(_Fault(kind, retry_after, delay_s) for _ in range(count))

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

    async def _resolve(self, body: dict, model: str) -> str:
        text = _messages_text(body["messages"])
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
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {}
            return json.dumps(schema_instance(schema))
        return "ok"


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.llm.replay_server",
                                     description="Serve scripted OpenAI-compatible replies.")
    parser.add_argument("--fixtures", type=Path, help="JSON script: {latency_s, rules: [...]}")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=None, help="seconds added to every answer")
    args = parser.parse_args(argv)
    script = Script.from_file(args.fixtures) if args.fixtures else Script(rules=[])
    server = ReplayServer(script, latency_s=args.latency, host=args.host, port=args.port).start()
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
