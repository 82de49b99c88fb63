"""Settings: the LLM endpoint, model, concurrency, budget and API key of this workspace."""
import streamlit as st

from pages.shared import provider_note, workspace
from workbench.llm.settings import load_settings, save_settings

ws = workspace()
st.title("Settings")
st.caption(provider_note())
current = load_settings(ws.root)
pub = current.public_dict()
st.markdown("Without an endpoint the workbench runs on its **offline provider** (deterministic heuristics). "
            "Environment variables (`WORKBENCH_LLM_BASE_URL`, `WORKBENCH_LLM_MODEL`, `OPENAI_API_KEY`) "
            "override what is saved here.")
with st.form("llm_settings", clear_on_submit=True):
    base_url = st.text_input("Endpoint (OpenAI-compatible base URL)", value=pub["base_url"] or "",
                             placeholder="http://localhost:8000/v1")
    model = st.text_input("Model", value=pub["model"])
    concurrency = st.number_input("Concurrent requests", min_value=1, max_value=256, value=int(pub["concurrency"]))
    budget = st.number_input("Budget cap per batch (USD, 0 = none)", min_value=0.0,
                             value=float(pub["budget_usd"] or 0.0), step=1.0)
    key_note = "a key is stored (encrypted); leave empty to keep it" if pub["api_key_set"] else "no key stored"
    # A fresh widget after every save, so what was typed is never held or shown again.
    nonce = st.session_state.setdefault("api_key_nonce", 0)
    api_key = st.text_input(f"API key — {key_note}", value="", type="password", key=f"api_key_{nonce}")
    clear = st.checkbox("Remove the stored key", value=False)
    if st.form_submit_button("Save"):
        save_settings(ws.root, base_url=base_url.strip() or None, model=model.strip() or "gpt-4o-mini",
                      concurrency=int(concurrency), budget_usd=float(budget) or None,
                      api_key=api_key or None, clear_key=clear)
        st.session_state["settings_saved"] = True
        st.session_state["api_key_nonce"] = nonce + 1
        st.rerun()
if st.session_state.pop("settings_saved", False):
    st.success("Saved.")
st.subheader("In effect")
st.json(pub)
