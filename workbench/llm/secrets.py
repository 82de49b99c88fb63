"""Encrypt the API key at rest. The key that encrypts it lives outside every workspace.

A workspace may be copied or shared; its config must not carry a usable API key. The
Fernet key is kept in `~/.config/skillgraph-workbench/secret.key` (mode 0600), or where
`WORKBENCH_SECRET_KEY_FILE` points.

A stored API key is sealed together with the endpoint it was entered for (`seal`), inside
the same authenticated token, so editing the workspace's config cannot re-point it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken


def _key_file() -> Path:
    explicit = os.environ.get("WORKBENCH_SECRET_KEY_FILE")
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "skillgraph-workbench" / "secret.key"


def _fernet() -> Fernet:
    path = _key_file()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
    return Fernet(path.read_bytes().strip())


def encrypt(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError("the stored API key cannot be decrypted on this machine; set it again "
                         "in Settings or with OPENAI_API_KEY") from None


def seal(api_key: str, endpoint: str | None) -> str:
    """The key and the endpoint it may be sent to, encrypted as one token."""
    return encrypt(json.dumps({"api_key": api_key, "endpoint": endpoint}))


def unseal(token: str) -> tuple[str, str | None, bool]:
    """(key, endpoint it is bound to, whether the token carried a binding at all).

    Tokens written before keys were bound hold the bare key."""
    plain = decrypt(token)
    try:
        data = json.loads(plain)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("api_key"), str):
        return data["api_key"], data.get("endpoint"), True
    return plain, None, False
