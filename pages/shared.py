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
    return "Provider: offline (deterministic rules; no LLM configured)"
