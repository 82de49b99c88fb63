"""Rollouts: launch a batch (an agent k times on each task, each rollout in a fresh container)
and follow it live; the batches list; cancel."""
from dataclasses import replace

import streamlit as st

from analysis import rollout_runs as rv
from pages import cached
from pages.shared import workspace
from pipeline.agents.protocol import AGENT_LABELS, AGENTS
from pipeline.rollouts import jobs
from pipeline.rollouts.models import DEFAULT_CONCURRENCY, DEFAULT_K
from workbench.executors.protocol import EXECUTORS
from workbench.llm.settings import load_settings
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

ws = workspace()
st.title("Rollouts")
st.markdown("A batch runs one agent k times on each task, every rollout in a fresh container of the task's image: "
            "the agent acts, then the task's tests judge the result. It runs as its own process (`workbench "
            "rollout`): **it keeps going when you close this tab or stop the dashboard**; come back here to follow "
            "it. Read the results on the [Difficulty](difficulty) and [Failures](failures) pages.")


def _settings():
    try:
        return load_settings(ws.root)
    except ValueError:
        return None


# --- launch --------------------------------------------------------------------------------------
settings = _settings()
online = settings is not None and settings.online
accepted = task_store.accepted_tasks(ws.db)
st.subheader("Launch a batch")
if accepted.empty:
    st.info("No accepted tasks yet: a batch runs on verified, accepted tasks. Make some on the "
            "[Synthesis page](synthesis) (or `workbench synth --paths 20`).")
else:
    names = dict(zip(accepted["task_id"], accepted["name"]))
    agent = st.selectbox("Agent", AGENTS, format_func=AGENT_LABELS.get, key="ro_agent")
    if agent == "ablation":
        st.caption(f"**{AGENT_LABELS['ablation']}**: it shows which tests notice a missing step. No LLM.")
    elif agent != rv.LLM_AGENT:
        st.caption(f"**{AGENT_LABELS[agent]}**: a scripted baseline, no LLM.")
    llm = agent == rv.LLM_AGENT
    # outside the form: what it changes (a replay behaviour instead of a model) must show at once
    use_replay = llm and (not online or st.checkbox(f"Use {rv.REPLAY_MODEL} instead of the endpoint (a test "
                                                    "double, not an LLM)", key="ro_use_replay"))
    with st.form("ro_form"):
        scope = st.radio("Tasks", ["accepted", "selection"], horizontal=True, key="ro_scope",
                         format_func={"accepted": f"every accepted task ({len(names)})",
                                      "selection": "a selection"}.get)
        picked = st.multiselect("Selection (when 'a selection' is chosen)", list(names),
                                format_func=lambda t: f"{names[t]} ({t})", key="ro_tasks")
        c1, c2, c3 = st.columns(3)
        k = c1.number_input("Rollouts per task (k)", min_value=1, max_value=50, value=DEFAULT_K, step=1, key="ro_k")
        concurrency = c2.number_input("Concurrency", min_value=1, max_value=32, value=DEFAULT_CONCURRENCY, step=1,
                                      key="ro_concurrency")
        temperature = c3.number_input("Temperature", min_value=0.0, max_value=2.0, value=0.0, step=0.1,
                                      format="%.2f", key="ro_temperature", disabled=not llm,
                                      help="terminus-2 only; above 0 each sample is a fresh draw (no response cache)")
        keep_p = None
        if agent == "noisy-oracle":
            keep_p = st.number_input("p (probability of keeping each solution step)", min_value=0.0, max_value=1.0,
                                     value=0.8, step=0.05, format="%.2f", key="ro_p")
        e1, e2 = st.columns([1, 2])
        executor = e1.radio("Executor", EXECUTORS, horizontal=True, key="ro_executor",
                            help="local: threads on this machine; ray: Ray tasks on the cluster's nodes that have "
                                 "the `docker` resource (terminus-2 runs locally only)")
        ray_address = e2.text_input("Ray address (ray only)", value="", key="ro_ray_address",
                                    placeholder="auto, ray://host:port or host:port; empty: a local cluster")
        model = replay = None
        if llm:
            if not online:
                st.warning("No LLM endpoint is configured (set one on the [Settings page](settings)): terminus-2 "
                           f"can only run against {rv.REPLAY_NOTE}.")
            elif not use_replay:
                model = st.text_input("Model", value=settings.model or "", key="ro_model",
                                      help=f"at {settings.base_url}; empty: the workspace's model")
            replay = st.selectbox("Scripted replay behaviour (test double)", rv.BEHAVIOURS, key="ro_replay",
                                  help="oracle types the task's solution and completes; the others misbehave on "
                                       "purpose (malformed JSON, never completing, flooding output, completing "
                                       "too early)") if use_replay else None
        submitted = st.form_submit_button("Launch", type="primary", key="ro_launch")
    if submitted:
        if scope == "selection" and not picked:
            st.error("Pick at least one task for 'a selection', or choose every accepted task.")
        else:
            params = replace(rv.form_params(agent=agent, task_ids=picked if scope == "selection" else (), k=k,
                                            concurrency=concurrency, temperature=temperature, model=model,
                                            replay=replay, online=online),
                             keep_p=keep_p, executor=executor,
                             ray_address=(ray_address.strip() or None) if executor == "ray" else None)
            try:
                run_id = jobs.launch(ws, params)
            except (ValueError, OSError) as exc:
                st.error(f"The batch was not started: {exc}")
            else:
                st.session_state["ro_run"] = run_id
                double = f" against {rv.REPLAY_MODEL} (a test double)" if params.replay else ""
                st.session_state["ro_flash"] = f"Started run {run_id} ({agent}{double}) in the background."
                st.rerun()
if msg := st.session_state.pop("ro_flash", None):
    st.success(msg)

# --- batches -------------------------------------------------------------------------------------
st.subheader("Batches")
runs = cached.rollout_runs(ws)
if runs.empty:
    st.info("No rollout batches yet. Launch one above, or run `workbench rollout --accepted --agent oracle -k 3` "
            "in a terminal.")
    st.stop()
records = {r["run_id"]: r for r in runs.to_dict("records")}
statuses = {i: rv.effective_status(r, jobs.is_alive(rv.pid_of(r))) for i, r in records.items()}
st.dataframe(rv.runs_table(runs, statuses), hide_index=True, width="stretch", height=220, key="ro_runs_table",
             column_config={"model": st.column_config.TextColumn("model", width="medium"),   # "(test double)" shows
                            "created_at": st.column_config.DatetimeColumn("started"),
                            "finished_at": st.column_config.DatetimeColumn("finished"),
                            "n_tasks": st.column_config.NumberColumn("tasks")})
if st.session_state.get("ro_run") not in records:
    st.session_state["ro_run"] = rv.default_run(runs, statuses)
run_id = st.selectbox("Follow batch", list(records), format_func=lambda r: rv.run_label(records[r]), key="ro_run")
st.session_state["ro_seen"] = (run_id, statuses[run_id])


def _live_view(run_id: str) -> None:
    run = ro_store.get_run(ws.db, run_id)
    status = rv.effective_status(run, jobs.is_alive(rv.pid_of(run)))
    if st.session_state.get("ro_seen") != (run_id, status):
        st.rerun()  # the run changed state: refresh the table and stop polling once it is over
    level, text = rv.status_note(status, run, str(ws.root))
    getattr(st, level)(text)
    for p in rv.run_progress(run):
        st.progress(p["fraction"], text=p["text"])
    if status == "running":
        if st.button("Cancel batch", key="ro_cancel"):
            if jobs.cancel(ws, run_id):
                st.session_state["ro_cancel_sent"] = run_id
            else:
                st.warning("The batch was not running any more.")
        if st.session_state.get("ro_cancel_sent") == run_id:
            st.warning("Cancel requested: no new rollout starts, running ones stop at their next turn, containers "
                       "are removed; stored rollouts are kept.")
    tail = jobs.log_tail(ws, run_id)
    if tail is None and status not in rv.LIVE:
        st.caption("This batch keeps no log file: it was not launched from this page (`workbench rollout` printed "
                   "to its terminal).")
    else:
        st.markdown(f"**Log** (last 4,000 characters of `runs/{run_id}/{jobs.LOG_NAME}`)")
        st.code(tail or "(no output yet)", language="text")


live = statuses[run_id] in rv.LIVE
st.fragment(_live_view, run_every=2 if live else None)(run_id)
