"""Difficulty: how hard tasks are from their rollouts — bands, their distributions, check-level vs
task-level pass rates, a table of tasks with pass@1 / pass@k, and the export of a selection."""
import streamlit as st

from analysis import difficulty as d
from analysis import difficulty_figures as figs
from analysis import failures as fail
from pages import cached
from pages.shared import workspace
from pipeline.agents.protocol import AGENT_LABELS, AGENTS

ws = workspace()
st.title("Difficulty")
st.caption("A task's pass@1 is the share of its rollouts that passed; pass@k the chance that at least one of k "
           "does (the unbiased estimator over its n rollouts). Bands: unsolved (0 passed), hard (at most a third), "
           "medium, easy (at least two thirds), solved (all). nop, oracle and ablation are scripted probes, not "
           "models: ablation is the oracle with one solution step left out, a test of the verifier.")
rollouts = cached.rollouts_frame(ws)
if rollouts.empty:
    st.info("No rollouts yet. Run some with `workbench rollout --accepted --agent oracle -k 3` (or `--agent "
            "ablation`, or `--agent terminus-2 --model M` with an LLM endpoint), or launch a batch on the "
            "Rollouts page.")
    st.stop()

labels = fail.agent_labels(rollouts)
runs = d.run_labels(rollouts, cached.rollout_runs(ws))
# the agent labels are long (ablation says what it is): their picker gets a row of its own
agents = st.multiselect("Agent", list(labels), format_func=labels.get, key="diff_agents")
cols = st.columns([1, 2, 1, 1, 1])
models = cols[0].multiselect("Model", d.model_options(rollouts), key="diff_models",
                             help="The scripted agents use no model: they read '(no model)'.")
run_ids = cols[1].multiselect("Run", list(runs), format_func=runs.get, key="diff_runs")
categories = cols[2].multiselect("Category", sorted(set(rollouts["category"].dropna())), key="diff_categories")
bands = cols[3].multiselect("Band", list(d.BANDS), key="diff_bands")
withdrawn = d.withdrawn_tasks(rollouts)
keep_withdrawn = bool(withdrawn) and st.checkbox(
    f"Include the {len(withdrawn)} task(s) withdrawn from the accepted set", key="diff_withdrawn",
    help="A task withdrawn as a design flaw (the trajectory judge, or by hand on the Tasks page) is left out: "
         "its failures say nothing about how hard a sound task is.")
f = d.DifficultyFilter(agents=tuple(agents), models=tuple(models), runs=tuple(run_ids),
                       categories=tuple(categories), bands=tuple(bands), withdrawn=keep_withdrawn)
chosen = d.filter_rollouts(rollouts, f)
most = d.most_rollouts(chosen)
k = cols[4].number_input("k of pass@k", min_value=1, max_value=most, value=most, key="diff_k",
                         help="Tasks with fewer than k rollouts get no pass@k.")
diff = d.filter_bands(d.task_difficulty(chosen, int(k)), f.bands)
if diff.empty:
    st.warning("No rollouts match these filters.")
    st.stop()

m = st.columns(4)
m[0].metric("Tasks", diff["task_id"].nunique())
m[1].metric("Rollouts", int(diff["rollouts"].sum()))
m[2].metric("Mean pass@1", f"{diff['pass@1'].mean():.0%}")
m[3].metric("Unsolved (task × agent)", int((diff["band"] == "unsolved").sum()))

tab_bands, tab_dist, tab_checks, tab_tasks = st.tabs(["Bands", "Distributions", "Checks vs tasks", "Task table"])
with tab_bands:
    st.plotly_chart(figs.bands_by_agent_figure(d.band_counts(diff)), width="stretch", key="bands_fig")
    st.caption("One row per agent config; a task counts once per agent config that ran it.")
with tab_dist:
    dimension = st.radio("Break down by", list(d.DIMENSIONS), horizontal=True, key="diff_dimension")
    dist = d.band_distribution(diff, dimension)
    st.plotly_chart(figs.distribution_figure(dist, dimension), width="stretch", key="dist_fig")
    if dimension == "recipe family":
        st.caption(f"A task counts once under each recipe family of its steps; steps the LLM synthesizer planned "
                   f"read '{d.LLM_FAMILY}'.")
with tab_checks:
    rates = d.check_vs_task(d.rollouts_in(chosen, diff), cached.rollout_tests(ws))
    st.plotly_chart(figs.check_vs_task_figure(rates), width="stretch", key="checks_fig")
    st.caption("Check level: the share of individual tests that passed; task level: the share of rollouts that "
               "passed every test. FACET's teacher rollouts: 89.4% of checks but 20.9% of tasks.")
    st.dataframe(rates.drop(columns=["agent", "model"]), hide_index=True, width="stretch", key="rates_table",
                 column_config={"task_rate": st.column_config.NumberColumn("task rate", format="percent"),
                                "check_rate": st.column_config.NumberColumn("check rate", format="percent")})
with tab_tasks:
    st.dataframe(d.task_table(diff), hide_index=True, width="stretch", key="tasks_table",
                 column_config={"pass@1": st.column_config.NumberColumn(format="%.2f"),
                                "pass@k": st.column_config.NumberColumn(format="%.2f"),
                                "agent_label": "agent"})
    ids = d.selected_task_ids(diff)
    st.markdown(f"**Export these {len(ids)} task(s)**")
    e = st.columns(3)
    e[0].download_button("CSV", d.export_csv(diff), "difficulty.csv", "text/csv", key="export_csv")
    e[1].download_button("JSON", d.export_json(diff), "difficulty.json", "application/json", key="export_json")
    e[2].download_button("Task ids (one a line)", ("\n".join(ids) + "\n").encode(), "task_ids.txt", "text/plain",
                         key="export_ids")
    again = st.selectbox("Roll them out again with", AGENTS, index=AGENTS.index("terminus-2"),
                         format_func=AGENT_LABELS.get, key="diff_rerun_agent")
    st.code(d.rollout_command(ids, again, int(k)), language="bash")
