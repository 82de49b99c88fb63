"""The HTTP side of the replay server: tornado handlers for the OpenAI-compatible
endpoints, the faults as they go out on the wire, and the deterministic embeddings.

:func:`application` routes ``/v1/chat/completions``, ``/v1/embeddings``, ``/v1/models`` and
``/_stats`` to the handlers; each handler reads its :class:`ReplayServer` (rules, pending
faults, statistics, latency) through ``self.server``.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import struct
import time
from typing import TYPE_CHECKING, Any

import tornado.web

from workbench.llm.replay_streams import (STRUCTURED_MODES, context_error_body, paced_stream, props_body,
                                          repeating_answer, within_budget)

if TYPE_CHECKING:
    from workbench.llm.replay_server import ReplayServer

#: The broken JSON that a ``malformed_content`` fault puts in the message content.
MALFORMED_CONTENT = '{"goal": "x", '
#: The body (served as ``application/json``) of a ``malformed_body`` fault.
MALFORMED_BODY = '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{'

DEFAULT_MODEL = "replay-model"


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


def messages_text(messages: list) -> str:
    return "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, dict))


def embedding_vector(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic unit vector derived from a hash of ``text``."""
    raw = hashlib.shake_256(text.encode("utf-8")).digest(4 * dimensions)
    ints = struct.unpack(f"<{dimensions}I", raw)
    vec = [(i / 2147483647.5) - 1.0 for i in ints]  # uniform in [-1, 1]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


# --------------------------------------------------------------------------- handlers


def _no_access_log(handler: tornado.web.RequestHandler) -> None:
    """Injected 429/500s are expected; keep tornado's access log out of test output."""


def _error_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


class _Handler(tornado.web.RequestHandler):
    server: "ReplayServer"

    def initialize(self, server: "ReplayServer") -> None:
        self.server = server
        self._counted = False

    def prepare(self) -> None:
        self.server.stats._arrived(self.request.headers.get("Authorization"))
        self._counted = True

    def finish(self, chunk: Any = None) -> Any:
        # Counted before the response goes out (tornado's on_finish runs after the flush,
        # so a fast client could read the stats before its own status was in). Errors
        # tornado sends itself also end here, through send_error.
        if chunk is not None:
            self.write(chunk)
        if self._counted:
            self._counted = False
            self.server.stats._finished(self.get_status())
        return super().finish()

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
            if fault.kind == "stream_refused" and body.get("stream"):
                return self.send_error_json(400, "This server does not support stream=true (injected by the "
                                            "replay server).", "invalid_request_error", None)
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        honours, refuses = STRUCTURED_MODES[self.server.structured]
        if kind in refuses:  # OpenAI's words for a model without the mode
            return self.send_json(_error_body(f"Invalid parameter: 'response_format' of type '{kind}' is not "
                                              "supported with this model.", "invalid_request_error", None,
                                              param="response_format"), 400)
        constrained = kind if kind in honours else None
        if constrained == "json_schema":
            self.server.stats._schema((fmt.get("json_schema") or {}).get("name"))
        prompt_tokens = _count_tokens(messages_text(body["messages"]))
        n_ctx = self.server.context_window
        if fault is not None and fault.kind == "context_error":  # whatever its size, this prompt is too long
            return self.send_json(context_error_body(prompt_tokens, max(1, min(n_ctx or prompt_tokens,
                                                                                prompt_tokens - 1))), 400)
        if n_ctx is not None and prompt_tokens > n_ctx:
            return self.send_json(context_error_body(prompt_tokens, n_ctx), 400)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        if fault is not None and fault.kind == "malformed_content":
            content = MALFORMED_CONTENT
        elif fault is not None and fault.kind == "repeat":
            content = repeating_answer(max_tokens if isinstance(max_tokens, int) else None)
        else:
            try:
                content = await self.server._resolve(body, model, constrained)
            except Exception as exc:  # a callable reply failed: report it like a server
                return self.send_error_json(500, f"reply callable failed: {exc!r}", "server_error", None)
        content, finish_reason = within_budget(content, max_tokens)
        completion_tokens = _count_tokens(content)
        completion_id = f"chatcmpl-replay{next(self.server._ids):08d}"
        created = int(time.time())
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        paced = fault is not None and fault.kind in ("slow_stream", "stall", "repeat")
        if body.get("stream") and paced:
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens} if include_usage else None
            base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}
            return await paced_stream(self, base, content, finish_reason=finish_reason, usage=usage,
                                      pause_s=fault.pause_s, stall_after=fault.after_tokens if fault.kind == "stall"
                                      else None, stall_s=fault.delay_s)
        if body.get("stream") and not (fault is not None and fault.kind == "no_stream"):
            return self._stream(completion_id, created, model, content, prompt_tokens, completion_tokens,
                                include_usage, finish_reason)
        self.send_json({
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": finish_reason,
            }],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
            "system_fingerprint": "replay",
        })

    def _stream(self, cid: str, created: int, model: str, content: str, prompt_tokens: int,
                completion_tokens: int, include_usage: bool, finish_reason: str = "stop") -> None:
        """A minimal server-sent-events answer: the whole content in one delta."""
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]},
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


class _PropsHandler(_Handler):
    """llama.cpp's ``/props``, served when the server has a ``context_window`` (else 404, as vLLM)."""

    def get(self) -> None:
        if self.server.context_window is None:
            return self.send_error_json(404, "Unknown endpoint: GET /props", "invalid_request_error", "unknown_url")
        self.send_json(props_body(self.server.context_window, self.server.slots, DEFAULT_MODEL))


class _StatsHandler(_Handler):
    def get(self) -> None:
        with_bodies = self.get_query_argument("bodies", "1") not in ("0", "false", "no")
        self.send_json(self.server.stats.as_dict(with_bodies=with_bodies))


class _NotFoundHandler(_Handler):
    def prepare(self) -> None:
        super().prepare()
        self.send_error_json(404, f"Unknown endpoint: {self.request.method} {self.request.path}",
                             "invalid_request_error", "unknown_url")


def application(server: "ReplayServer") -> tornado.web.Application:
    """The tornado application that serves ``server``'s endpoints."""
    kw = {"server": server}
    return tornado.web.Application([
        (r"(?:/v1)?/chat/completions/?", _ChatHandler, kw),
        (r"(?:/v1)?/embeddings/?", _EmbeddingsHandler, kw),
        (r"(?:/v1)?/models/?", _ModelsHandler, kw),
        (r"/props/?", _PropsHandler, kw),
        (r"/_stats/?", _StatsHandler, kw),
        (r".*", _NotFoundHandler, kw),
    ], compress_response=False, serve_traceback=False, log_function=_no_access_log)
