"""A replay server per test, and settings that point the real client at it."""
from __future__ import annotations

import pytest

from workbench.llm.replay_server import ReplayServer
from workbench.llm.settings import LLMSettings, Price


@pytest.fixture
def server():
    srv = ReplayServer().start()
    yield srv
    srv.stop()


def make_settings(srv, **kw) -> LLMSettings:
    base = dict(base_url=srv.base_url, model="test-model", api_key="sk-test", concurrency=4,
                backoff_base_s=0.01, backoff_max_s=2.0, max_retries=3, reask_limit=2, timeout_s=10,
                prices={"test-model": Price(input_per_mtok=1000.0, output_per_mtok=2000.0)})
    base.update(kw)
    return LLMSettings(**base)
