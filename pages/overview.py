"""Overview: workspace counts and the state of each pipeline stage."""
import pandas as pd
import streamlit as st

from analysis import figures, skills_view
from analysis.pipeline_state import demo_build_view, pipeline_stages
from pages import cached
from pages.shared import provider_note, workspace
from workbench.demo_status import read_status

ws = workspace()
st.title("SkillGraph Workbench")
st.caption(f"Workspace `{ws.root}` · {provider_note()}")


def demo_build(root) -> None:
    """The demo build behind the dashboard: what is being built, how far, what is missing.
    A finished stage redraws the whole page, whose counts it changed."""
    build = read_status(root)
    if build is None:
        return
    tasks_made = cached.workspace_status(ws)["tasks"]["total"] if build.missing else 0
    view = demo_build_view(build, build.running, tasks_made=tasks_made)
    if view.finished != st.session_state.get("_demo_finished", view.finished):
        st.rerun()
    if view.running:
        st.progress(view.fraction, text=view.headline)
    elif view.missing or build.state != "done":
        st.warning(view.headline)
    else:
        st.caption(view.headline)
    for line in view.missing:
        st.warning(line)
    with st.expander("Demo build", expanded=view.running):
        # a static table wraps its cells: a grid cut each stage's detail to its column's width
        st.table(pd.DataFrame(view.rows), hide_index=True, border="horizontal")
        st.caption(f"Log: `{build.log}`")


_first = read_status(ws.root)
if _first is not None:
    st.session_state["_demo_finished"] = demo_build_view(_first, _first.running).finished
st.fragment(demo_build, run_every=2 if _first is not None and _first.running else None)(ws.root)

status = cached.workspace_status(ws)
sk = status["skills"]
cols = st.columns(4)
for col, (label, key) in zip(cols, [("Skills", "total"), ("Accepted", "accepted"),
                                    ("Rejected", "rejected"), ("Pending review", "pending")]):
    col.metric(label, sk[key])

st.subheader("Pipeline")
stages = pipeline_stages(status)
st.dataframe(pd.DataFrame([s.__dict__ for s in stages]), hide_index=True, width="stretch",
             key="stages")

table = cached.skills_table(ws)
if table.empty:
    st.info("No skills yet. Run `workbench ingest PATH` to bring some in.")
else:
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Skills by category")
        st.plotly_chart(figures.skills_by_category(skills_view.status_by_category(table)),
                        width="stretch", key="by_category")
    with right:
        st.subheader("What the filters flagged")
        rc = skills_view.rule_counts(table)
        if rc.empty:
            st.write("Nothing flagged.")
        else:
            st.plotly_chart(figures.flagged_rules(rc), width="stretch", key="by_rule")

st.subheader("Recent ingests")
history = cached.ingest_history(ws)
st.dataframe(history, hide_index=True, width="stretch", key="ingests")
problems = cached.ingest_problems(ws)
if not problems.empty:
    with st.expander(f"{len(problems)} package(s) could not be ingested in the last run"):
        st.dataframe(problems, hide_index=True, width="stretch", key="problems")
