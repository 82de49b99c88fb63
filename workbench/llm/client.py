"""One client for any OpenAI-compatible endpoint, on the `openai` package.

Per call: cache lookup → budget check → bounded concurrency → the prompt checked against
the server's context window with the stage's answer budget (`max_tokens`) → a streamed
request, cut on silence or runaway repetition, never on length (`stream`), with retries
(429 / 5xx / connection errors, exponential backoff with jitter, `Retry-After` honoured;
other 4xx fail at once) → structured output, asked of the server by its JSON schema where it
honours `response_format` (else JSON mode or the schema in the prompt: FORMATS, learnt per
endpoint), validated by pydantic with a bounded re-ask →
cost accounting → one call-log row per HTTP attempt (and one per cache hit), a cut or
refused call included, with what it produced.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from dataclasses import dataclass
from typing import Any

import openai
from pydantic import BaseModel, ValidationError

from workbench.llm.answer_budget import answer_budget
from workbench.llm.budget import Budget
from workbench.llm.cache import CachedResponse, ResponseCache, cache_key
from workbench.llm.call_log import CallLog, CallRecord
from workbench.llm.context_window import ContextWindow, discover, estimate_prompt_tokens, overflow
from workbench.llm.settings import LLMSettings
from workbench.llm.stream import (CANCELLED, IDLE_TIMEOUT, REPETITION, NotStreamed, Reply, post_streamed, post_whole,
                                  refuses_streaming, reply_from_completion)

# json.JSONDecodeError: a 200 whose body is not JSON (a proxy's error page, a cut-off reply).
# A timeout is retried only when the connection was never made (see _timed_out_on_length):
# asking again from scratch a server that was slow to answer only makes it slower.
_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
              openai.APIConnectionError, openai.APIResponseValidationError, json.JSONDecodeError)
# Failure reasons of a call that reached the server but gave no usable answer.
LENGTH = "length"                    # the answer budget (max_tokens) ran out
PROMPT_TOO_LONG = "prompt_too_long"  # refused here: the prompt and its budget exceed the window
CONTEXT_EXCEEDED = "context_exceeded"  # refused by the server for the same reason
# Structured output, best first: the server constrains the answer to the schema (OpenAI's
# structured outputs; llama.cpp and vLLM by a grammar), JSON mode with the schema in the
# prompt, the schema in the prompt alone. Each call is validated, with a bounded re-ask, in
# every mode. An endpoint steps down when it refuses a mode with a 400 (the row says which:
# UNSUPPORTED) or, for json_schema, answers a schema call with prose (it ignores it).
JSON_SCHEMA, JSON_OBJECT, NO_FORMAT = "json_schema", "json_object", "none"
FORMATS = (JSON_SCHEMA, JSON_OBJECT, NO_FORMAT)
UNSUPPORTED = {JSON_SCHEMA: "JsonSchemaUnsupported", JSON_OBJECT: "JsonModeUnsupported"}
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


# Errors of the endpoint, not of one request (down, overloaded past the retries, a wrong key
# or model): every later call would fail the same way, so a batch stops instead of failing
# each of its items (and resume finishes once the endpoint is back).
ENDPOINT_FAULTS = frozenset({"APIConnectionError", "APITimeoutError", "InternalServerError", "RateLimitError",
                             "AuthenticationError", "PermissionDeniedError", "NotFoundError",
                             "APIResponseValidationError", "JSONDecodeError", IDLE_TIMEOUT})


class LLMCallError(RuntimeError):
    def __init__(self, message: str, *, error_class: str, attempts: int, raw_text: str | None = None):
        super().__init__(message)
        self.error_class = error_class
        self.attempts = attempts
        self.raw_text = raw_text

    @property
    def endpoint_fault(self) -> bool:
        """The endpoint failed (see ENDPOINT_FAULTS), not this request."""
        return self.error_class in ENDPOINT_FAULTS


class StructuredOutputError(LLMCallError):
    """The model never produced JSON that fits the schema; `raw_text` keeps its last reply."""


@dataclass
class LLMResult:
    text: str
    parsed: BaseModel | None
    provider: str
    model: str
    cached: bool
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    attempts: int
    finish_reason: str | None = None  # "length": the answer budget cut it


def parse_structured(text: str, schema: type[BaseModel]) -> BaseModel:
    m = _FENCE.match(text)
    return schema.model_validate_json(m.group(1) if m else text)


def request_args(model: str, messages: list[dict], params: dict, schema: type[BaseModel] | None,
                 schema_json: dict | None, fmt: str) -> dict:
    """The request body of a call; a structured one asks for `fmt` (see FORMATS)."""
    kwargs = {"model": model, "messages": messages, **params}
    if schema is None:
        return kwargs
    if fmt == JSON_SCHEMA:  # the server holds the answer to the schema; the prompt need not show it
        kwargs["response_format"] = {"type": JSON_SCHEMA, "json_schema": {
            "name": schema.__name__, "schema": schema_json, "strict": False}}
        return kwargs
    if fmt == JSON_OBJECT:
        kwargs["response_format"] = {"type": JSON_OBJECT}
    shown = "Reply with one JSON object matching this JSON schema:\n" + json.dumps(schema_json)
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        # Joined to the system message: some chat templates refuse a second one.
        kwargs["messages"] = [{**messages[0], "content": messages[0]["content"] + "\n\n" + shown}] + messages[1:]
    else:
        kwargs["messages"] = [{"role": "system", "content": shown}] + messages
    return kwargs


def rejects_format(exc: openai.BadRequestError) -> bool:
    """A 400 about the structured-output mode asked for (OpenAI, DeepSeek, llama.cpp and vLLM
    name `response_format`, `json_schema` or the schema itself)."""
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text or "json schema" in text


def _is_prose(text: str) -> bool:
    """Not even the start of JSON (broken or cut JSON is a model's slip, not a server's)."""
    head = text.lstrip()[:1]
    return bool(head) and head not in "{[`"


def is_sampled(params: dict | None) -> bool:
    """Whether a call samples (temperature > 0): its answer is not reused from the cache."""
    return float((params or {}).get("temperature") or 0) > 0


def retry_after_seconds(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    if headers.get("retry-after-ms"):
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


class LLMClient:
    def __init__(self, settings: LLMSettings, *, cache: ResponseCache | None = None,
                 log: CallLog | None = None, budget: Budget | None = None, batch_id: str | None = None):
        if not settings.online:
            raise ValueError("no LLM endpoint configured (set WORKBENCH_LLM_BASE_URL or the Settings page)")
        self.settings = settings
        self.cache = cache
        self.log = log
        self.budget = budget or Budget(settings.budget_usd)
        self.batch_id = batch_id
        self._per_loop: dict[int, tuple[openai.AsyncOpenAI, asyncio.Semaphore, asyncio.Lock]] = {}
        # What this endpoint accepts, learnt on the first call that finds out: the structured
        # output it honours (see FORMATS) and whether it streams.
        self._format = FORMATS[0]
        self._stream_ok = True
        self._window: ContextWindow | None = None

    @property
    def provider(self) -> str:
        return self.settings.provider

    async def aclose(self) -> None:
        """Close this event loop's HTTP pool (call before the loop ends)."""
        state = self._per_loop.pop(id(asyncio.get_running_loop()), None)
        if state is not None:
            await state[0].close()

    def _loop_state(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore, asyncio.Lock]:
        # The HTTP pool and the semaphore belong to one event loop; batches may run in several.
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(id(loop))
        if state is None:
            key = self.settings.api_key.get_secret_value() if self.settings.api_key else "not-needed"
            state = (openai.AsyncOpenAI(base_url=self.settings.base_url, api_key=key, max_retries=0,
                                        timeout=self.settings.timeout_s),
                     asyncio.Semaphore(self.settings.concurrency), asyncio.Lock())
            self._per_loop[id(loop)] = state
        return state

    def _cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.settings.price(model)
        return (prompt_tokens * price.input_per_mtok + completion_tokens * price.output_per_mtok) / 1e6

    def _record(self, **kw: Any) -> None:
        if self.log is not None:
            self.log.add(CallRecord(provider=self.provider, batch_id=self.batch_id, **kw))

    async def complete(self, *, stage: str, item: str | None, messages: list[dict],
                       schema: type[BaseModel] | None = None, params: dict | None = None,
                       template_version: str = "") -> LLMResult:
        params = dict(params or {})
        model = self.settings.model
        schema_json = schema.model_json_schema() if schema else None
        key = cache_key(model=model, messages=messages, schema=schema_json, params=params,
                        template_version=template_version)
        t0 = time.perf_counter()
        # A sampled call (temperature > 0) is one draw of k: a cached answer would make every
        # draw the same, so it neither reads nor writes the cache.
        cache = None if is_sampled(params) else self.cache
        if cache is not None and (hit := cache.get(key)) is not None:
            parsed = parse_structured(hit.text, schema) if schema else None
            self._record(stage=stage, item=item, model=model, attempt=0, cache_hit=True,
                         latency_ms=(time.perf_counter() - t0) * 1000, template_version=template_version)
            return LLMResult(hit.text, parsed, self.provider, hit.model, True, 0, 0, 0.0, 0)
        self.budget.check()
        client, sem, probing = self._loop_state()
        if self._window is None:
            async with probing:  # one probe per endpoint, not one per call in flight
                if self._window is None:
                    self._window = await discover(client, self.settings.base_url, model, self.settings.context_window)
        async with sem:
            result = await self._complete_uncached(client, stage, item, list(messages), schema, schema_json,
                                                   params, template_version)
        if cache is not None and result.finish_reason != LENGTH:
            cache.put(key, stage, CachedResponse(result.text, result.prompt_tokens,
                                                 result.completion_tokens, result.model))
        return result

    async def _complete_uncached(self, client, stage, item, messages, schema, schema_json, params,
                                 template_version) -> LLMResult:
        attempts, transient, reasks = 0, 0, 0
        spent_prompt = spent_completion = 0
        spent_cost = 0.0
        params = {"max_tokens": answer_budget(stage, self.settings.answer_budgets), **params}
        row = dict(stage=stage, item=item, model=self.settings.model, template_version=template_version)
        while True:
            attempts += 1
            t0 = time.perf_counter()
            sent_format = self._format if schema is not None else NO_FORMAT
            kwargs = request_args(self.settings.model, messages, params, schema, schema_json, sent_format)
            estimate = estimate_prompt_tokens(kwargs["messages"])
            too_long = overflow(estimate, int(kwargs.get("max_tokens") or 0), self._window)
            if too_long:
                self._record(**row, attempt=attempts, latency_ms=0.0, prompt_tokens=estimate,
                             error_class=PROMPT_TOO_LONG)
                raise LLMCallError(f"{stage}/{item}: {too_long}", error_class=PROMPT_TOO_LONG, attempts=attempts)
            streamed = self._stream_ok
            try:
                reply = await self._send(client, kwargs, estimate, streamed)
            except asyncio.CancelledError as exc:
                # Stored before the cancellation goes on: a stopped batch still shows what it spent.
                partial = getattr(exc, "partial", None)
                self._record(**row, attempt=attempts, latency_ms=_ms(t0), error_class=CANCELLED,
                             prompt_tokens=partial.prompt_tokens if partial else estimate,
                             completion_tokens=partial.completion_tokens if partial else 0)
                raise
            except openai.BadRequestError as exc:
                if self._refused_format(exc, sent_format, row, attempts, t0):
                    continue
                if streamed and refuses_streaming(exc):  # (a call in flight may have found it out first)
                    self._stream_ok = False
                    self._record(**row, attempt=attempts, latency_ms=_ms(t0), error_class="StreamingUnsupported")
                    continue
                self._fail(stage, item, attempts, t0, exc, template_version,
                           CONTEXT_EXCEEDED if _context_exceeded(exc) else None)
            except _RETRYABLE as exc:
                if isinstance(exc, openai.InternalServerError) and self._refused_format(exc, sent_format, row,
                                                                                         attempts, t0):
                    continue  # older llama.cpp servers answer a schema they cannot convert with a 500
                self._record(**row, attempt=attempts, latency_ms=_ms(t0), error_class=type(exc).__name__)
                transient += 1
                if transient > self.settings.max_retries or _timed_out_on_length(exc):
                    raise LLMCallError(f"{stage}/{item}: gave up after {attempts} attempts: {exc}",
                                       error_class=type(exc).__name__, attempts=attempts) from exc
                await asyncio.sleep(self._backoff(transient, retry_after_seconds(exc)))
                continue
            except (KeyError, IndexError, TypeError) as exc:
                # JSON, but not a chat completion: a misconfigured endpoint, not worth retrying.
                self._fail(stage, item, attempts, t0, ValueError(f"not a chat completion: {exc!r}"),
                           template_version)
            except openai.APIError as exc:
                self._fail(stage, item, attempts, t0, exc, template_version)
            text, pt, ct = reply.text, reply.prompt_tokens, reply.completion_tokens
            cost = self._cost(self.settings.model, pt, ct)
            self.budget.add(stage, item, pt, ct, cost)
            spent_prompt, spent_completion, spent_cost = spent_prompt + pt, spent_completion + ct, spent_cost + cost
            usage = dict(attempt=attempts, latency_ms=_ms(t0), prompt_tokens=pt, completion_tokens=ct, cost_usd=cost)
            if reply.cut:
                # Stopped mid-answer: stored with what it produced; asking again gets the same.
                self._record(**row, **usage, error_class=reply.cut)
                raise LLMCallError(f"{stage}/{item}: {_cut_reason(reply, self.settings)}", error_class=reply.cut,
                                   attempts=attempts, raw_text=text)
            parsed, problem = None, None
            if schema is not None:
                try:
                    parsed = parse_structured(text, schema)
                except (ValidationError, ValueError) as exc:
                    problem = _short_error(exc)
            cut_by_budget = reply.finish_reason == LENGTH
            if problem and sent_format == JSON_SCHEMA and _is_prose(text):
                # Prose under a schema: the server ignores `response_format` (a grammar or a
                # JSON mode never starts one). From now on the schema goes in the prompt.
                self._step_down(JSON_SCHEMA)
            self._record(**row, **usage, error_class=(LENGTH if cut_by_budget and (problem or schema is None)
                                                      else "InvalidStructuredOutput" if problem else None))
            if problem is None:
                return LLMResult(text, parsed, self.provider, reply.model or self.settings.model, False, spent_prompt,
                                 spent_completion, spent_cost, attempts, reply.finish_reason)
            if cut_by_budget:  # a re-ask would be cut at the same budget
                raise StructuredOutputError(
                    f"{stage}/{item}: the answer reached its budget of {kwargs.get('max_tokens')} tokens before "
                    f"its JSON was complete ({problem})", error_class=LENGTH, attempts=attempts, raw_text=text)
            if reasks >= self.settings.reask_limit:
                raise StructuredOutputError(
                    f"{stage}/{item}: no valid JSON for {schema.__name__} after {reasks + 1} replies: {problem}",
                    error_class="InvalidStructuredOutput", attempts=attempts, raw_text=text)
            reasks += 1
            self.budget.check()
            messages = messages + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"That reply could not be used: {problem}. Reply again with only "
                                            f"a JSON object that matches the {schema.__name__} schema."}]

    async def _send(self, client: openai.AsyncOpenAI, body: dict, estimate: int, streamed: bool) -> Reply:
        if not streamed:
            return await post_whole(client, body, estimate)
        try:
            return await post_streamed(client, body, prompt_estimate=estimate, idle_s=self.settings.idle_timeout_s,
                                       first_token_s=self.settings.first_token_timeout_s,
                                       connect_s=self.settings.timeout_s)
        except NotStreamed as whole:  # the server ignores `stream`: ask it whole from now on
            self._stream_ok = False
            return reply_from_completion(whole.body, estimate)

    def _refused_format(self, exc: openai.APIStatusError, sent_format: str, row: dict, attempts: int,
                        t0: float) -> bool:
        """Whether the server refused the structured-output mode asked for; if so the endpoint
        steps down (see FORMATS) and the attempt is stored, to be asked again."""
        if sent_format == NO_FORMAT or not rejects_format(exc):
            return False
        self._step_down(sent_format)
        self._record(**row, attempt=attempts, latency_ms=_ms(t0), error_class=UNSUPPORTED[sent_format])
        return True

    def _step_down(self, failed: str) -> None:
        """The endpoint will not do `failed`: use the next format (calls in flight that sent
        the same one step down once, not once each)."""
        if self._format == failed:
            self._format = FORMATS[FORMATS.index(failed) + 1]

    def _backoff(self, n: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.settings.backoff_max_s)
        base = min(self.settings.backoff_max_s, self.settings.backoff_base_s * 2 ** (n - 1))
        return base * (0.5 + random.random() / 2)  # jitter: spread retries of a burst

    def _fail(self, stage, item, attempts, t0, exc, template_version, error_class: str | None = None):
        error_class = error_class or type(exc).__name__
        self._record(stage=stage, item=item, model=self.settings.model, attempt=attempts, latency_ms=_ms(t0),
                     error_class=error_class, template_version=template_version)
        raise LLMCallError(f"{stage}/{item}: {type(exc).__name__}: {exc}", error_class=error_class,
                           attempts=attempts) from exc


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _timed_out_on_length(exc: Exception) -> bool:
    """A timeout after the request went out: the server was working on it (see _RETRYABLE)."""
    return isinstance(exc, openai.APITimeoutError) and type(exc.__cause__).__name__ != "ConnectTimeout"


def _context_exceeded(exc: openai.BadRequestError) -> bool:
    """The server's own refusal of a prompt too long (llama.cpp, vLLM and OpenAI word it apart)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    text = f"{exc} {body.get('type')} {body.get('code')}".lower()
    return ("context_length_exceeded" in text or "exceed_context_size" in text or "maximum context length" in text
            or "exceeds the available context size" in text)


def _cut_reason(reply: Reply, settings: LLMSettings) -> str:
    if reply.cut == REPETITION:
        return f"stopped a runaway repetition after {reply.completion_tokens} tokens"
    if reply.completion_tokens:
        return f"no token for {settings.idle_timeout_s:g} s after {reply.completion_tokens} tokens; cut"
    return f"no first token within {settings.first_token_timeout_s:g} s; cut"


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errs = exc.errors()
        first = errs[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
        return f"{len(errs)} problem(s), first at {where}: {first.get('msg')}"
    return str(exc).splitlines()[0][:200]
