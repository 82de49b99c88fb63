"""Calls to a replay server through the real ``openai`` client, shared by its tests."""
from __future__ import annotations

import openai

from workbench.llm.replay_server import ReplayServer


def client_for(srv: ReplayServer, **kw) -> openai.OpenAI:
    kw.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=srv.base_url, api_key="test", **kw)


def ask(client: openai.OpenAI, text: str, *, model: str = "replay-model", system: str | None = None, **kw):
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]
    return client.chat.completions.create(model=model, messages=messages, **kw)


def content(completion) -> str:
    return completion.choices[0].message.content


def workspace_call(ws, text: str) -> None:
    """One chat call through a workspace's own client (its settings, the real openai client)."""
    import asyncio

    from workbench.llm.runtime import open_client

    async def go():
        client = open_client(ws)
        try:
            await client.complete(stage="test", item=None, messages=[{"role": "user", "content": text}])
        finally:
            await client.aclose()
    asyncio.run(go())
