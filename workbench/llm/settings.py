"""LLM settings: workspace config, overridden by environment variables.

The endpoint is configured by `WORKBENCH_LLM_BASE_URL` (or the workspace config); without
one the workbench runs on its offline provider. The API key comes from `OPENAI_API_KEY`
or from the workspace config, where it is stored encrypted (see `secrets.py`), never in
plain text, and it is never printed or logged.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr

from workbench.llm import secrets

CONFIG_FILE = "config.json"


class Price(BaseModel):
    """US dollars per million tokens."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0


# Public list prices at the time of writing; override per workspace in config.json "prices".
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.60),
    "gpt-4o": Price(input_per_mtok=2.50, output_per_mtok=10.00),
    "gpt-4.1-mini": Price(input_per_mtok=0.40, output_per_mtok=1.60),
    "gpt-4.1": Price(input_per_mtok=2.00, output_per_mtok=8.00),
    "deepseek-chat": Price(input_per_mtok=0.27, output_per_mtok=1.10),
}


class LLMSettings(BaseModel):
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=20)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    reask_limit: int = Field(default=2, ge=0, le=5)
    budget_usd: float | None = Field(default=None, ge=0)
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    @property
    def online(self) -> bool:
        return bool(self.base_url)

    @property
    def provider(self) -> str:
        return "openai-compatible" if self.online else "offline"

    def price(self, model: str) -> Price:
        return self.prices.get(model, Price())

    def public_dict(self) -> dict:
        """What may be shown: everything but the key, which is reported as set or not."""
        d = self.model_dump(exclude={"api_key", "prices"})
        d["api_key_set"] = self.api_key is not None and bool(self.api_key.get_secret_value())
        return d


_ENV = {
    "WORKBENCH_LLM_BASE_URL": "base_url", "WORKBENCH_LLM_MODEL": "model",
    "WORKBENCH_LLM_CONCURRENCY": "concurrency", "WORKBENCH_LLM_TIMEOUT_S": "timeout_s",
    "WORKBENCH_LLM_MAX_RETRIES": "max_retries", "WORKBENCH_LLM_BUDGET_USD": "budget_usd",
}


def _config_path(workspace_root: Path) -> Path:
    return Path(workspace_root) / CONFIG_FILE


def read_config(workspace_root: Path) -> dict:
    path = _config_path(workspace_root)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None


def load_settings(workspace_root: Path | None, env: dict[str, str] | None = None) -> LLMSettings:
    env = os.environ if env is None else env
    cfg = dict(read_config(workspace_root).get("llm", {})) if workspace_root else {}
    enc = cfg.pop("api_key_encrypted", None)
    if enc:
        cfg["api_key"] = secrets.decrypt(enc)
    for var, field in _ENV.items():
        if env.get(var):
            cfg[field] = env[var]
    if env.get("OPENAI_API_KEY"):
        cfg["api_key"] = env["OPENAI_API_KEY"]
    if "prices" in cfg:
        cfg["prices"] = {**DEFAULT_PRICES, **{m: Price(**p) for m, p in cfg["prices"].items()}}
    return LLMSettings(**cfg)


def save_settings(workspace_root: Path, *, base_url: str | None, model: str, concurrency: int,
                  budget_usd: float | None, api_key: str | None = None, clear_key: bool = False) -> None:
    """Write the workspace's LLM settings; the key, when given, is stored encrypted."""
    config = read_config(workspace_root)
    llm = dict(config.get("llm", {}))
    llm.update(base_url=base_url or None, model=model, concurrency=int(concurrency), budget_usd=budget_usd)
    if clear_key:
        llm.pop("api_key_encrypted", None)
    elif api_key:
        llm["api_key_encrypted"] = secrets.encrypt(api_key)
    config["llm"] = llm
    path = _config_path(workspace_root)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(config, indent=2))
    os.chmod(tmp, 0o600)
    tmp.replace(path)
