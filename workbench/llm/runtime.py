"""Wiring the LLM client to a workspace: its settings, cache and call log."""
from __future__ import annotations

import uuid

from workbench.llm.budget import Budget
from workbench.llm.cache import ResponseCache
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMClient
from workbench.llm.settings import LLMSettings, load_settings
from workbench.workspace import Workspace


def workspace_settings(ws: Workspace) -> LLMSettings:
    return load_settings(ws.root)


def open_client(ws: Workspace, settings: LLMSettings | None = None, *, budget_usd: float | None = None,
                batch_id: str | None = None) -> LLMClient:
    settings = settings or workspace_settings(ws)
    cap = budget_usd if budget_usd is not None else settings.budget_usd
    return LLMClient(settings, cache=ResponseCache(ws.cache_dir / "llm_responses.sqlite"),
                     log=CallLog(ws.db), budget=Budget(cap), batch_id=batch_id or uuid.uuid4().hex[:12])
