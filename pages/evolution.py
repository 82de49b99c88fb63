"""Evolution: what SETA-Evol's rounds did — a lineage tree per task, the pass rate before → after
per operator, the share of tasks in the productive zone (0 < r < 1) per round, the variants
tried (with a drill into one), and a launch form for a round. Thin: everything from analysis/."""
import streamlit as st

from analysis import evolution as ev
from analysis import evolution_figures as figs
from pages import cached
from pages.shared import workspace
from pipeline.evolve.models import OPERATOR_LABELS, OPERATORS

ws = workspace()
st.title("Evolution")
st.caption("SETA-Evol evolves each task by its pass rate r over its rollouts: r > 0.5 → "
           f"{OPERATOR_LABELS['harder']}; 0 < r ≤ 0.5 → {OPERATOR_LABELS['context_switch']}; r = 0 → "
           f"{OPERATOR_LABELS['easier']}. Variants are verified like any task, then rolled out by the same agent.")

runs = cached.evolve_runs(ws)
lineage = cached.lineage_frame(ws)


def launch_form() -> None:
    """Start a round in the background (helper D's pipeline/evolve/jobs.py), where it exists."""
    st.caption("Launching a round from here comes with `pipeline/evolve/jobs.py`; meanwhile use `workbench evolve`.")


if lineage.empty:
    st.info("No evolution yet. Run a round with `workbench evolve --accepted --rounds 1 --agent noisy-oracle -k 4` "
            "(noisy-oracle needs no LLM: its rates are simulated), or build the demo workspace "
            "(`scripts/demo.sh`), which evolves its tasks once.")
    launch_form()
    st.stop()

labels = ev.run_labels(runs)
cols = st.columns([3, 2])
run_id = cols[0].selectbox("Evolve run", [None, *labels], format_func=lambda r: "all runs" if r is None else labels[r],
                           key="evo_run")
if run_id is not None:
    lineage = lineage[lineage["run_id"] == run_id]
run = runs[runs["run_id"] == run_id].iloc[0] if run_id is not None else (runs.iloc[0] if len(runs) else None)
for r in runs[runs["status"] == "running"].itertuples():
    progress = ev.run_progress(r.params)
    if progress is not None:
        st.progress(progress[0], text=f"{r.run_id}: {progress[1]}")

rollouts = cached.rollouts_frame(ws)
tasks = set(lineage["task_id"]) | set(lineage["parent_id"])
configs = ev.agent_configs(rollouts, sorted(tasks))
if not configs:
    st.warning("None of these tasks has rollouts yet, so there are no pass rates to show.")
    st.stop()
config = cols[1].selectbox("Pass rates of", configs, format_func=lambda c: c.label, key="evo_agent",
                           index=0 if run is None else ev.default_config(
                               configs, ev.run_config(run["agent"], run["model"], run["params"])),
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
    roots = ev.roots(lineage)
    root = st.selectbox("Task", roots, key="evo_root", help="The originals with variants tried, most first.")
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
