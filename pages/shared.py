"""What every page needs: the workspace the app was started on."""
from __future__ import annotations

import streamlit as st

from workbench.workspace import Workspace


@st.cache_resource
def _open(root: str | None) -> Workspace:
    return Workspace.open(root)


def workspace() -> Workspace:
    # WORKBENCH_HOME is read per run so tests and `workbench app` can point anywhere.
    import os
    return _open(os.environ.get("WORKBENCH_HOME"))


def provider_note() -> str:
    from workbench.llm.settings import load_settings
    try:
        settings = load_settings(workspace().root)
    except ValueError as exc:
        return f"Provider: offline (LLM settings unreadable: {exc})"
    if settings.online:
        return f"Provider: {settings.provider} · model {settings.model} at {settings.base_url}"
    return "Provider: offline (deterministic heuristics; no LLM endpoint configured)"
