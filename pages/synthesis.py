"""Synthesis: launch a batch (sample paths → synthesize → verify) and follow it live."""
import streamlit as st

from analysis import repairs_view as rv
from analysis import synth_fidelity as sf
from analysis import synth_runs as runs_view
from analysis import tasks_view as tv
from analysis import verifier_strength as vs
from pages import cached
from pages.shared import provider_note, workspace
from pipeline.synth import jobs
from pipeline.synth.batch import check_executor
from workbench.executors.protocol import EXECUTORS
from workbench.llm.settings import load_settings
from workbench.store import repairs as repair_store
from workbench.store import tasks as store

ws = workspace()
st.title("Synthesis")
st.caption(provider_note())
st.markdown("A batch samples paths from the graph, synthesizes a task along each and verifies it in Docker. "
            "It runs as its own process (`workbench synth`): **it keeps going when you close this tab or stop "
            "the dashboard**; come back here to follow it.")


def _settings():
    try:
        return load_settings(ws.root)
    except ValueError:
        return None


# --- launch --------------------------------------------------------------------------------------
if cached.last_build(ws) is None:
    st.warning("No scenario graph yet: a batch samples its paths from the graph and will fail without one. "
               "Run `workbench scenarios infer` and `workbench graph build` first.")
settings = _settings()
online = settings is not None and settings.online
if not online:
    st.info("The LLM synthesizer needs an endpoint, and none is configured: set one on the "
            "[Settings page](settings) (or `WORKBENCH_LLM_BASE_URL`). Until then batches use the offline "
            "synthesizer.")
with st.form("synth_form"):
    c1, c2, c3, c4, c5, c6 = st.columns([3, 2, 2, 2, 2, 2])
    sampler = c1.selectbox("Sampler", tv.SAMPLERS, key="synth_sampler")
    n_paths = c2.number_input("Paths", min_value=1, max_value=100_000, value=20, step=1, key="synth_paths")
    provider = c3.radio("Synthesizer", ["offline", "llm"], key="synth_provider", disabled=not online,
                        horizontal=True, help=None if online else "No LLM endpoint configured (Settings page).")
    concurrency = c4.number_input("Concurrency", min_value=1, max_value=64, value=2, step=1,
                                  key="synth_concurrency")
    seed = c5.number_input("Seed", min_value=0, value=0, step=1, key="synth_seed")
    budget = c6.number_input("LLM budget (USD)", min_value=0.0, step=0.5, format="%.2f",
                             value=float(settings.budget_usd or 0.0) if online else 0.0, key="synth_budget",
                             disabled=not online, help="The batch stops cleanly once its LLM calls cost this much; "
                             "what is done is kept and `--resume` finishes it. 0: the cap set on the Settings "
                             "page (none if none is set).")
    e1, e2, e3 = st.columns([2, 4, 2])
    executor = e1.radio("Executor", list(EXECUTORS), key="synth_executor", horizontal=True,
                        help="local: threads in the batch's process. ray: Ray tasks on a cluster whose nodes have "
                             "Docker and the `docker` resource (offline synthesizer only).")
    ray_address = e2.text_input("Ray address", key="synth_ray_address", placeholder="auto, ray://host:port or "
                                "host:port; empty: start or attach a local cluster",
                                help="Only with the ray executor.")
    ship = e3.checkbox("Ship skill packages", value=True, key="synth_ship_skills",
                       help="Each task carries its claimed skills' packages read-only under /skills, so a step can "
                            "run a skill's own script (offline synthesizer). Off: recipe steps only, claiming nothing.")
    st.caption("Offline: the recipe library composes a real task along each path (no LLM calls). "
               + (f"LLM: planner and constructor through {settings.base_url} (model {settings.model}), "
                  "with routed repairs." if online else
                  "LLM: disabled, no endpoint is configured (Settings page)."))
    submitted = st.form_submit_button("Launch", type="primary", key="synth_launch")
if submitted:
    llm = online and provider == "llm"
    params = jobs.SynthParams(n_paths=int(n_paths), sampler=sampler, provider="llm" if llm else "offline",
                              concurrency=int(concurrency), seed=int(seed),
                              budget_usd=float(budget) if llm and budget > 0 else None,
                              executor=executor, ray_address=ray_address.strip() or None, ship_skills=bool(ship))
    try:
        check_executor(params.executor, params.ray_address, params.provider)
        run_id = jobs.launch(ws, params)
    except (OSError, ValueError) as exc:
        st.error(f"The batch could not be started: {exc}")
    else:
        st.session_state["synth_run"] = run_id
        st.session_state["synth_flash"] = f"Started run {run_id} in the background."
        st.rerun()
if msg := st.session_state.pop("synth_flash", None):
    st.success(msg)

# --- runs ----------------------------------------------------------------------------------------
st.subheader("Runs")
runs = store.runs(ws.db)
if runs.empty:
    st.info("No synthesis runs yet. Launch one above, or run `workbench synth --paths 20` in a terminal.")
    st.stop()
statuses = {r["run_id"]: runs_view.effective_status(r, jobs.is_alive(runs_view.pid_of(r))) for _, r in runs.iterrows()}
st.dataframe(runs_view.runs_table(runs, statuses), hide_index=True, width="stretch", height=220, key="runs_table",
             column_config={"n_paths": st.column_config.NumberColumn("paths"),
                            "created_at": st.column_config.DatetimeColumn("started"),
                            "finished_at": st.column_config.DatetimeColumn("finished")})
ids = runs["run_id"].tolist()
labels = {r["run_id"]: runs_view.run_label(r) for _, r in runs.iterrows()}
if st.session_state.get("synth_run") not in labels:
    st.session_state["synth_run"] = runs_view.default_run(runs, statuses)
run_id = st.selectbox("Follow run", ids, format_func=labels.get, key="synth_run")
st.session_state["synth_seen"] = (run_id, statuses[run_id])


def _live_view(run_id: str) -> None:
    run = store.get_run(ws.db, run_id)
    pid = runs_view.pid_of(run)
    status = runs_view.effective_status(run, jobs.is_alive(pid))
    if st.session_state.get("synth_seen") != (run_id, status):
        st.rerun()  # the run changed state: refresh the runs table and stop polling when it is over
    stages = store.stage_counts(ws.db, run_id)
    if status in ("running", "starting"):
        st.info(f"Running (process {pid or '…'}). It continues if you close this tab; this view refreshes "
                "every 2 s.")
    elif status == "finished" and runs_view.made_nothing(stages):
        st.warning(f"Finished without a task: every path failed ({run['message'] or 'see below'}); why is "
                   "listed below.")
    elif status == "finished":
        st.success(f"Finished. {run['message'] or ''}")
    elif status == "cancelled":   # by Cancel, Ctrl-C or its LLM budget: the message says which
        st.warning(f"Cancelled: {run['message'] or 'stopped before it finished'}. Finished tasks are kept; "
                   "resume the rest with:")
        st.code(runs_view.resume_command(run_id, str(ws.root)), language="bash")
    elif status == "interrupted":
        st.warning(f"Interrupted: the batch process ({pid}) is gone — killed or crashed before it finished. "
                   "The tasks it finished are kept; resume the rest with:")
        st.code(runs_view.resume_command(run_id, str(ws.root)), language="bash")
    else:
        st.error(f"Failed: {run['message'] or 'see the log below'}")
        st.caption(f"Resume after fixing the cause: `{runs_view.resume_command(run_id, str(ws.root))}`")
    funnel = store.funnel_counts(ws.db, run_id)
    for p in runs_view.run_progress(stages, funnel, run):
        st.progress(p["fraction"], text=p["text"])
    cols = st.columns(len(tv.FUNNEL))
    for col, key in zip(cols, tv.FUNNEL):
        col.metric(tv.FUNNEL_LABELS[key], funnel[key])
    repaired = rv.repairs_funnel(repair_store.repair_counts(ws.db, run_id))
    if not repaired.empty:
        st.plotly_chart(rv.repairs_figure(repaired), width="stretch", key=f"repairs_funnel_{run_id}")
    failures = store.run_failures(ws.db, run_id)
    if not failures.empty:
        st.markdown(f"**Paths that gave no task ({len(failures)})**: {runs_view.failures_note(run['provider'])}")
        st.dataframe(failures[["path_id", "error"]], hide_index=True, width="stretch", key="synth_failures")
    fidelity = store.run_skill_fidelity(ws.db, run_id)
    if fidelity:
        st.plotly_chart(sf.rubric_split_figure(sf.rubric_figures(fidelity)), width="stretch",
                        key=f"synth_rubric_{run_id}")
        st.caption("A step claims its skill only at 2 (it runs the skill's own script or documented command); "
                   "steps below are connective and claim nothing.")
        gaps = sf.exercise_gaps(fidelity)
        if not gaps.empty:
            st.markdown(f"**Skills no step exercised ({len(gaps)})**: no generator could run their own workflow "
                        "in a task, so their steps stand connective.")
            st.dataframe(gaps, hide_index=True, width="stretch", key="synth_gaps")
    if status not in ("running", "starting"):
        strengths = cached.run_strength(ws, run_id)
        if len(strengths):
            st.plotly_chart(vs.strength_figure(strengths), width="stretch", key=f"synth_strength_{run_id}")
        else:
            st.caption("Verifier strength: not measured for this run's tasks. "
                       + vs.HOW_TO_MEASURE.format(scope=f" --run-id {run_id}"))
    if status == "running":
        if st.button("Cancel run", key="synth_cancel"):
            if jobs.cancel(ws, run_id):
                st.session_state["synth_cancel_sent"] = run_id
            else:
                st.warning("The run was not running any more.")
        if st.session_state.get("synth_cancel_sent") == run_id:
            st.warning("Cancel requested: the batch stops its containers and keeps the tasks it finished.")
    tail = jobs.log_tail(ws, run_id)
    if tail is None and status not in ("running", "starting"):
        st.caption("This run keeps no log file: it was not launched from this page (`workbench synth` "
                   "printed to its terminal; the demo build logs to `runs/demo-build.log`).")
    else:
        st.markdown("**Log** (last 4,000 characters of "
                    f"`{(ws.runs_dir / run_id / 'synth.log').relative_to(ws.root)}`)")
        st.code(tail or "(no output yet)", language="text")


live = statuses[run_id] in ("running", "starting")
st.fragment(_live_view, run_every=2 if live else None)(run_id)
st.caption("Browse the tasks of every run, their files and check logs on the Tasks page.")
