"""The Rollouts page through AppTest: the empty workspace, the launch form per agent (the scripted
replay model offered as a labelled test double when no endpoint is configured), the batches
list and a finished batch, a dead batch process, live progress and cancel of a running one, and a
real launch through the form."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from analysis import rollout_runs as rv
from pipeline.agents.protocol import AGENT_LABELS, AGENTS
from pipeline.rollouts import jobs
from tests.pages.apptest_helpers import (button, cancel_stops, codes, frame, open_page, stand_in_batch,
                                         wait_for_exit)
from tests.pages.rollouts_fixture import RUNS, TASKS, make_rollouts_fixture
from workbench.llm.settings import save_settings
from workbench.store import rollouts as ro_store


@pytest.fixture
def rollouts_ws(graph_workspace):
    return graph_workspace, make_rollouts_fixture(graph_workspace)


def _progress(at) -> list[str]:
    return [el.proto.text for el in at.get("progress")]


def test_the_empty_workspace_says_what_a_batch_needs(workspace, monkeypatch):
    at = open_page(workspace, monkeypatch, "rollouts.py")
    assert any("keeps going when you close this tab" in m.value for m in at.markdown)
    assert any("No accepted tasks yet" in i.value and "[Synthesis page](synthesis)" in i.value for i in at.info)
    assert any("No rollout batches yet" in i.value and "workbench rollout --accepted --agent oracle -k 3" in i.value
               for i in at.info)
    assert not at.get("form")


def test_the_form_adapts_to_the_agent_and_offers_the_replay_model_as_a_test_double(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "rollouts.py")
    agent = at.selectbox(key="ro_agent")
    assert agent.options == [AGENT_LABELS[a] for a in AGENTS] and agent.value == "nop"
    assert at.number_input(key="ro_temperature").disabled
    assert at.radio(key="ro_scope").options == [f"every accepted task ({len(TASKS)})", "a selection"]
    agent.set_value("ablation").run()
    assert any(AGENT_LABELS["ablation"] in c.value and "No LLM" in c.value for c in at.caption)
    at.selectbox(key="ro_agent").set_value("terminus-2").run()
    assert not at.number_input(key="ro_temperature").disabled
    warning = next(w.value for w in at.warning if "No LLM endpoint is configured" in w.value)
    assert rv.REPLAY_MODEL in warning and "test double" in warning and "not an LLM" in warning
    replay = at.selectbox(key="ro_replay")
    assert replay.options == list(rv.BEHAVIOURS) and replay.label.endswith("(test double)")
    # a selection with nothing picked is refused before anything starts
    at.radio(key="ro_scope").set_value("selection")
    button(at, "ro_launch").click().run()
    assert any("Pick at least one task" in e.value for e in at.error)
    assert len(ro_store.runs(ws.db)) == len(RUNS)


def test_the_batches_list_and_a_finished_batch(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "rollouts.py")
    table = frame(at, "run_id", "agent", "status", "rollouts", "passed")
    assert set(table["run_id"]) == set(RUNS.values()) and set(table["status"]) == {"done"}
    ablation = table[table["run_id"] == RUNS[("ablation", None)]].iloc[0]
    assert ablation["agent"] == AGENT_LABELS["ablation"]
    assert int(ablation["rollouts"]) == len(fx.of(agent="ablation"))
    assert int(ablation["passed"]) == sum(r["passed"] for r in fx.of(agent="ablation"))
    at.selectbox(key="ro_run").set_value(RUNS[("ablation", None)]).run()
    assert any(s.value.startswith("Finished.") for s in at.success)
    assert any("keeps no log file" in c.value for c in at.caption)
    assert not any(b.key == "ro_cancel" for b in at.button)


def test_a_batch_against_the_scripted_replay_model_says_test_double_where_the_model_column_is_cut(workspace,
                                                                                                monkeypatch):
    """Issue 22.7: the model column cut "scripted-terminus:oracle (test double)" to "scripted…"; the
    agent column says the batch played a test double, and the model and the picker say it too."""
    ws = workspace
    ro_store.create_run(ws.db, "ro-double1", agent="terminus-2", model="scripted-terminus:oracle (test double)", k=1,
                        concurrency=1, n_tasks=1, params={})
    ro_store.set_run_status(ws.db, "ro-double1", "done")
    at = open_page(ws, monkeypatch, "rollouts.py")
    row = frame(at, "run_id", "agent", "model").iloc[0]
    assert "test double" in row["agent"] and "LLM agent" not in row["agent"]
    assert row["model"] == "scripted-terminus:oracle (test double)"
    assert "(test double)" in at.selectbox(key="ro_run").format_func("ro-double1")


def test_a_batch_whose_process_died_reads_interrupted_with_the_resume_command(workspace, monkeypatch):
    ws = workspace
    proc = subprocess.Popen(["true"])
    proc.wait()
    ro_store.create_run(ws.db, "ro-dead01", agent="oracle", model=None, k=3, concurrency=2, n_tasks=2, params={})
    ro_store.set_run_status(ws.db, "ro-dead01", "running", pid=proc.pid)
    at = open_page(ws, monkeypatch, "rollouts.py")
    assert frame(at, "run_id", "status")["status"].tolist() == ["interrupted"]
    warning = next(w.value for w in at.warning if w.value.startswith("Interrupted"))
    assert f"({proc.pid}) is gone" in warning and f"workbench rollout --workspace {ws.root} --resume ro-dead01" in warning
    assert ro_store.get_run(ws.db, "ro-dead01")["status"] == "running"   # the page only reads


def test_a_running_batch_shows_live_progress_and_cancel_stops_its_process(workspace, monkeypatch):
    ws = workspace
    with stand_in_batch() as proc:
        ro_store.create_run(ws.db, "ro-live01", agent="ablation", model=None, k=2, concurrency=2, n_tasks=3, params={})
        ro_store.set_run_status(ws.db, "ro-live01", "running", pid=proc.pid)
        ro_store.set_run_progress(ws.db, "ro-live01", {"total": 6, "done": 3, "ran": 2, "skipped": 1, "passed": 1,
                                                       "failed": 1, "not_run": 0}, "running: 3 of 6")
        (ws.runs_dir / "ro-live01").mkdir()
        (ws.runs_dir / "ro-live01" / jobs.LOG_NAME).write_text("rollout 1 of 6\nLIVE-ROLLOUT-LOG\n")
        at = open_page(ws, monkeypatch, "rollouts.py")
        assert frame(at, "run_id", "status")["status"].tolist() == ["running"]
        assert any(i.value.startswith(f"Running (process {proc.pid}). It continues if you close this tab")
                   for i in at.info)
        assert _progress(at) == ["rollouts finished: 3 / 6 (1 already stored, skipped)", "passed: 1 of 2 run"]
        assert any("LIVE-ROLLOUT-LOG" in c for c in codes(at))
        cancel_stops(at, "ro_cancel", proc)


def test_launch_starts_a_background_batch_and_the_page_follows_it(rollouts_ws, monkeypatch):
    """A real launch through the form: the picked task's bundle is gone from disk, so the batch
    process refuses it at once (no container is started) and the page shows how it ended."""
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "rollouts.py")
    at.selectbox(key="ro_agent").set_value("oracle").run()
    target = TASKS[1].task_id
    shutil.rmtree(ws.root / "tasks" / target)
    at.radio(key="ro_scope").set_value("selection")
    at.multiselect(key="ro_tasks").set_value([target])
    at.number_input(key="ro_k").set_value(2)
    button(at, "ro_launch").click().run()
    assert not at.exception, at.exception
    runs = ro_store.runs(ws.db)
    new = runs[~runs["run_id"].isin(RUNS.values())]
    assert len(new) == 1
    run = new.iloc[0]
    assert (run["agent"], int(run["k"])) == ("oracle", 2)
    assert any(s.value == f"Started run {run['run_id']} (oracle) in the background." for s in at.success)
    assert at.selectbox(key="ro_run").value == run["run_id"]
    wait_for_exit(ws, ro_store.get_run(ws.db, run["run_id"]))
    at.run()
    assert not at.exception, at.exception
    table = frame(at, "run_id", "status")
    status = table.set_index("run_id").loc[run["run_id"], "status"]
    assert status in ("failed", "interrupted"), status
    log = jobs.log_tail(ws, run["run_id"])
    assert f"--tasks {target}" in log and target in log.split("\n", 1)[1]   # the command, then why it stopped
    assert log.rstrip("\n") in codes(at)


def test_with_an_endpoint_terminus2_takes_a_model_and_the_replay_model_is_an_opt_in(rollouts_ws, monkeypatch):
    ws, _ = rollouts_ws
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_BUDGET_USD", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    save_settings(ws.root, base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", concurrency=4, budget_usd=None)
    at = open_page(ws, monkeypatch, "rollouts.py")
    at.selectbox(key="ro_agent").set_value("terminus-2").run()
    assert at.text_input(key="ro_model").value == "gpt-4o-mini"
    assert not any("No LLM endpoint is configured" in w.value for w in at.warning)
    use = at.checkbox(key="ro_use_replay")
    assert not use.value and "a test double, not an LLM" in use.label and rv.REPLAY_MODEL in use.label
    assert not [s for s in at.selectbox if s.key == "ro_replay"]     # only once the double is opted into
    use.check().run()        # outside the form, so the form changes at once
    assert at.selectbox(key="ro_replay").value == rv.BEHAVIOURS[0]
    assert not [t for t in at.text_input if t.key == "ro_model"]


def test_the_executor_choice_goes_to_the_launched_batch_and_terminus2_on_ray_is_refused(rollouts_ws, monkeypatch):
    """A launch on Ray at an address: the batch process is started with them (its bundle is gone,
    so it is refused before any cluster is asked); noisy-oracle takes its p; terminus-2 cannot
    run on Ray and the form says so, starting nothing."""
    ws, fx = rollouts_ws
    at = open_page(ws, monkeypatch, "rollouts.py")
    assert at.radio(key="ro_executor").options == ["local", "ray"] and at.radio(key="ro_executor").value == "local"
    at.selectbox(key="ro_agent").set_value("noisy-oracle").run()
    assert any("simulated, not a model" in c.value for c in at.caption)
    at.number_input(key="ro_p").set_value(0.6)
    target = TASKS[1].task_id
    shutil.rmtree(ws.root / "tasks" / target)
    at.radio(key="ro_scope").set_value("selection")
    at.multiselect(key="ro_tasks").set_value([target])
    at.radio(key="ro_executor").set_value("ray")
    at.text_input(key="ro_ray_address").set_value(" 127.0.0.1:6399 ")
    button(at, "ro_launch").click().run()
    assert not at.exception, at.exception
    runs = ro_store.runs(ws.db)
    run = runs[~runs["run_id"].isin(RUNS.values())].iloc[0]
    wait_for_exit(ws, ro_store.get_run(ws.db, run["run_id"]))
    command = jobs.log_tail(ws, run["run_id"]).split("\n", 1)[0]
    assert "--agent noisy-oracle" in command and "--p 0.6" in command
    assert "--executor ray --ray-address 127.0.0.1:6399" in command
    before = len(ro_store.runs(ws.db))
    at.selectbox(key="ro_agent").set_value("terminus-2").run()
    button(at, "ro_launch").click().run()
    assert any("cannot run with --executor ray" in e.value for e in at.error)
    assert len(ro_store.runs(ws.db)) == before
