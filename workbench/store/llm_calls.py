"""Reading the LLM call log."""
from __future__ import annotations

import pandas as pd

from workbench.store.connection import Database


def calls_frame(db: Database, limit: int = 200_000) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            "SELECT created_at, batch_id, stage, item, provider, model, attempt, latency_ms, prompt_tokens, "
            "completion_tokens, cost_usd, cache_hit, error_class FROM llm_calls ORDER BY created_at DESC LIMIT ?",
            [limit]).df()
