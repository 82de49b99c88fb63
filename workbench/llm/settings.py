"""LLM settings: workspace config, overridden by environment variables.

The endpoint is configured by `WORKBENCH_LLM_BASE_URL` (or the workspace config); without
one the workbench runs on its offline provider. The API key comes from `OPENAI_API_KEY`
or from the workspace config, where it is stored encrypted (see `secrets.py`), never in
plain text, and it is never printed or logged.

A stored key is bound to the endpoint (scheme, host and port) it was entered for: with any
other endpoint in effect it is withheld, so changing the endpoint cannot send it to a new
host. It goes to a new endpoint only when entered again, or on a confirmation that names
that endpoint (`save_settings(send_key_to=...)`). A key from `OPENAI_API_KEY` is the
environment's own choice and goes with the endpoint in effect.
"""
from __future__ import annotations

import json
import os
import urllib.parse
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
    # A whole non-streamed request (the fallback for servers that refuse to stream).
    timeout_s: float = Field(default=60.0, gt=0)
    # A streamed call is cut on silence, never on length: no token for idle_timeout_s (the
    # first token may take first_token_timeout_s: the server's queue and prompt processing).
    idle_timeout_s: float = Field(default=120.0, gt=0)
    first_token_timeout_s: float = Field(default=600.0, gt=0)
    # The model's context window when the server does not say it (llama.cpp /props, vLLM /v1/models).
    context_window: int | None = Field(default=None, ge=256)
    # max_tokens per stage, over workbench.llm.answer_budget.STAGE_BUDGETS.
    answer_budgets: dict[str, int] = Field(default_factory=dict)
    max_retries: int = Field(default=5, ge=0, le=20)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    reask_limit: int = Field(default=2, ge=0, le=5)
    budget_usd: float | None = Field(default=None, ge=0)
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    # The endpoint the stored key is bound to (None: no key stored in the workspace).
    stored_key_endpoint: str | None = None

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
        d["stored_key_withheld"] = self.stored_key_withheld
        return d

    @property
    def stored_key_withheld(self) -> bool:
        """A key is stored, but for another endpoint than the one in effect: it is not sent."""
        return self.stored_key_endpoint is not None and self.stored_key_endpoint != endpoint_origin(self.base_url)


def endpoint_origin(url: str | None) -> str | None:
    """What a key is bound to: scheme://host:port, lower case, the default port spelt out."""
    if not url or not url.strip():
        return None
    parts = urllib.parse.urlsplit(url.strip())
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:  # not a valid port: compared as written, so it matches only itself
        return url.strip()
    if not parts.hostname:
        return url.strip()
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}:{port}"


class KeyConfirmationError(ValueError):
    """A confirmation to send the stored key names another endpoint than the one being saved."""


_ENV = {
    "WORKBENCH_LLM_BASE_URL": "base_url", "WORKBENCH_LLM_MODEL": "model",
    "WORKBENCH_LLM_CONCURRENCY": "concurrency", "WORKBENCH_LLM_TIMEOUT_S": "timeout_s",
    "WORKBENCH_LLM_MAX_RETRIES": "max_retries", "WORKBENCH_LLM_BUDGET_USD": "budget_usd",
    "WORKBENCH_LLM_IDLE_TIMEOUT_S": "idle_timeout_s", "WORKBENCH_LLM_FIRST_TOKEN_TIMEOUT_S": "first_token_timeout_s",
    "WORKBENCH_LLM_CONTEXT_WINDOW": "context_window",
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
    cfg.pop("stored_key_endpoint", None)  # only ever read from inside the sealed token
    enc = cfg.pop("api_key_encrypted", None)
    stored = _stored_key(enc, cfg.get("base_url")) if enc else None
    for var, field in _ENV.items():
        if env.get(var):
            cfg[field] = env[var]
    if stored:
        cfg["stored_key_endpoint"] = stored[1]
        if stored[1] == endpoint_origin(cfg.get("base_url")):
            cfg["api_key"] = stored[0]
    if env.get("OPENAI_API_KEY"):
        cfg["api_key"] = env["OPENAI_API_KEY"]
    if "prices" in cfg:
        cfg["prices"] = {**DEFAULT_PRICES, **{m: Price(**p) for m, p in cfg["prices"].items()}}
    return LLMSettings(**cfg)


def _stored_key(token: str, saved_base_url: str | None) -> tuple[str, str]:
    """(key, endpoint it is bound to); a key stored before binding belongs to the saved endpoint."""
    key, endpoint, bound = secrets.unseal(token)
    return key, (endpoint if bound else endpoint_origin(saved_base_url)) or ""


def save_settings(workspace_root: Path, *, base_url: str | None, model: str, concurrency: int,
                  budget_usd: float | None, api_key: str | None = None, clear_key: bool = False,
                  send_key_to: str | None = None) -> None:
    """Write the workspace's LLM settings; the key, when given, is stored encrypted and bound
    to `base_url`. Without a new key, the stored one stays bound to its endpoint, unless
    `send_key_to` names the endpoint being saved (the user's confirmation)."""
    config = read_config(workspace_root)
    llm = dict(config.get("llm", {}))
    target = endpoint_origin(base_url)
    if send_key_to is not None and endpoint_origin(send_key_to) != target:
        raise KeyConfirmationError(
            f"the confirmation names {endpoint_origin(send_key_to)}, but the endpoint being saved is "
            f"{target or 'none (offline)'}; the stored key was not re-bound")
    token = llm.get("api_key_encrypted")
    if clear_key:
        llm.pop("api_key_encrypted", None)
    elif api_key:
        llm["api_key_encrypted"] = secrets.seal(api_key, target)
    elif token:
        key, bound_to = _stored_key(token, llm.get("base_url"))
        # Re-sealed either way, so a key stored before binding gets its binding written down.
        llm["api_key_encrypted"] = secrets.seal(key, target if send_key_to is not None else bound_to)
    llm.update(base_url=base_url or None, model=model, concurrency=int(concurrency), budget_usd=budget_usd)
    config["llm"] = llm
    path = _config_path(workspace_root)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(config, indent=2))
    os.chmod(tmp, 0o600)
    tmp.replace(path)
