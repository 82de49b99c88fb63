"""Blocking LLM calls for a batch's worker threads, on one shared event loop (synthesis, the
judges and the terminus-2 agent use it).

The client is async (one HTTP pool and one semaphore per event loop); the batch's threads
do Docker work that blocks. One loop in a background thread serves every thread's calls,
so the pool and the concurrency bound are shared, and a thread waiting on the LLM holds
no loop of its own.
"""
from __future__ import annotations

import asyncio
import threading
import time
from typing import TypeVar

from pydantic import BaseModel

from workbench.llm.client import LLMClient, LLMResult
from workbench.llm.prompts import PromptTemplate, load_template

M = TypeVar("M", bound=BaseModel)


class LLMCaller:
    def __init__(self, client: LLMClient):
        self.client = client
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="llm-loop", daemon=True)
        self._thread.start()
        self._templates: dict[str, PromptTemplate] = {}
        self._lock = threading.Lock()

    def template(self, stage: str) -> PromptTemplate:
        with self._lock:
            if stage not in self._templates:
                self._templates[stage] = load_template(stage)
            return self._templates[stage]

    def ask(self, stage: str, item: str | None, messages: list[dict], schema: type[M] | None,
            *, template_version: str = "", timer: dict | None = None,
            params: dict | None = None) -> LLMResult:
        """One call, blocking this thread only. `timer["llm_s"]` grows by the time waited.
        `params`: request parameters (default temperature 0; a sampled call, temperature > 0,
        bypasses the response cache). Raises LLMCallError / StructuredOutputError /
        BudgetExceeded as the client does."""
        t0 = time.monotonic()
        fut = asyncio.run_coroutine_threadsafe(
            self.client.complete(stage=stage, item=item, messages=messages, schema=schema,
                                 params=params or {"temperature": 0}, template_version=template_version), self._loop)
        try:
            return fut.result()
        finally:
            if timer is not None:
                timer["llm_s"] = timer.get("llm_s", 0.0) + time.monotonic() - t0

    def render_and_ask(self, stage: str, item: str | None, schema: type[M] | None, *,
                       timer: dict | None = None, extra: list[dict] | None = None, **values: str) -> LLMResult:
        """Render `workbench/prompts/<stage>.md` with `values` and ask (`extra`: follow-up turns)."""
        tpl = self.template(stage)
        return self.ask(stage, item, tpl.render(**values) + list(extra or []), schema,
                        template_version=tpl.version, timer=timer)

    def close(self) -> None:
        """Close the loop's HTTP pool, write the call log, stop the loop thread."""
        try:
            asyncio.run_coroutine_threadsafe(self.client.aclose(), self._loop).result(10)
        except Exception:
            pass
        if self.client.log is not None:
            self.client.log.flush()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
