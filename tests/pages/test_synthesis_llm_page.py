"""The Synthesis page with the LLM synthesizer: launching an LLM batch with its budget, the
live view's 'accepted after N repairs', and runs a spent budget or a failing endpoint ended."""
from __future__ import annotations

from pipeline.synth import jobs
from tests.pages.apptest_helpers import button, chart, codes, frame, open_page, plotly_array, wait_for_exit
from tests.pages.repairs_fixture import LLM_RUN_ID, add_llm_run
from tests.pages.synth_fixture import RUN_ID, make_synth_fixture
from workbench.llm.replay_server import ReplayServer
from workbench.llm.settings import save_settings
from workbench.store import tasks as store


# --- Synthesis page, LLM provider ------------------------------------------------------------------

def _endpoint(ws, monkeypatch, base_url: str, budget_usd: float | None = 3.0) -> None:
    """The workspace's endpoint as the Settings page saves it; none from the environment."""
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_BUDGET_USD", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    save_settings(ws.root, base_url=base_url, model="gpt-4o-mini", concurrency=4, budget_usd=budget_usd)


def test_with_an_endpoint_the_llm_synthesizer_launches_an_llm_batch_with_its_budget(workspace, monkeypatch):
    """The radio is enabled once an endpoint is configured; Launch starts `workbench synth
    --provider llm --budget-usd X` (with no graph to sample from, the process ends at once,
    before any LLM call)."""
    ws = workspace
    with ReplayServer() as srv:
        _endpoint(ws, monkeypatch, srv.base_url)
        at = open_page(ws, monkeypatch, "synthesis.py")
        provider, budget = at.radio(key="synth_provider"), at.number_input(key="synth_budget")
        assert not provider.disabled and not budget.disabled
        assert budget.value == 3.0  # the workspace's budget cap per batch is the default
        assert not any("none is configured" in i.value for i in at.info)
        assert any(c.value.endswith(f"LLM: planner and constructor through {srv.base_url} (model gpt-4o-mini), "
                                    "with routed repairs.") for c in at.caption)
        provider.set_value("llm")
        budget.set_value(1.5)
        at.number_input(key="synth_paths").set_value(2)
        button(at, "synth_launch").click().run()
        assert not at.exception, at.exception
        run = store.runs(ws.db).iloc[0]
        assert (run["provider"], int(run["n_paths"])) == ("llm", 2)
        assert frame(at, "run_id", "provider")["provider"].tolist() == ["llm"]
        wait_for_exit(ws, run)
        log = jobs.log_tail(ws, run["run_id"])
        assert "--provider llm" in log and "--budget-usd 1.5" in log, log
        assert srv.stats.chat_requests == 0


def test_an_llm_runs_live_view_shows_accepted_after_n_repairs(graph_workspace, monkeypatch):
    ws = graph_workspace
    llm = add_llm_run(ws, make_synth_fixture(ws))
    at = open_page(ws, monkeypatch, "synthesis.py")
    at.selectbox(key="synth_run").set_value(LLM_RUN_ID).run()
    assert not at.exception, at.exception
    fig = chart(at, f"repairs_funnel_{LLM_RUN_ID}")
    assert [d["name"] for d in fig["data"]] == ["accepted", "rejected"] and fig["data"][0]["x"] == ["0", "1", "2"]
    assert plotly_array(fig["data"][0]["y"]).tolist() == [1, 0, 1]
    assert plotly_array(fig["data"][1]["y"]).tolist() == [0, 1, 0]
    assert llm.given_up.verdict == "rejected"
    # the offline run has no repairs to show
    at.selectbox(key="synth_run").set_value(RUN_ID).run()
    assert not [el for el in at.get("plotly_chart") if "repairs_funnel" in el.proto.id]


def test_a_run_its_llm_budget_stopped_reads_cancelled_with_why_and_the_resume_command(workspace, monkeypatch):
    """The batch's message says 'resume to finish': the page gives the command that does it."""
    ws = workspace
    store.create_run(ws.db, "synth-budget01", "inverse-frequency", 4, 0, "llm", 2, None)
    store.set_run_status(ws.db, "synth-budget01", "cancelled",
                         "budget of $0.01 spent; resume to finish (0 accepted, 0 rejected, 0 failed)")
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if w.value.startswith("Cancelled")] == [
        "Cancelled: budget of $0.01 spent; resume to finish (0 accepted, 0 rejected, 0 failed). Finished tasks "
        "are kept; resume the rest with:"]
    assert f"workbench synth --workspace {ws.root} --resume --run-id synth-budget01" in codes(at)


def test_a_finished_run_whose_every_path_failed_is_no_green_success(workspace, monkeypatch):
    """An LLM endpoint that is down fails every path; the run still ends 'finished', which the
    page showed as a green success ('Finished. 0 accepted, 0 rejected, 2 failed')."""
    ws = workspace
    store.create_run(ws.db, "synth-down01", "inverse-frequency", 2, 0, "llm", 2, None)
    store.attach_paths(ws.db, "synth-down01", "b", ["p1", "p2"])
    for p in ("p1", "p2"):
        store.set_path_stage(ws.db, "synth-down01", p, "failed",
                             error="synthesis failed: LLMCallError: synth_plan/x: gave up after 6 attempts")
    store.set_run_status(ws.db, "synth-down01", "finished", "0 accepted, 0 rejected, 2 failed")
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert not at.exception, at.exception
    assert not at.success
    assert "Finished without a task: every path failed (0 accepted, 0 rejected, 2 failed); why is listed below." \
        in [w.value for w in at.warning]
    assert frame(at, "path_id", "error")["error"].str.contains("gave up after 6 attempts").all()


def test_the_llm_synthesizer_on_ray_is_refused_on_the_page_before_a_run_is_recorded(workspace, monkeypatch):
    ws = workspace
    with ReplayServer() as srv:
        _endpoint(ws, monkeypatch, srv.base_url)
        at = open_page(ws, monkeypatch, "synthesis.py")
        at.radio(key="synth_provider").set_value("llm")
        at.radio(key="synth_executor").set_value("ray")
        button(at, "synth_launch").click().run()
        assert not at.exception, at.exception
        assert any("could not be started: --executor ray runs the offline synthesizer only" in e.value
                   for e in at.error), [e.value for e in at.error]
        assert store.runs(ws.db).empty

