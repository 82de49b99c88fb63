"""Settings: the LLM endpoint, model, concurrency, budget and API key of this workspace."""
import streamlit as st

from pages.shared import provider_note, workspace
from workbench.llm.settings import KeyConfirmationError, endpoint_origin, load_settings, save_settings

ws = workspace()
st.title("Settings")
st.caption(provider_note())
current = load_settings(ws.root)
pub = current.public_dict()
here = endpoint_origin(current.base_url)
st.markdown("Without an endpoint the workbench runs on its **offline provider** (deterministic heuristics). "
            "Environment variables (`WORKBENCH_LLM_BASE_URL`, `WORKBENCH_LLM_MODEL`, `OPENAI_API_KEY`) "
            "override what is saved here.")
if current.stored_key_withheld:
    st.warning(f"The stored API key was entered for {current.stored_key_endpoint or 'no endpoint'} and is "
               f"**not sent** to {here or 'any endpoint'}. Enter the key again, or confirm below that it "
               "may go to this endpoint.")
with st.form("llm_settings", clear_on_submit=True):
    base_url = st.text_input("Endpoint (OpenAI-compatible base URL)", value=pub["base_url"] or "",
                             placeholder="http://localhost:8000/v1")
    model = st.text_input("Model", value=pub["model"])
    concurrency = st.number_input("Concurrent requests", min_value=1, max_value=256, value=int(pub["concurrency"]))
    budget = st.number_input("Budget cap per batch (USD, 0 = none)", min_value=0.0,
                             value=float(pub["budget_usd"] or 0.0), step=1.0)
    if current.stored_key_endpoint is None:
        key_note = "no key stored"
    else:
        key_note = (f"a key is stored (encrypted) for {current.stored_key_endpoint or 'no endpoint'}; "
                    "leave empty to keep it")
    # A fresh widget after every save, so what was typed is never held or shown again.
    nonce = st.session_state.setdefault("api_key_nonce", 0)
    api_key = st.text_input(f"API key — {key_note}", value="", type="password", key=f"api_key_{nonce}")
    # The confirmation names the host the key would go to; it only counts for that host.
    confirm = (st.checkbox(f"Send the stored key to {here}", value=False, key=f"send_key_{nonce}")
               if current.stored_key_withheld and here else False)
    clear = st.checkbox("Remove the stored key", value=False)
    if st.form_submit_button("Save"):
        try:
            save_settings(ws.root, base_url=base_url.strip() or None, model=model.strip() or "gpt-4o-mini",
                          concurrency=int(concurrency), budget_usd=float(budget) or None,
                          api_key=api_key or None, clear_key=clear, send_key_to=here if confirm else None)
        except KeyConfirmationError as exc:
            st.session_state["settings_error"] = f"Not saved: {exc}."
        else:
            st.session_state["settings_saved"] = True
        st.session_state["api_key_nonce"] = nonce + 1
        st.rerun()
if st.session_state.pop("settings_saved", False):
    st.success("Saved.")
if error := st.session_state.pop("settings_error", None):
    st.error(error)
st.subheader("In effect")
st.json(pub)
