"""The Streamlit dashboard: `workbench app` serves this file."""
from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent.parent / "pages"

st.set_page_config(page_title="SkillGraph Workbench", layout="wide")
nav = st.navigation({
    "Workspace": [st.Page(str(PAGES / "overview.py"), title="Overview", default=True)],
    "Curate": [st.Page(str(PAGES / "skills.py"), title="Skills", url_path="skills")],
    "Graph": [st.Page(str(PAGES / "scenarios.py"), title="Scenarios", url_path="scenarios"),
              st.Page(str(PAGES / "graph.py"), title="Graph", url_path="graph"),
              st.Page(str(PAGES / "coverage.py"), title="Coverage", url_path="coverage")],
    "Synthesis": [st.Page(str(PAGES / "synthesis.py"), title="Synthesis", url_path="synthesis"),
                  st.Page(str(PAGES / "tasks.py"), title="Tasks", url_path="tasks")],
    "LLM": [st.Page(str(PAGES / "llm_costs.py"), title="LLM & cost", url_path="llm"),
            st.Page(str(PAGES / "settings.py"), title="Settings", url_path="settings")],
})
nav.run()
