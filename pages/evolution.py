"""Evolution: what SETA-Evol's rounds did — a lineage tree per task, the pass rate before → after
per operator, the share of tasks in the productive zone (0 < r < 1) per round, the variants
tried (with a drill into one), and a launch form for a round. Thin: everything from analysis/."""
import streamlit as st

from analysis import evolution as ev
from analysis import evolution_figures as figs
from analysis import evolve_runs as er
from analysis.synth_runs import effective_status, pid_of
from pages import cached
from pages.shared import workspace
from pipeline.agents.protocol import AGENT_LABELS, AGENTS
from pipeline.evolve.models import OPERATOR_LABELS, OPERATORS
from workbench.executors.protocol import EXECUTORS
from workbench.store import lineage as lineage_store

ws = workspace()
st.title("Evolution")
st.caption("SETA-Evol evolves each task by its pass rate r over its rollouts: r > 0.5 → "
           f"{OPERATOR_LABELS['harder']}; 0 < r ≤ 0.5 → {OPERATOR_LABELS['context_switch']}; r = 0 → "
           f"{OPERATOR_LABELS['easier']}. Variants are verified like any task, then rolled out by the same agent.")

runs = cached.evolve_runs(ws)
lineage = cached.lineage_frame(ws)


def launch_form() -> None:
    """Start rounds in the background (a detached `workbench evolve`, pipeline/evolve/jobs.py) and
    follow the newest live run; where that module is missing, say how to run one instead."""
    try:
        from pipeline.evolve import jobs
    except ImportError:
        st.caption("Launching from here needs `pipeline/evolve/jobs.py`; meanwhile use `workbench evolve`.")
        return
    with st.expander("Launch evolve rounds", expanded=lineage.empty):
        with st.form("evo_form"):
            accepted = er.evolvable_tasks(cached.tasks_frame(ws))
            picked = st.multiselect("Tasks (none: every accepted task)", accepted, key="evo_launch_tasks")
            c = st.columns(4)
            rounds = c[0].number_input("Rounds", min_value=1, max_value=10, value=1, key="evo_launch_rounds")
            agent = c[1].selectbox("Agent", AGENTS, index=AGENTS.index("noisy-oracle"), format_func=AGENT_LABELS.get,
                                   key="evo_launch_agent")
            k = c[2].number_input("Rollouts per task (k)", min_value=1, max_value=32, value=4, key="evo_launch_k")
            keep_p = c[3].number_input("p (noisy-oracle)", min_value=0.0, max_value=1.0, value=0.8, step=0.05,
                                       key="evo_launch_p", help="The chance each solution step is kept.")
            e = st.columns([1, 3])
            executor = e[0].selectbox("Executor", EXECUTORS, key="evo_launch_executor")
            address = e[1].text_input("Ray address (ray executor)", key="evo_launch_address",
                                      placeholder="empty: start or attach a local cluster")
            submitted = st.form_submit_button("Launch", type="primary", key="evo_launch")
        if submitted:
            try:
                run_id = jobs.launch(ws, er.form_params(task_ids=picked, rounds=rounds, agent=agent, k=k,
                                                        keep_p=keep_p, executor=executor, ray_address=address))
            except (ValueError, OSError) as exc:
                st.error(f"The run was not started: {exc}")
            else:
                st.session_state["evo_flash"] = f"Started evolve run {run_id} in the background."
                st.rerun()
    if msg := st.session_state.pop("evo_flash", None):
        st.success(msg)
    live = [r for r in runs.to_dict("records") if r["status"] in ("pending", "running")]
    if live:
        run = live[0]
        st.session_state["evo_seen"] = (run["run_id"], effective_status(run, jobs.is_alive(pid_of(run))))
        st.fragment(_live_view, run_every=2)(jobs, run["run_id"])


def _live_view(jobs, run_id: str) -> None:
    run = lineage_store.get_run(ws.db, run_id)
    status = effective_status(run, jobs.is_alive(pid_of(run)))
    if st.session_state.get("evo_seen") != (run_id, status):
        st.rerun()     # it changed state (e.g. ended): redraw the page with what it made
    st.markdown(f"**{run_id}** · {status}" + (f" · {run['message']}" if run.get("message") else ""))
    progress = er.run_progress(run.get("params"))
    if progress is not None:
        st.progress(progress[0], text=progress[1])
    if status == "running" and st.button("Cancel run", key="evo_cancel"):
        if jobs.cancel(ws, run_id):
            st.warning("Cancel requested: no new variant or rollout starts; what was made is kept.")
        else:
            st.warning("The run was not running any more.")
    if status == "interrupted":
        st.warning(f"Interrupted: its process ({pid_of(run)}) is gone. Continue it with "
                   f"`workbench evolve --workspace {ws.root} --resume {run_id}`.")


if lineage.empty:
    st.info("No evolution yet. Run a round with `workbench evolve --accepted --rounds 1 --agent noisy-oracle -k 4` "
            "(noisy-oracle needs no LLM: its rates are simulated), or build the demo workspace "
            "(`scripts/demo.sh`), which evolves its tasks once.")
    launch_form()
    st.stop()

labels = er.run_labels(runs)
cols = st.columns([3, 2])
run_id = cols[0].selectbox("Evolve run", [None, *labels], format_func=lambda r: "all runs" if r is None else labels[r],
                           key="evo_run")
if run_id is not None:
    lineage = lineage[lineage["run_id"] == run_id]
run = runs[runs["run_id"] == run_id].iloc[0] if run_id is not None else (runs.iloc[0] if len(runs) else None)

rollouts = cached.rollouts_frame(ws)
tasks = set(lineage["task_id"]) | set(lineage["parent_id"])
configs = ev.agent_configs(rollouts, sorted(tasks))
if not configs:
    st.warning("None of these tasks has rollouts yet, so there are no pass rates to show.")
    st.stop()
config = cols[1].selectbox("Pass rates of", configs, format_func=lambda c: c.label, key="evo_agent",
                           index=0 if run is None else ev.default_config(
                               configs, er.run_config(run["agent"], run["model"], run["params"])),
                           help="Whose rollouts give r: by default the agent the evolve run used.")
if config.simulated:
    st.caption(f"⚠ {config.label}: these pass rates are simulated, not a model's.")

rates = ev.pass_rates(rollouts, config)
variants = ev.variants_frame(lineage, rates)
summary = ev.operator_summary(variants)
share = ev.productive_share(lineage, rates)

m = st.columns(4)
m[0].metric("Variants tried", len(variants))
m[1].metric("Made", int(summary["made"].sum()))
m[2].metric("Accepted", int(summary["accepted"].sum()))
last = share.dropna(subset=["share"]).iloc[-1] if share["share"].notna().any() else None
m[3].metric("Productive, last round", "—" if last is None else f"{last['share']:.0%}",
            help=f"The share of the last round's tasks with {ev.PRODUCTIVE_ZONE}.")

tab_tree, tab_ops, tab_zone, tab_variants = st.tabs(["Lineage tree", "Before → after", "Productive zone",
                                                     "Variants"])
with tab_tree:
    roots = ev.root_labels(lineage, cached.tasks_frame(ws))
    root = st.selectbox("Task", list(roots), format_func=roots.get, key="evo_root",
                        help="The originals with variants tried, most first.")
    st.plotly_chart(figs.lineage_tree_figure(ev.lineage_tree(lineage, rates, root), config), width="stretch",
                    key="evo_tree_fig")
    st.caption("Each column a generation; an edge per variant tried, coloured by its operator; nodes coloured by r "
               "(grey: no rate — not made (×), rejected (○) or not rolled out). Hover a node for what changed.")
with tab_ops:
    st.plotly_chart(figs.before_after_figure(summary, config), width="stretch", key="evo_before_after_fig")
    st.caption(f"{ev.SETA_EXPECTATION} Over the variants with a rate before and after (n); the dotted line is "
               "r = 0.5, where SETA switches from a context switch to harder.")
    st.dataframe(summary, hide_index=True, width="stretch", key="evo_summary_table",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("r_before", "r_after",
                                                                                           "delta")})
with tab_zone:
    st.plotly_chart(figs.productive_share_figure(share, config), width="stretch", key="evo_zone_fig")
    st.caption(ev.zone_caption(config))
    st.dataframe(share, hide_index=True, width="stretch", key="evo_zone_table",
                 column_config={"share": st.column_config.NumberColumn(format="percent")})
with tab_variants:
    f = st.columns(2)
    outcomes = f[0].multiselect("Outcome", list(ev.OUTCOMES), key="evo_outcomes")
    operators = f[1].multiselect("Operator", list(OPERATORS), key="evo_operators")
    table = ev.variants_table(variants, outcomes, operators)
    st.dataframe(table, hide_index=True, width="stretch", key="evo_variants_table",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("r_before", "r_after",
                                                                                           "chose_r")})
    picked = st.selectbox("Drill into a variant", list(table["task_id"]), index=None, key="evo_drill",
                          placeholder="a variant of the table")
    if picked is not None:
        row = variants[variants["task_id"] == picked].iloc[0]
        st.markdown(f"**{picked}** · {row['operator']} of `{row['parent_id']}` in round {row['round']} · "
                    f"{row['outcome']} · r {ev.rate_text(row['r_before'])} → {ev.rate_text(row['r_after'])} "
                    f"over {row['rollouts_after']} rollout(s)")
        st.markdown(f"Change: {row['change'] or '—'}")
        st.caption(f"The operator was chosen by r = {row['chose_r']:.2f} when the round ran.")
        st.plotly_chart(figs.lineage_tree_figure(ev.lineage_tree(lineage, rates, row["root_id"]), config, picked),
                        width="stretch", key="evo_drill_tree_fig")

launch_form()
