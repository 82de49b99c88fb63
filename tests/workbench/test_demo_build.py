"""The demo build: only what is missing, its progress in the status file, and what it lacks
(here: a machine with no Docker engine) said there; with Docker, its tasks, LLM-built tasks
and rollouts."""
from __future__ import annotations

import subprocess

import pytest

from pipeline.synth.llm.scripted import FAULTS
from pipeline.synth.llm.scripted_faults import DEMO_REPLAY_MODEL
from tests.pages.apptest_helpers import open_page
from workbench.demo_build import DEMO_LLM_FAULTS, DEMO_TASKS, demo_todo, ensure_demo
from workbench.demo_status import new_status, read_status, write_status
from workbench.llm.settings import load_settings
from pipeline.agents.protocol import AGENT_LABELS
from pipeline.agents.terminus2.scripted import replay_model
from workbench import demo_rollouts
from workbench.store import repairs
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store
from workbench.store import trajectory_judgements as judgements


def test_a_demo_without_docker_finishes_and_says_what_it_lacks(graph_workspace, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")   # no engine answers
    assert demo_todo(graph_workspace) == ["tasks", "llm_tasks", "rollouts"]
    ensure_demo(str(graph_workspace.root))
    status = read_status(graph_workspace.root)
    assert status.state == "done" and not status.running
    assert [(s.key, s.state) for s in status.stages] == [("tasks", "skipped"), ("llm_tasks", "skipped"),
                                                         ("rollouts", "skipped")]
    assert "no Docker engine answers" in status.stage("tasks").detail
    assert "no Docker engine answers" in status.stage("llm_tasks").detail
    assert "no Docker engine answers" in status.stage("rollouts").detail
    assert len(status.missing) == 1 and "`workbench doctor`" in status.missing[0]


def test_an_ingest_cut_short_is_run_again(demo_workspace):
    assert "ingest" not in demo_todo(demo_workspace)
    dead = subprocess.Popen(["true"])
    dead.wait()
    status = new_status(["ingest", "scenarios"], demo_workspace.runs_dir / "demo-build.log")
    status.pid = dead.pid
    status.stage("ingest").state = "running"
    write_status(demo_workspace.root, status)
    assert read_status(demo_workspace.root).interrupted
    assert demo_todo(demo_workspace)[0] == "ingest"


def test_a_second_build_does_not_start_while_one_runs(demo_workspace):
    status = new_status(["scenarios"], demo_workspace.runs_dir / "demo-build.log")
    write_status(demo_workspace.root, status)   # this test's own pid: alive
    ensure_demo(str(demo_workspace.root))
    assert read_status(demo_workspace.root).started == status.started   # untouched
    assert "scenarios" in demo_todo(demo_workspace)


def test_a_failed_docker_set_up_is_said_with_the_end_of_its_log(graph_workspace, monkeypatch, tmp_path):
    """The real scripts/setup-docker.sh installs system packages and starts dockerd, so a
    stand-in that fails as it does on a machine without root runs here."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    script = tmp_path / "setup-docker.sh"
    script.write_text("echo checking docker\necho 'no Docker engine answers; start one' >&2\nexit 1\n")
    ensure_demo(str(graph_workspace.root), docker_setup=script)
    status = read_status(graph_workspace.root)
    assert status.state == "done"
    assert [(s.key, s.state) for s in status.stages] == [("docker", "failed"), ("tasks", "skipped"),
                                                         ("llm_tasks", "skipped"), ("rollouts", "skipped")]
    docker = status.stage("docker").detail
    assert "Docker set-up failed (exit 1" in docker and "no Docker engine answers; start one" in docker


@pytest.mark.docker
@pytest.mark.timeout(1500)   # the whole demo build in Docker: ~5 min of tasks, ~6 of rollouts on a loaded machine
def test_the_demo_builds_llm_tasks_with_repairs_and_costs_without_a_key(graph_workspace, monkeypatch):
    """After the offline batch, a small LLM batch against the in-process scripted replay server:
    LLM-built tasks, repairs of each faulty artifact, one rejected after its repairs, and
    synthesis costs at the replay model's demo price. No endpoint or key in the environment."""
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    ws = graph_workspace
    ensure_demo(str(ws.root))
    status = read_status(ws.root)
    assert status.state == "done", status.error
    assert [(s.key, s.state) for s in status.stages] == [("tasks", "done"), ("llm_tasks", "done"), ("rollouts", "done")]
    assert "at the replay model's demo price" in status.stage("llm_tasks").detail
    _the_demo_has_rollouts(ws, monkeypatch, status.stage("rollouts").detail)
    run = task_store.runs(ws.db).query("provider == 'llm'").iloc[0]
    assert run["status"] == "finished"
    tasks = task_store.tasks_frame(ws.db)
    llm = tasks[tasks["provider"] == "llm"]
    assert len(tasks[tasks["provider"] == "offline"]) >= DEMO_TASKS // 2 and len(llm) >= len(DEMO_LLM_FAULTS)
    repaired = {a for t in llm["task_id"] for a in repairs.attempts_for(ws.db, t)["artifact"]}
    assert {FAULTS[f] for f in DEMO_LLM_FAULTS} <= repaired
    assert (llm["verdict"] == "rejected").sum() >= 1 and (llm["verdict"] == "accepted").sum() >= 3
    assert (llm["cost_usd"] > 0).all()
    with ws.db.read() as con:
        models = con.execute("SELECT DISTINCT model FROM llm_calls WHERE batch_id = ?", [run["run_id"]]).fetchall()
    assert models == [(DEMO_REPLAY_MODEL,)]
    assert load_settings(ws.root).base_url is None      # the workspace is left without an endpoint
    # the pages show them: synthesis cost per task and per batch, a task's repairs
    at = open_page(ws, monkeypatch, "llm_costs.py")
    per_task = next(d.value for d in at.dataframe if "verdict" in d.value.columns).set_index("task_id")
    assert set(llm["task_id"]) <= set(per_task.index) and (per_task.loc[llm["task_id"], "cost_usd"] > 0).all()
    batches = next(d.value for d in at.dataframe if "cost_per_accepted" in d.value.columns).set_index("batch_id")
    assert batches.loc[run["run_id"], "cost_per_accepted"] > 0
    rejected = llm[llm["verdict"] == "rejected"]["task_id"].iloc[0]
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(rejected).run()
    assert not at.exception, at.exception
    assert "Repairs (5)" in [t.label for t in at.tabs]
    assert demo_todo(ws) == []
    # a demo LLM batch cut short is resumed by the next build, under the same run id
    task_store.set_run_status(ws.db, run["run_id"], "cancelled", "stopped")
    assert demo_todo(ws) == ["llm_tasks"]
    ensure_demo(str(ws.root))
    assert task_store.get_run(ws.db, run["run_id"])["status"] == "finished"
    assert len(task_store.runs(ws.db).query("provider == 'llm'")) == 1
    # a demo rollout batch cut short is resumed under its own run id, and runs nothing done before
    n = len(ro_store.rollouts_frame(ws.db))
    ro_store.set_run_status(ws.db, "demo-nop", "cancelled", "stopped")
    assert demo_todo(ws) == ["rollouts"]
    ensure_demo(str(ws.root))
    assert ro_store.get_run(ws.db, "demo-nop")["status"] == "done" and len(ro_store.rollouts_frame(ws.db)) == n


def _the_demo_has_rollouts(ws, monkeypatch, detail: str) -> None:
    """Oracle, nop and ablation rollouts (k = 3) on up to 10 accepted tasks of both providers, terminus-2 against the
    scripted model on a few (solved) and on one more (never completed: sent to the scripted
    trajectory judge, too hard); labelled as what they are; the rollout pages show them."""
    accepted = set(task_store.accepted_tasks(ws.db)["task_id"])
    frame = ro_store.rollouts_frame(ws.db)
    per = frame.groupby(["agent", "task_id"]).size()
    probed = set(per["oracle"].index)
    assert probed <= accepted and len(probed) == min(len(accepted), demo_rollouts.MAX_TASKS)
    assert {"offline", "llm"} <= set(frame[frame["task_id"].isin(probed)]["provider"])
    for agent in ("oracle", "nop", "ablation"):
        assert set(per[agent].index) == probed and (per[agent] == demo_rollouts.K).all(), agent
    by_agent = frame.groupby("agent")["passed"].mean()
    assert by_agent["oracle"] == 1.0 and by_agent["nop"] == 0.0
    assert set(frame["agent_label"]) >= {AGENT_LABELS["ablation"], AGENT_LABELS["nop"]}
    ablation = ro_store.test_outcomes(ws.db).query("agent == 'ablation'")
    assert (ablation["outcome"] == "failed").any() and (ablation["outcome"] == "passed").any()   # per-test data
    t2 = frame[frame["agent"] == "terminus-2"]
    solved = t2[t2["run_id"] == "demo-terminus2"]
    stuck = t2[t2["run_id"] == "demo-terminus2-stuck"]
    # one model name per scripted behaviour: the pages keep the solving and the stuck test double apart
    assert set(solved["model"]) == {replay_model("oracle")} and set(stuck["model"]) == {replay_model("never_completes")}
    assert len(solved) == demo_rollouts.N_TERMINUS_TASKS * demo_rollouts.K and solved["passed"].all()
    assert len(stuck) == demo_rollouts.K and set(stuck["failure_class"]) == {"never_completed"}
    [judged] = judgements.judgements(ws.db).itertuples()
    assert judged.task_id == stuck["task_id"].iloc[0] and judged.verdict == "too_hard"
    assert judged.model == "scripted-trajectory-judge"
    assert "scripted test model" in detail and "test double" in detail
    for page in ("difficulty.py", "failures.py"):
        open_page(ws, monkeypatch, page)
