"""Where the workspace lives and what is configured in it."""
from __future__ import annotations

import os
from pathlib import Path

ENV_HOME = "WORKBENCH_HOME"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORKSPACE = REPO_ROOT / "data" / "workspace"
DEMO_CORPUS = REPO_ROOT / "data" / "skills"


def resolve_workspace_dir(explicit: str | os.PathLike | None = None) -> Path:
    """`--workspace` wins over `WORKBENCH_HOME`, which wins over the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser().resolve()
    return DEFAULT_WORKSPACE


def default_author() -> str:
    """Who a curation event is attributed to when the user gives no name."""
    return os.environ.get("WORKBENCH_AUTHOR") or os.environ.get("USER") or "anonymous"


SANDBOX_NETWORK_KEY = ("sandbox", "allow_network")


def workspace_allows_network(workspace_root: str | os.PathLike) -> bool:
    """The workspace's own opt-in to network access for tasks that ask for it: config.json
    `{"sandbox": {"allow_network": true}}`. A bundle's task.toml alone never opens the network;
    anything but a literal true/false is an error that names the key."""
    from workbench.llm.settings import CONFIG_FILE, read_config
    section, key = SANDBOX_NETWORK_KEY
    value = (read_config(Path(workspace_root)).get(section) or {}).get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{Path(workspace_root) / CONFIG_FILE}: {section}.{key} must be true or false, not {value!r}")
    return value
