"""LLM & cost: calls, tokens and cost by stage and model, cache hits, errors, over time; per synthesis
task and per batch with its accepted tasks."""
import streamlit as st

from analysis import llm_costs
from pages import cached
from pages.shared import provider_note, workspace

ws = workspace()
st.title("LLM & cost")
st.caption(provider_note())
calls = cached.calls_frame(ws)
groups = llm_costs.headline(calls)
for g in groups:      # a model's calls and a test double's are never added up
    t, sfx = g["totals"], g["suffix"]
    if len(groups) > 1 or sfx:
        st.markdown(f"**{g['group']}**")
    c = st.columns(5)
    c[0].metric("Calls" + sfx, t["calls"])
    c[1].metric("HTTP calls" + sfx, t["http_calls"])
    c[2].metric("Cache hit rate" + sfx, f"{t['cache_hit_rate']:.0%}")
    c[3].metric("Tokens" + sfx, f"{t['tokens']:,}")
    c[4].metric("Cost (USD)" + sfx, f"{t['cost_usd']:.4f}")
if calls.empty:
    st.info("No LLM calls yet. With an endpoint configured (Settings), `workbench scenarios infer` makes some; "
            "the offline provider makes none.")
    st.stop()
summary = llm_costs.by_stage_model(calls)
left, right = st.columns([3, 2])
with left:
    st.subheader("Cost by stage and model")
    st.plotly_chart(llm_costs.cost_figure(summary), width="stretch", key="cost_fig")
with right:
    st.subheader("Error classes")
    errors = llm_costs.error_classes(calls)
    if errors.empty:
        st.write("No errors.")
    else:
        st.plotly_chart(llm_costs.errors_figure(errors), width="stretch", key="errors_fig")
st.subheader("Over time")
freq = st.selectbox("Bucket", ["1s", "10s", "1min", "10min", "1h", "1D"], index=2, key="bucket")
st.plotly_chart(llm_costs.timeline_figure(llm_costs.over_time(calls, freq)), width="stretch", key="time_fig")
st.subheader("By stage and model")
st.dataframe(summary, hide_index=True, width="stretch")
tasks = cached.tasks_frame(ws)
st.subheader("By batch")
st.caption("A synthesis batch is its run: accepted counts the tasks its calls worked on that were accepted.")
st.dataframe(llm_costs.by_batch(calls, tasks), hide_index=True, width="stretch",
             column_config={"cost_per_accepted": st.column_config.NumberColumn("cost per accepted task",
                                                                             format="%.4f")})
per_task = llm_costs.by_task(calls, tasks)
if not per_task.empty:
    st.subheader("By task (LLM synthesis)")
    st.plotly_chart(llm_costs.task_cost_figure(llm_costs.task_stage_costs(calls, tasks)), width="stretch",
                    key="task_cost_fig")
    st.dataframe(per_task, hide_index=True, width="stretch")
with st.expander("Latest calls"):
    st.dataframe(calls.head(500), hide_index=True, width="stretch")
