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
