"""Sending one chat request and reading its answer: streamed, cut on silence, not on length.

A streamed answer may take as long as it keeps coming; it is cut when no chunk has come for
the idle timeout (the first one may take longer: the server's queue and prompt processing),
or when its tail repeats itself (see `repetition`). Tokens are counted as they arrive, so a
cut call still says how much it produced. A server that refuses to stream (a 400 naming
`stream`, or a JSON body where events were asked for) is answered without streaming; the
client remembers that for the endpoint.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import openai

from workbench.llm.repetition import RepetitionWatch

try:  # openai >= 3 rides on httpx2; older releases on httpx
    import httpx2 as _httpx
    from httpx2 import Response as _RawResponse
except ImportError:  # pragma: no cover
    import httpx as _httpx
    from httpx import Response as _RawResponse

IDLE_TIMEOUT = "idle_timeout"
REPETITION = "repetition"
CANCELLED = "cancelled"


@dataclass
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str | None
    finish_reason: str | None
    cut: str | None = None          # IDLE_TIMEOUT, REPETITION or CANCELLED: the answer was stopped here
    streamed: bool = True
    waited_first_s: float | None = None  # until the first chunk (queue + prompt processing)


class NotStreamed(Exception):
    """The server answered a streamed request with a whole JSON body (kept in `body`)."""

    def __init__(self, body: dict):
        super().__init__("the server answered without streaming")
        self.body = body


def refuses_streaming(exc: openai.BadRequestError) -> bool:
    return "stream" in str(exc).lower()


def reply_from_completion(response: dict, prompt_estimate: int) -> Reply:
    """A whole (non-streamed) chat completion; KeyError/IndexError/TypeError when it is none."""
    choice = response["choices"][0]
    usage = response.get("usage") or {}
    text = (choice.get("message") or {}).get("content") or ""
    return Reply(text, int(usage.get("prompt_tokens") or 0) or prompt_estimate,
                 int(usage.get("completion_tokens") or 0), response.get("model"), choice.get("finish_reason"),
                 streamed=False)


async def post_whole(client: openai.AsyncOpenAI, body: dict, prompt_estimate: int) -> Reply:
    # The client's generic POST with a raw response: the same transport, auth and error
    # mapping as chat.completions.create, without its per-call parameter introspection and
    # response models (about 30% more calls per second).
    raw = await client.post("/chat/completions", cast_to=_RawResponse, body=body)
    return reply_from_completion(json.loads(raw.content), prompt_estimate)


async def post_streamed(client: openai.AsyncOpenAI, body: dict, *, prompt_estimate: int, idle_s: float,
                        first_token_s: float, connect_s: float) -> Reply:
    """Stream one answer. Raises the client's errors (openai.APIError and kin) and NotStreamed."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    # The HTTP read timeout is only a backstop: silence is measured here, chunk by chunk.
    timeout = _httpx.Timeout(connect_s, read=max(idle_s, first_token_s) + 30)
    parts: list[str] = []
    text_len = chunks_with_text = 0
    usage: dict = {}
    model = finish = cut = None
    waited_first = None
    watch = RepetitionWatch()
    stream = None
    try:
        async with asyncio.timeout(first_token_s) as deadline:
            stream = await client.post("/chat/completions", cast_to=object, body=body, stream=True,
                                       stream_cls=openai.AsyncStream[object], options={"timeout": timeout})
            if "json" in (stream.response.headers.get("content-type") or ""):
                raise NotStreamed(json.loads(await stream.response.aread()))
            async for chunk in stream:
                deadline.reschedule(loop.time() + idle_s)
                if waited_first is None:
                    waited_first = loop.time() - t0
                if not isinstance(chunk, dict):
                    continue
                model = chunk.get("model") or model
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or ():
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        parts.append(piece)
                        text_len += len(piece)
                        chunks_with_text += 1
                    finish = choice.get("finish_reason") or finish
                if watch.looping_at(text_len, parts):
                    cut = REPETITION
                    break
    except TimeoutError:
        cut = IDLE_TIMEOUT
    except asyncio.CancelledError as exc:  # the caller stopped (Ctrl-C, a batch cancelled): say how far it got
        exc.partial = Reply("".join(parts), int(usage.get("prompt_tokens") or 0) or prompt_estimate,
                            chunks_with_text, model, finish, cut=CANCELLED, waited_first_s=waited_first)
        raise
    finally:
        if stream is not None:
            await stream.close()  # the server stops generating for a closed connection
    # Servers send about one token per chunk; their own count, when they give it, wins.
    return Reply("".join(parts), int(usage.get("prompt_tokens") or 0) or prompt_estimate,
                 int(usage.get("completion_tokens") or 0) or chunks_with_text, model, finish, cut=cut,
                 waited_first_s=waited_first)
