"""Replay behaviours that imitate a small model on a slow local server (issue 26).

What llama.cpp with Qwen2.5-Coder-0.5B on 2 CPU cores did, made repeatable for tests:
answers that come a token at a time with pauses (``slow_stream``), a stream that goes
silent mid-answer (``stall``), an answer that repeats one line until its budget is spent
(``repeat``), the 400 for a prompt over the context (``context_error``, and every request
once the server has a ``context_window``), the budget honoured (``max_tokens``: the answer
cut, ``finish_reason: "length"``), servers that will not stream (``no_stream``: a JSON
body to a streamed request; ``stream_refused``: a 400 naming ``stream``), and servers with
and without structured output (``STRUCTURED_MODES``).

Tokens are words here, as everywhere in the replay server.
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

from tornado.iostream import StreamClosedError

if TYPE_CHECKING:
    from workbench.llm.replay_handlers import _Handler

#: How a server treats ``response_format`` (its ``structured`` argument): the types it honours
#: (constrains the answer to, as llama.cpp and vLLM do by a grammar) and the types it refuses
#: with a 400 naming ``response_format``; any other type it takes and ignores.
STRUCTURED_MODES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "honour": (frozenset({"json_schema", "json_object"}), frozenset()),   # llama.cpp, vLLM, OpenAI
    "json_object": (frozenset({"json_object"}), frozenset({"json_schema"})),  # JSON mode only (DeepSeek)
    "reject": (frozenset(), frozenset({"json_schema", "json_object"})),   # knows no response_format
    "ignore": (frozenset(), frozenset()),                                 # takes it and answers freely
}

#: The line a ``repeat`` fault writes again and again (after one sensible opening line).
REPEAT_LINE = "The task runs the command and checks the output file.\n"
_WORD = re.compile(r"\S+\s*")


def context_error_body(prompt_tokens: int, n_ctx: int) -> dict:
    """llama.cpp's answer to a prompt longer than a slot's context (its wording and fields)."""
    return {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt_tokens,
                      "n_ctx": n_ctx, "message": f"request ({prompt_tokens} tokens) exceeds the available "
                                                 f"context size ({n_ctx} tokens), try increasing it"}}


def props_body(n_ctx: int, slots: int, model: str) -> dict:
    """The part of llama.cpp's ``/props`` the client reads."""
    return {"default_generation_settings": {"n_ctx": n_ctx, "params": {}}, "total_slots": slots,
            "model_alias": model, "build_info": "replay"}


def repeating_answer(budget: int | None) -> str:
    words_per_line = len(REPEAT_LINE.split())
    lines = max(20, (budget or 400) // words_per_line + 2)  # runs past any budget it is given
    return '{"goal": "Check the output.\n' + REPEAT_LINE * lines


def within_budget(content: str, max_tokens: Any) -> tuple[str, str]:
    """The content cut to `max_tokens` words, and the finish reason a server would give."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return content, "stop"
    words = _WORD.findall(content.lstrip())
    if len(words) <= max_tokens:
        return content, "stop"
    lead = content[: len(content) - len(content.lstrip())]
    return lead + "".join(words[:max_tokens]).rstrip(), "length"


async def paced_stream(handler: "_Handler", base: dict, content: str, *, finish_reason: str, usage: dict | None,
                       pause_s: float, stall_after: int | None = None, stall_s: float = 0.0) -> None:
    """Server-sent events a word at a time, `pause_s` apart; after `stall_after` words
    nothing for `stall_s`. A client that hangs up ends it (as a server stops generating)."""
    handler.set_header("Content-Type", "text/event-stream")
    handler.set_header("Cache-Control", "no-cache")
    words = _WORD.findall(content) or [""]

    async def send(chunk: dict) -> None:
        handler.write(f"data: {json.dumps(chunk)}\n\n")
        await handler.flush()

    try:
        for i, word in enumerate(words):
            if stall_after is not None and i == stall_after and stall_s > 0:
                await asyncio.sleep(stall_s)
            delta = {"content": word} if i else {"role": "assistant", "content": word}
            await send({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            if pause_s > 0:
                await asyncio.sleep(pause_s)
        await send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]})
        if usage is not None:
            await send({**base, "choices": [], "usage": usage})
        handler.finish("data: [DONE]\n\n")
    except StreamClosedError:
        handler.server.stats._hang_up()
        try:  # counted out of the in-flight requests like any other
            handler.finish()
        except Exception:  # noqa: BLE001 - the connection is gone; nothing more to send
            pass
