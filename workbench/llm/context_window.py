"""The model's context window, from the server where it says it, and the up-front check that
a prompt fits with its answer budget.

llama.cpp reports the context of one slot (``/props`` → ``default_generation_settings.n_ctx``;
with 2 slots on 8k that is 4k per request), vLLM the model's ``max_model_len`` in
``/v1/models``. Elsewhere the workspace setting ``llm.context_window`` is used, and without
it nothing is refused up front (the server's own error then names the sizes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import openai

# Measured on llama.cpp's /tokenize with Qwen2.5's tokenizer: prompt templates, a SKILL.md
# and Python source ran 4.1-4.4 characters a token; 4.0 overestimates a little, on purpose.
CHARS_PER_TOKEN = 4.0
PER_MESSAGE_TOKENS = 8    # role markers of the chat template
PER_REQUEST_TOKENS = 32   # the template's own preamble (a default system line, the reply header)
_PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ContextWindow:
    tokens: int | None
    source: str
    slots: int | None = None


def server_root(base_url: str) -> str:
    """``http://host:port`` of ``http://host:port/v1`` (llama.cpp serves /props there)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def from_llama_props(props: object) -> ContextWindow | None:
    if not isinstance(props, dict):
        return None
    n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
    if isinstance(n_ctx, int) and n_ctx > 0:
        slots = props.get("total_slots")
        return ContextWindow(n_ctx, "llama.cpp /props n_ctx per slot", slots if isinstance(slots, int) else None)
    return None


def from_models_list(models: object, model: str) -> ContextWindow | None:
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    entries = [m for m in data if isinstance(m, dict)]
    chosen = [m for m in entries if m.get("id") == model] or (entries if len(entries) == 1 else [])
    length = chosen[0].get("max_model_len") if chosen else None
    if isinstance(length, int) and length > 0:
        return ContextWindow(length, "/v1/models max_model_len")
    return None


async def discover(client: openai.AsyncOpenAI, base_url: str, model: str, setting: int | None) -> ContextWindow:
    """Ask the server (one or two GETs); fall back to the workspace `setting`."""
    options = {"timeout": _PROBE_TIMEOUT_S}
    probes = ((server_root(base_url) + "/props", from_llama_props), ("/models", lambda d: from_models_list(d, model)))
    for path, read in probes:
        try:
            found = read(await client.get(path, cast_to=object, options=options))
        except (openai.APIError, ValueError):  # not this kind of server, or not reachable now
            continue
        if found is not None:
            return found
    return ContextWindow(setting, "workspace setting llm.context_window") if setting else ContextWindow(None, "unknown")


def estimate_prompt_tokens(messages: list[dict]) -> int:
    chars = sum(len(_text(m.get("content"))) for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + PER_MESSAGE_TOKENS * len(messages) + PER_REQUEST_TOKENS


def overflow(prompt_tokens: int, answer_budget: int, window: ContextWindow) -> str | None:
    """Why the prompt cannot fit with its answer, with the numbers; None when it can (or unknown)."""
    if window.tokens is None or prompt_tokens + answer_budget <= window.tokens:
        return None
    return (f"prompt ≈{prompt_tokens} tokens (estimated at {CHARS_PER_TOKEN:g} characters a token) + answer "
            f"budget {answer_budget} = {prompt_tokens + answer_budget} > context window {window.tokens} "
            f"({window.source}); not sent")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
