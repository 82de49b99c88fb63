"""Tasks: the yield funnel, browse synthesized tasks, and one task's files and checks."""
from pathlib import Path

import streamlit as st

from analysis import repairs_view as rv
from analysis import synth_fidelity as sf
from analysis import synth_runs as runs_view
from analysis import tasks_view as tv
from analysis import verifier_strength as vs
from analysis import withdrawals
from analysis.display import plain_log, text_or_missing
from pages import cached
from pages.shared import keep_picked, open_clicked_row, provider_note, workspace
from workbench.sandbox.bundle import BundleError, read_bundle
from workbench.store import task_events

MAX_FILES_SHOWN = 60

ws = workspace()
st.title("Tasks")
st.caption(provider_note())

tasks = cached.tasks_frame(ws)
if tasks.empty:
    st.info("No tasks yet. Launch a batch on the Synthesis page, or run `workbench synth --paths 20` "
            "(it samples its paths from the scenario graph: `workbench graph build`).")
    st.stop()
skills_table = cached.skills_table(ws)
tasks = tv.with_provider_labels(tv.with_shown_verdicts(tv.with_skill_names(tasks, skills_table)))


@st.cache_data(ttl=600, max_entries=16, show_spinner=False)
def _files(root: str, bundle_dir: str, bundle_hash: str) -> dict[str, bytes]:
    return read_bundle(Path(root) / bundle_dir).files  # a new hash means a rewritten bundle


# --- yield ---------------------------------------------------------------------------------------
st.subheader("Yield")
runs = cached.task_runs(ws)
run_ids = [None] + runs["run_id"].tolist()
run_labels = {None: "all runs", **{r["run_id"]: runs_view.run_label(r) for _, r in runs.iterrows()}}
scope = st.selectbox("Runs", run_ids, format_func=run_labels.get, key="yield_run")
funnel = cached.funnel_counts(ws, scope)
cols = st.columns(4)
cols[0].metric("Paths sampled", funnel["sampled"])
cols[1].metric("Tasks synthesized", funnel["synthesized"])
cols[2].metric("Tasks accepted", funnel["accepted"])
cols[3].metric("Verified / sampled", f"{tv.yield_ratio(funnel):.0%}")
left, right = st.columns([3, 2])
left.plotly_chart(tv.funnel_figure(funnel), width="stretch", key="funnel")
repaired = rv.repairs_funnel(cached.repair_counts(ws, scope))
if not repaired.empty:
    left.plotly_chart(rv.repairs_figure(repaired), width="stretch", key="repairs_funnel")
with right:
    breakdown = tv.failure_breakdown(tasks)
    st.markdown("**Why tasks were rejected** (all tasks)")
    if breakdown.empty:
        st.write("No task was rejected.")
    else:
        st.plotly_chart(tv.failure_figure(breakdown), width="stretch", key="failures")
    rates = tv.check_pass_rates(tasks)
    if not rates.empty:
        st.markdown("**Pass rate per check** (of the tasks it ran on)")
        st.plotly_chart(tv.pass_rate_figure(rates), width="stretch", key="pass_rates")

# --- browse --------------------------------------------------------------------------------------
st.subheader("Browse")
skill_labels = tv.skill_options(tasks, skills_table)
# Two rows, and pills for the verdict: in five narrow columns a multiselect's chips were cut ("re…").
c1, c2 = st.columns([2, 3])
query = c1.text_input("Search", key="task_q", placeholder="task or skill name")
verdicts = c2.pills("Verdict", list(tv.VERDICTS), selection_mode="multi", default=tv.default_verdicts(tasks),
                    key="f_verdict")
c3, c4, c5 = st.columns([2, 2, 3])
cats = c3.multiselect("Category", tv.distinct(tasks["category"]), key="f_category")
lo, hi = tv.steps_range(tasks)
steps = c4.slider("Path length (steps)", lo, hi, (lo, hi), key="f_steps") if hi > lo else (lo, hi)
skills = c5.multiselect("Source skills", list(skill_labels), format_func=skill_labels.get, key="f_skills")
shown = tv.filter_tasks(tasks, tv.TaskFilter(tuple(verdicts), tuple(cats), tuple(steps), tuple(skills), query))
st.markdown(f"**{len(shown)} of {len(tasks)} tasks**")
if hidden := tv.hidden_unverified(tasks, verdicts):
    st.caption(f"{hidden} unverified task(s) (pending, or cancelled with their run) are hidden: "
               "pick their verdict under Verdict to see them.")
view = shown[["name", "verdict", "failed_check", "category", "difficulty", "n_steps", "skill_names", "provider_label",
              "repairs", "cost_usd", "created_at", "task_id"]]
picked = st.dataframe(view, hide_index=True, width="stretch", height=300, key="tasks_table",
                      on_select="rerun", selection_mode="single-row",
                      column_config={"failed_check": st.column_config.TextColumn("failed check"),
                                     "n_steps": st.column_config.NumberColumn("steps"),
                                     "skill_names": st.column_config.ListColumn("source skills"),
                                     "provider_label": st.column_config.TextColumn("provider"),
                                     "cost_usd": st.column_config.NumberColumn(tv.cost_column_label(shown),
                                                                               format="$%.4f"),
                                     "created_at": st.column_config.DatetimeColumn("created"),
                                     "task_id": None})
open_clicked_row(picked, view, "task_id", "detail_task")

# --- one task ------------------------------------------------------------------------------------
st.subheader("Task")
if shown.empty:
    st.write("No task matches the filters.")
    st.stop()
labels = {r["task_id"]: tv.task_label(r) for _, r in shown.iterrows()}
keep_picked("detail_task", labels)  # a run that verifies a task changes the verdict in its label
if st.session_state.get("detail_task") not in labels:
    st.session_state["detail_task"] = tv.default_task(shown)
tid = st.selectbox("Task", list(labels), format_func=labels.get, key="detail_task")
t = shown.set_index("task_id").loc[tid]
st.markdown(f"### {t['name']}")
st.caption(f"`{tid}` · made by the {t['provider_label']} synthesizer from path `{t['path_id']}` · "
           f"bundle `{t['bundle_dir']}` · image `{text_or_missing(t['image'])}`")
attempts = cached.attempts_for(ws, tid)
if t["verdict"] == "accepted":
    st.success("Accepted: every check passed.")
elif t["verdict"] == tv.WITHDRAWN:
    st.warning(withdrawals.withdrawal_note(cached.task_withdrawal(ws, tid)))
    if st.button("Undo: restore it to the accepted set", key=f"restore_{tid}"):
        try:
            task_events.restore(ws.db, tid, "user", "restored on the Tasks page")
        except task_events.TaskEventError as exc:
            st.error(str(exc))
        else:
            st.rerun()
    with st.expander("Withdrawals and restores"):
        st.dataframe(cached.task_history(ws, tid), hide_index=True, width="stretch", key=f"events_{tid}")
elif t["verdict"] == "rejected":
    st.error(f"Rejected at **{t['failed_check']}**: {t['reason']}{rv.rejection_note(attempts)}")
elif t["verdict"] == "cancelled":
    st.warning(f"Cancelled: its run `{t['run_id']}` was {t['run_status']} before this task was verified. "
               f"`{runs_view.resume_command(t['run_id'], str(ws.root))}` verifies it.")
else:
    st.info("Pending: not verified yet.")
if judged := withdrawals.judgement_note(cached.task_judgements(ws, tid)):
    st.caption(judged)

checks = cached.checks_for(ws, tid)
try:
    files = _files(str(ws.root), t["bundle_dir"], t["bundle_hash"])
except (BundleError, OSError) as exc:
    files = {}
    bundle_problem = str(exc)
else:
    bundle_problem = ""
tab_files, tab_checks, tab_repairs, tab_path = st.tabs([f"Files ({len(files)})", f"Checks ({len(checks)})",
                                                        f"Repairs ({len(attempts)})", "Path"])

with tab_files:
    if bundle_problem:
        st.warning(f"The bundle cannot be shown: {bundle_problem}")
    else:
        tree = tv.file_tree(files)
        st.dataframe(tree, hide_index=True, width="stretch", key="file_tree",
                     column_config={"size": st.column_config.NumberColumn("bytes")})
        for i, f in enumerate(tree.head(MAX_FILES_SHOWN).itertuples()):
            with st.expander(f"{f.path} · {f.size:,} bytes", expanded=i == 0):
                if f.binary:
                    st.write(f"Binary file ({f.size:,} bytes); not shown.")
                    continue
                text, cut = tv.file_text(files[f.path])
                st.code(text, language=f.language, line_numbers=True)
                if cut:
                    st.caption("Cut: only the first 200,000 characters are shown.")
        if len(tree) > MAX_FILES_SHOWN:
            st.caption(f"{len(tree) - MAX_FILES_SHOWN} more files are listed above but not shown.")

with tab_checks:
    if checks.empty:
        st.write("No checks ran yet.")
    for _, c in checks.iterrows():
        passed = bool(c["passed"])
        with st.expander(tv.check_title(c), expanded=not passed, icon=tv.check_icon(passed)):
            st.markdown(f"**{'Passed' if passed else 'Failed'}** in {float(c['seconds']):.2f} s — "
                        f"{c['reason'] or 'no reason given'}")
            details = tv.check_details(c["details"])
            outcomes = tv.per_test_outcomes(details)
            if len(outcomes):
                st.caption("Tests: " + tv.outcome_summary(details))
                st.dataframe(outcomes, hide_index=True, width="stretch", key=f"tests_{tid}_{c['check_name']}")
            if details.test_count is not None:
                st.caption(f"{details.test_count} test function(s) found in tests/")
            for key in tv.LISTED_DETAILS:
                items = tv.detail_items(details, key)
                if len(items):
                    st.markdown(f"**{key.capitalize()}**")
                    st.dataframe(items, hide_index=True, width="stretch", key=f"{key}_{tid}_{c['check_name']}")
            if extra := tv.other_details(details):
                st.json(extra, expanded=False)
            st.code(plain_log(c["log"]) or "(no log)", language="text")
    strength = cached.task_strength(ws, tid)
    with st.expander(f"Verifier strength · {vs.summary(strength)}", expanded=False, icon=":material/shield:"):
        if strength is None:
            st.caption(vs.HOW_TO_MEASURE.format(scope=f" --tasks {tid}"))
        else:
            st.dataframe(vs.command_table(strength), hide_index=True, width="stretch", key=f"strength_{tid}")
            st.caption("untested: the command changes the state but no test fails without it (an untested "
                       "requirement); no effect: nothing it does is seen by the tests or the state (noise).")

with tab_repairs:
    st.markdown(f"**{rv.history_note(t, attempts)}**")
    if not attempts.empty:
        st.dataframe(rv.history_table(attempts), hide_index=True, width="stretch", key=f"repairs_{tid}",
                     column_config={"cost_usd": st.column_config.NumberColumn("cost", format="$%.4f")})
    for _, a in attempts.iterrows():
        with st.expander(rv.attempt_title(a), expanded=a["n"] == attempts["n"].max(), icon=rv.attempt_icon(a)):
            st.markdown(f"**{a['reason']}**")
            if a["evidence"]:
                st.code(plain_log("\n".join(a["evidence"])), language="text")
            st.code(a["diff"] or "(no diff recorded)", language="diff")
    if not rv.is_offline(t):
        costs = cached.task_stage_costs(ws, tid)
        st.markdown("**LLM cost per stage**")
        st.caption(rv.cost_note(costs, t.get("llm_model")))
        if not costs.empty:
            st.dataframe(rv.cost_table(costs), hide_index=True, width="stretch", key=f"stage_costs_{tid}",
                         column_config={"cost_usd": st.column_config.NumberColumn("cost", format="$%.4f")})

with tab_path:
    st.dataframe(tv.task_path(t, cached.task_fidelity(ws, tid)), hide_index=True, width="stretch", key="task_path")
    rubric_rows = sf.step_rubric_rows(cached.task_fidelity(ws, tid))
    if not rubric_rows.empty:
        st.markdown("**What each step does with its skill** (fidelity rubric; a step claims its skill only at 2, "
                    "with the SKILL.md line and the solution line side by side)")
        st.dataframe(rubric_rows, hide_index=True, width="stretch", key="task_rubric")
    made = (f"Recipes: {', '.join(t['recipes'])}" if rv.is_offline(t) else
            "No recipes: the LLM synthesizer planned each step from its skill")
    st.caption(f"{made} · difficulty {t['difficulty']} · category {t['category']}")
