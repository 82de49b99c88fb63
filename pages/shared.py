"""What the pages share: the workspace the app was started on, the provider note and
the scenario graph that the Scenarios and Graph pages need."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pages import cached
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


def scenario_graph_or_stop(ws: Workspace) -> tuple[dict, pd.DataFrame]:
    """The last graph build and its clusters; without them the page shows how to build the
    graph and stops."""
    build = cached.last_build(ws)
    clusters = cached.clusters_table(ws)
    if build is None or clusters.empty:
        st.info("No scenario graph yet. Run `workbench scenarios infer` and then `workbench graph build`.")
        st.stop()
    return build, clusters


def open_clicked_row(picked, view: pd.DataFrame, id_column: str, detail_key: str) -> None:
    """A click on a dataframe row opens it in the detail view, once; the detail picker stays
    free to change afterwards."""
    rows = picked.selection.rows if picked else []
    if rows and rows[0] < len(view):
        clicked = view.iloc[rows[0]][id_column]
        last_key = f"_last_click_{detail_key}"
        if st.session_state.get(last_key) != clicked:
            st.session_state[last_key] = clicked
            st.session_state[detail_key] = clicked


def keep_picked(key: str, labels: dict) -> None:
    """Call before a keyed ``st.selectbox`` whose labels carry state (a status, a verdict).

    The browser keeps a selectbox's value as the label it shows: once a save or another
    process changed the picked option's label, the picker went on showing the old one. When
    the label differs from the last run's, the value is set anew, which sends the new label."""
    last = st.session_state.get(f"_labels_{key}", {})
    value = st.session_state.get(key)
    if value in labels and value in last and last[value] != labels[value]:
        st.session_state[key] = value
    st.session_state[f"_labels_{key}"] = dict(labels)
