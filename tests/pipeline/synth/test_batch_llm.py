"""`run_synth(provider="llm")` as the CLI runs it: the real client over HTTP against the
replay server (scripted stage replies), real Docker builds and verification. The budget
stops the batch cleanly; resume keeps the run's provider and reuses the cached replies."""
from __future__ import annotations

import pytest

from pipeline.synth.batch import run_synth
from pipeline.synth.llm.scripted import ScriptedSynthesis
from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name
from workbench.store import tasks as store

pytestmark = pytest.mark.docker


@pytest.fixture
def replay(monkeypatch):
    srv = ReplayServer(latency_s=0.3).start()
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", srv.base_url)
    monkeypatch.setenv("WORKBENCH_LLM_CONCURRENCY", "1")     # fewer than the batch's: the batch raises it
    monkeypatch.setenv(SOLVE_TIMEOUT_ENV, "60")
    yield srv
    srv.stop()


def _calls(ws, run_id: str):
    with ws.db.read() as con:
        return con.execute("SELECT stage, cache_hit, item FROM llm_calls WHERE batch_id = ?", [run_id]).df()


def test_budget_stops_an_llm_batch_and_resume_finishes_from_the_cache(graph_workspace, replay):
    ws = graph_workspace
    replay.add_rule(ScriptedSynthesis(ws, base_image=base_image_name()).rule())
    first = run_synth(ws, n_paths=2, seed=1, concurrency=2, provider="llm", budget_usd=0.00001)
    assert first.status == "cancelled" and first.provider == "llm"
    assert first.verified == first.failed == 0 and first.cost_usd > 0.00001
    assert replay.stats.max_in_flight == 2               # both paths' plans asked at once
    run = store.get_run(ws.db, first.run_id)
    assert run["provider"] == "llm" and run["message"].startswith("budget of $0.00001 spent; resume to finish")
    calls = _calls(ws, first.run_id)                     # the call log was flushed when the batch closed
    assert set(calls.stage) == {"synth_plan"} and len(calls) == 2 and not calls.cache_hit.any()

    second = run_synth(ws, resume=True)                  # provider default "offline": the run's own is kept
    assert second.run_id == first.run_id and second.status == "finished", second.as_dict()
    # every path done; the LLM side's yield on these paths is its own tests' business
    assert second.verified + second.failed == 2 and second.accepted >= 1, second.failures
    frame = store.tasks_frame(ws.db)
    assert set(frame.provider) == {"llm"} and set(frame.task_id) <= set(calls.item)   # item = task id
    again = _calls(ws, first.run_id)
    plans = again[again.stage == "synth_plan"]
    assert plans.cache_hit.sum() == 2                    # the plans paid for before were not paid again
    assert {"synth_environment", "synth_instruction", "synth_solution", "synth_tests", "task_judge"} <= set(again.stage)
    t = second.timings
    assert t["llm_s"] > 0 and t["docker_s"] > 0 and t["total_s"] >= t["llm_s"] + t["docker_s"] - 1e-6
    assert second.cost_usd > 0


def test_an_endpoint_that_is_down_stops_the_batch_and_resume_finishes_once_it_answers(graph_workspace, monkeypatch):
    """Every path would fail the same way: the batch stops at the first endpoint failure, marks
    no path failed, says why, and a resume once the endpoint answers does the work."""
    ws = graph_workspace
    srv = ReplayServer(latency_s=0.05).start()
    url = srv.base_url
    srv.stop()                                            # a port nobody answers on any more
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", url)
    monkeypatch.setenv("WORKBENCH_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv(SOLVE_TIMEOUT_ENV, "60")
    first = run_synth(ws, n_paths=3, seed=2, concurrency=1, provider="llm")
    assert first.status == "cancelled" and first.failed == 0 and first.verified == 0, first.as_dict()
    message = store.get_run(ws.db, first.run_id)["message"]
    assert message.startswith("stopped: the LLM endpoint failed (APIConnectionError"), message
    assert "resume to finish" in message
    assert store.run_failures(ws.db, first.run_id).empty     # nothing recorded as the paths' own fault

    with ReplayServer(latency_s=0.05) as back:
        back.add_rule(ScriptedSynthesis(ws, base_image=base_image_name()).rule())
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", back.base_url)
        second = run_synth(ws, resume=True)
    assert second.status == "finished" and second.verified + second.failed == 3, second.as_dict()
    assert second.accepted >= 1
