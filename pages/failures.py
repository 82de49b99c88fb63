"""Failures: why rollouts fail (failure classes, the tests that fail most, a task × test heatmap,
near-misses) and one rollout turn by turn next to its failed tests and the verifier's output."""
import streamlit as st

from analysis import failures as fx
from analysis import rollout_folder as rf
from analysis import trajectory_view as tview
from analysis.display import plain_log
from pages import cached
from pages.shared import open_clicked_row, workspace
from pipeline.agents.protocol import AGENT_LABELS

ws = workspace()
st.title("Failures")
st.markdown("Why rollouts fail: how each agent's failed rollouts ended, which tests fail most and where, and the "
            "near-misses (FACET: 54% of failed teacher rollouts missed only one or two checks). Pick a rollout "
            "below to read it turn by turn next to the tests it failed.")

rollouts = cached.rollouts_frame(ws)
if rollouts.empty:
    st.info("No rollouts yet. Launch a batch on the [Rollouts page](rollouts), or run "
            "`workbench rollout --accepted --agent oracle -k 3` in a terminal (`--agent ablation` probes the "
            "tests without an LLM).")
    st.stop()
tests = cached.rollout_tests(ws)
names = dict(zip(rollouts["task_id"], rollouts["task_name"]))

# --- filters -------------------------------------------------------------------------------------
labels = fx.agent_labels(rollouts)
# pills, not a multiselect: the labels say what a probe is, and a multiselect's chips cut them short
agents = st.pills("Agent (none picked: all)", list(labels), selection_mode="multi", format_func=labels.get,
                  key="fail_agents") or []
c2, c3, c4 = st.columns([2, 2, 3])
models = c2.multiselect("Model", fx.model_options(rollouts), key="fail_models")
run_ids = c3.multiselect("Run", sorted(set(rollouts["run_id"].dropna())), key="fail_runs")
task_ids = c4.multiselect("Task", sorted(names), format_func=lambda t: f"{names[t]} ({t})", key="fail_tasks")
shown_agents = agents or list(labels)
if "ablation" in shown_agents:
    st.caption(f"**{AGENT_LABELS['ablation']}**: its failures say which tests catch a missing solution step, not "
               "how well a model does. nop and oracle are baselines, not models either.")
picked = fx.filter_rollouts(rollouts, agents=agents, models=models, runs=run_ids, tasks=task_ids)
if picked.empty:
    st.info("No rollouts match these filters.")
    st.stop()
picked_tests = fx.tests_of(tests, picked)

near = fx.near_misses(picked)
m1, m2, m3, m4 = st.columns(4)
m1.metric("Rollouts", len(picked))
m2.metric("Failed", near.failed)
m3.metric("Near-misses", near.near)
m4.metric("Near-miss share", "—" if near.share is None else f"{near.share:.0%}",
          help=f"Of the failed rollouts whose tests ran ({near.with_tests}), those that missed only 1 or "
               f"{fx.NEAR_MISS_MAX_FAILED} tests. A rollout that crashed or timed out before the verifier "
               "reports no tests and is left out.")

tab_classes, tab_tests, tab_heat, tab_near = st.tabs(["Failure classes", "Most-failing tests", "Task × test heatmap",
                                                      "Near-misses"])
with tab_classes:
    counts = fx.failure_class_counts(picked)
    if counts.empty:
        st.success("Every rollout shown passed.")
    else:
        st.plotly_chart(fx.failure_class_figure(counts), width="stretch", key="fail_classes_chart")
        st.dataframe(counts.drop(columns=["agent"]), hide_index=True, width="stretch", key="fail_classes_table",
                     column_config={"agent_label": st.column_config.TextColumn("agent"),
                                    "failure_class": st.column_config.TextColumn("failure class"),
                                    "share": st.column_config.NumberColumn("share of its rollouts", format="percent")})
        with st.expander("What the failure classes mean"):
            st.markdown("\n".join(f"- **{c}**: {fx.CLASS_LABELS[c]}" for c in fx.CLASS_ORDER))
with tab_tests:
    top = fx.most_failing_tests(picked_tests, names)
    if top.empty:
        st.info("No test failed in the rollouts shown (or none reported per-test results).")
    else:
        st.dataframe(top, hide_index=True, width="stretch", key="fail_top_tests",
                     column_config={"runs": st.column_config.NumberColumn("rollouts that ran it"),
                                    "failed": st.column_config.NumberColumn("rollouts that failed it"),
                                    "fail_rate": st.column_config.NumberColumn("fail rate", format="percent")})
with tab_heat:
    matrix = fx.heatmap_matrix(picked_tests)
    if matrix.empty:
        st.info("No test failed in the rollouts shown: nothing to map.")
    else:
        st.caption(f"Fail rate of each test (columns) in each task's rollouts (rows); blank: the task has no such "
                   f"test. At most {fx.HEATMAP_MAX_TASKS} tasks and {fx.HEATMAP_MAX_TESTS} tests, those failing "
                   "most.")
        st.plotly_chart(fx.heatmap_figure(matrix, names), width="stretch", key="fail_heatmap")
with tab_near:
    hist = fx.missed_tests_histogram(picked)
    if hist.empty:
        st.info("No failed rollout with per-test results among those shown.")
    else:
        st.plotly_chart(fx.missed_tests_figure(hist), width="stretch", key="fail_missed_chart")
        misses = fx.near_miss_rollouts(picked)
        st.markdown(f"**{len(misses)} near-misses** (click one to open it below)")
        cols = ["task_name", "agent", "model", "sample", "failure_class", "n_failed", "n_tests", "rollout_id"]
        near_click = st.dataframe(misses[cols], hide_index=True, width="stretch", key="fail_near_table",
                                  on_select="rerun", selection_mode="single-row")
        open_clicked_row(near_click, misses, "rollout_id", "fail_rollout")

# --- one rollout ---------------------------------------------------------------------------------
st.subheader("One rollout")
options = fx.drilldown_order(picked)
by_id = picked.set_index("rollout_id")
if st.session_state.get("fail_rollout") not in options:
    st.session_state["fail_rollout"] = options[0]
rollout_id = st.selectbox("Rollout", options, key="fail_rollout",
                          format_func=lambda r: fx.rollout_label(by_id.loc[r].to_dict() | {"rollout_id": r}, names))
rec = by_id.loc[rollout_id]
verdict = "passed" if bool(rec["passed"]) else f"failed: {fx.CLASS_LABELS.get(rec['failure_class'], rec['failure_class'])}"
who = fx.agent_label(rec["agent"], rec["agent_label"], rec["model"])   # a run against a test double says so
st.markdown(f"**{names.get(rec['task_id'], rec['task_id'])}** · {who}"
            f"{' · ' + rec['model'] if isinstance(rec['model'], str) else ''} · sample {int(rec['sample'])} · "
            f"**{verdict}** · {int(rec['turns'])} turns · {rec['total_s']:.1f} s · ${rec['cost_usd']:.4f}")
if isinstance(rec["error"], str) and rec["error"]:
    st.error(f"Error: {rec['error']}")
folder = rf.open_folder(ws.root, rec["folder"])
if folder.path:
    view = tview.load_view(folder.path / rf.TRAJECTORY, picked_tests, rollout_id,
                           name=f"{rec['folder']}/{rf.TRAJECTORY}")
else:   # no files to read: the failed tests still show (the folder's error is shown instead)
    view = tview.view_document({}, picked_tests, rollout_id)
left, right = st.columns([3, 2])
with left:
    st.markdown(f"**Trajectory** ({view.agent or rec['agent']}{', ' + view.model if view.model else ''}: "
                f"{view.agent_turns} agent turns)")
    if folder.error:
        st.warning(f"The rollout's files cannot be shown: {folder.error}")
    elif view.error:
        st.warning(f"The trajectory cannot be shown: {view.error}")
    for w in view.warnings:
        st.warning(w)
    few = view.agent_turns <= 4
    for turn in view.turns:
        if turn.source != "agent":
            with st.expander(f"{turn.step_id}. {turn.source} prompt", expanded=False):
                st.code(turn.message, language="text")
            continue
        bits = [f"{len(turn.keystrokes)} command{'s' if len(turn.keystrokes) != 1 else ''}"]
        if turn.task_complete:
            bits.append("task complete")
        if turn.scripted:
            bits.append("scripted")
        with st.expander(f"{turn.step_id}. agent · {' · '.join(bits)}", expanded=few):
            if turn.analysis:
                st.markdown(f"**Analysis** {turn.analysis}")
            if turn.plan:
                st.markdown(f"**Plan** {turn.plan}")
            if turn.message:
                st.markdown(turn.message if not turn.analysis and not turn.plan else f"_{turn.message}_")
            if turn.reasoning:
                st.caption(f"Reasoning: {turn.reasoning}")
            if turn.keystrokes:
                st.code("".join(k.text if k.text.endswith("\n") else k.text + "\n" for k in turn.keystrokes),
                        language="bash")
            for call in turn.calls:
                st.code(call, language="json")
            if turn.output:
                st.markdown("Terminal output")
                st.code(plain_log(turn.output), language="text")
            if turn.prompt_tokens is not None:
                st.caption(f"{turn.prompt_tokens} prompt + {turn.completion_tokens or 0} completion tokens"
                           f"{f' · ${turn.cost_usd:.4f}' if turn.cost_usd else ''}")
    if view.omitted:
        st.caption(f"{view.omitted} more steps not shown (download the trajectory to read them all).")
with right:
    st.markdown(f"**Failed tests** ({len(view.failed_tests)} of {int(rec['n_tests'])})")
    if int(rec["n_tests"]) == 0:
        st.info("No per-test results: the verifier did not run or reported none.")
    elif view.failed_tests.empty:
        st.success("Every test passed.")
    else:
        st.dataframe(view.failed_tests, hide_index=True, width="stretch", key="fail_rollout_tests")
    if folder.verifier:
        st.markdown("**Verifier output**")
        for vf in folder.verifier:
            with st.expander(f"verifier/{vf.name}" + (f" ({vf.note})" if vf.note else "")):
                st.code(plain_log(vf.text), language="json" if vf.name.endswith(".json") else "text")
    for name, path in folder.downloads.items():
        st.download_button(f"Download {name}", data=path.read_bytes(), file_name=f"{rollout_id}-{name}",
                           key=f"fail_dl_{name}", mime="application/json" if name.endswith(".json") else "text/plain")
    for name, size in folder.too_big.items():
        st.caption(f"{name}: {size:,} bytes, too big to download here; it is at `{rec['folder']}/{name}`.")
    if folder.path and rf.RECORDING not in folder.downloads and rf.RECORDING not in folder.too_big:
        st.caption("No terminal recording: scripted agents run their script without a terminal.")
