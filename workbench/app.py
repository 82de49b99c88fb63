"""The Streamlit dashboard: `workbench app` serves this file."""
import hmac
import os
from pathlib import Path

import streamlit as st

from pages import preload
from pages.shared import workspace
from workbench.app_server import ENV_TOKEN
from workbench.demo_status import read_status

PAGES = Path(__file__).resolve().parent.parent / "pages"


def _let_in() -> bool:
    """The access gate of a bind the network can reach: the token from `?token=` (first visit)
    or typed in, once per browser session; no token configured, no gate."""
    expected = os.environ.get(ENV_TOKEN)
    if not expected or st.session_state.get("_auth_ok"):
        return True
    given = st.query_params.get("token")
    if given is not None:
        del st.query_params["token"]   # out of the address bar and the browser's history
    typed = False
    if given is None:
        st.title("SkillGraph Workbench")
        with st.form("access"):
            given = st.text_input("Access token (printed by `workbench app` at start)", type="password",
                                  key="_auth_token")
            typed = st.form_submit_button("Enter")
        if not typed:
            return False
    if hmac.compare_digest(given.encode(), expected.encode()):
        st.session_state["_auth_ok"] = True
        if typed:
            st.rerun()   # draw the app without the form
        return True
    st.error("Wrong access token: use the one `workbench app` printed when it started.")
    return False


st.set_page_config(page_title="SkillGraph Workbench", layout="wide")
preload.start()  # once per process: the pages' imports, in the background
if not _let_in():
    st.stop()
nav = st.navigation({
    "Workspace": [st.Page(str(PAGES / "overview.py"), title="Overview", default=True)],
    "Curate": [st.Page(str(PAGES / "skills.py"), title="Skills", url_path="skills")],
    "Graph": [st.Page(str(PAGES / "scenarios.py"), title="Scenarios", url_path="scenarios"),
              st.Page(str(PAGES / "graph.py"), title="Graph", url_path="graph"),
              st.Page(str(PAGES / "path_coverage.py"), title="Coverage", url_path="coverage")],
    "Synthesis": [st.Page(str(PAGES / "synthesis.py"), title="Synthesis", url_path="synthesis"),
                  st.Page(str(PAGES / "tasks.py"), title="Tasks", url_path="tasks")],
    "Rollouts": [st.Page(str(PAGES / "rollouts.py"), title="Rollouts", url_path="rollouts"),
                 st.Page(str(PAGES / "failures.py"), title="Failures", url_path="failures"),
                 st.Page(str(PAGES / "difficulty.py"), title="Difficulty", url_path="difficulty"),
                 st.Page(str(PAGES / "evolution.py"), title="Evolution", url_path="evolution")],
    "LLM": [st.Page(str(PAGES / "llm_costs.py"), title="LLM & cost", url_path="llm"),
            st.Page(str(PAGES / "settings.py"), title="Settings", url_path="settings")],
})
build = read_status(workspace().root)
if build is not None and build.running and nav.title != "Overview":
    now = build.current
    st.info(f"The demo workspace is being built{f' (now: {now.title.lower()})' if now else ''}: this page "
            "shows what is there so far. The Overview shows the progress.")
nav.run()
