"""terminus-2 batches and the LLM's limits (real client over HTTP, real Docker): a spent budget
and an endpoint that is down stop the batch — the rollout they cut short is not stored as if
the agent had failed — and resume finishes the work."""
import json

import pytest

from pipeline.agents.terminus2.scripted import replay_model
from pipeline.rollouts.batch import run_rollouts
from workbench.llm.caller import LLMCaller
from workbench.llm.runtime import open_client
from workbench.llm.settings import LLMSettings
from workbench.store import rollouts as store
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401

pytestmark = pytest.mark.docker


def test_a_spent_budget_stops_the_batch_and_resume_finishes(tasks_ws, engine, monkeypatch):
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    ws, ids = tasks_ws
    # The scripted model is free; priced here so that the first call spends the cap.
    (ws.root / "config.json").write_text(json.dumps({"llm": {"prices": {
        replay_model("oracle"): {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}}}}))
    first = run_rollouts(ws, agent="terminus-2", replay="oracle", task_ids=ids[:1], k=2, concurrency=1,
                         budget_usd=0.0001, engine=engine)
    assert first.status == "cancelled" and first.ran == 0, first.as_dict()
    assert first.cost_usd > 0.0001
    run = store.get_run(ws.db, first.run_id)
    assert run["status"] == "cancelled" and run["message"].startswith("budget spent")
    assert f"--resume {first.run_id}" in run["message"]
    assert store.rollouts_frame(ws.db, first.run_id).empty       # no rollout stored as a failure of the agent
    again = run_rollouts(ws, resume=True, run_id=first.run_id, engine=engine)
    assert again.status == "done" and again.ran == 2 and again.passed == 2, again.as_dict()


def test_an_endpoint_that_is_down_stops_the_batch_without_failing_rollouts(tasks_ws, engine):
    ws, ids = tasks_ws
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", max_retries=0, timeout_s=5)
    caller = LLMCaller(open_client(ws, settings, batch_id="down"))
    try:
        report = run_rollouts(ws, agent="terminus-2", model="gpt-4o-mini", task_ids=ids, k=2, concurrency=1,
                              engine=engine, caller=caller, run_id="down")
    finally:
        caller.close()
    assert report.status == "cancelled" and report.ran == 0, report.as_dict()
    assert report.message.startswith("stopped: the LLM endpoint failed (APIConnectionError")
    assert "resume with `workbench rollout --resume down` once it answers" in report.message
    assert store.rollouts_frame(ws.db, "down").empty
    assert store.get_run(ws.db, "down")["status"] == "cancelled"


def test_each_behaviour_of_the_scripted_model_is_its_own_work(tasks_ws, engine, monkeypatch):
    """One model name plays every behaviour: a 'floods' batch after a 'malformed' one on the same
    task, turns and sample is new work, not the malformed rollout skipped as done before."""
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    ws, ids = tasks_ws
    malformed = run_rollouts(ws, agent="terminus-2", replay="malformed", task_ids=ids[:1], k=1, max_turns=2,
                             engine=engine)
    floods = run_rollouts(ws, agent="terminus-2", replay="floods", task_ids=ids[:1], k=1, max_turns=2, engine=engine)
    assert (malformed.ran, floods.ran, floods.skipped) == (1, 1, 0), floods.as_dict()
    frame = store.rollouts_frame(ws.db)
    assert len(set(frame["rollout_id"])) == 2
    again = run_rollouts(ws, resume=True, run_id=floods.run_id, engine=engine)
    assert (again.ran, again.skipped) == (0, 1), again.as_dict()     # resume still finds its own
