"""The demo build: only what is missing, its progress in the status file, and what it lacks
(here: a machine with no Docker engine) said there; with Docker, its tasks, LLM-built tasks
and rollouts."""
from __future__ import annotations

import shutil
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
from pipeline.agents.factory import make_agent
from pipeline.evolve.models import OPERATORS, operator_for, root_of, variant_id
from workbench import demo_evolve, demo_rollouts
from workbench.store import lineage, repairs
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store
from workbench.store import trajectory_judgements as judgements
from workbench.workspace import Workspace


def test_a_demo_without_docker_finishes_and_says_what_it_lacks(graph_workspace, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")   # no engine answers
    assert demo_todo(graph_workspace) == ["tasks", "llm_tasks", "rollouts", "evolution"]
    ensure_demo(str(graph_workspace.root))
    status = read_status(graph_workspace.root)
    assert status.state == "done" and not status.running
    assert [(s.key, s.state) for s in status.stages] == [("tasks", "skipped"), ("llm_tasks", "skipped"),
                                                         ("rollouts", "skipped"), ("evolution", "skipped")]
    for key in ("tasks", "llm_tasks", "rollouts", "evolution"):
        assert "no Docker engine answers" in status.stage(key).detail, key
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
                                                         ("llm_tasks", "skipped"), ("rollouts", "skipped"),
                                                         ("evolution", "skipped")]
    docker = status.stage("docker").detail
    assert "Docker set-up failed (exit 1" in docker and "no Docker engine answers; start one" in docker


def _copy(root, tmp_path) -> Workspace:
    dst = tmp_path / "built-demo"
    shutil.copytree(root, dst)
    return Workspace.open(dst)


# The whole demo build in Docker (the session's built_demo_workspace, made by whichever test asks first):
# ~5 min of tasks, ~6 of rollouts, ~5 of evolution on a loaded machine.
BUILD_TIMEOUT_S = 2400


@pytest.mark.docker
@pytest.mark.timeout(BUILD_TIMEOUT_S)
def test_the_demo_builds_llm_tasks_with_repairs_and_costs_without_a_key(built_demo_workspace, tmp_path, monkeypatch):
    """After the offline batch, a small LLM batch against the in-process scripted replay server:
    LLM-built tasks, repairs of each faulty artifact, one rejected after its repairs, and
    synthesis costs at the replay model's demo price. No endpoint or key in the environment."""
    ws = _copy(built_demo_workspace, tmp_path)
    status = read_status(ws.root)
    assert status.state == "done", status.error
    assert [(s.key, s.state) for s in status.stages] == [("tasks", "done"), ("llm_tasks", "done"), ("rollouts", "done"),
                                                         ("evolution", "done")]
    assert "at the replay model's demo price" in status.stage("llm_tasks").detail
    _the_demo_has_rollouts(ws, monkeypatch, status.stage("rollouts").detail)
    run = task_store.runs(ws.db).query("provider == 'llm'").iloc[0]
    assert run["status"] == "finished"
    tasks = _originals(task_store.tasks_frame(ws.db))     # the variants evolution made are checked below
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
    # a round of evolution cut short is resumed under its run id, and makes no variant again
    tried = len(lineage.lineage_frame(ws.db))
    lineage.set_run_status(ws.db, demo_evolve.EVOLVE_RUN, "cancelled", "stopped")
    assert demo_todo(ws) == ["evolution"]
    ensure_demo(str(ws.root))
    assert lineage.get_run(ws.db, demo_evolve.EVOLVE_RUN)["status"] == "done"
    assert len(lineage.lineage_frame(ws.db)) == tried and len(ro_store.rollouts_frame(ws.db)) == n


def _originals(frame):
    return frame[frame["task_id"].map(root_of) == frame["task_id"]]


def _the_demo_has_rollouts(ws, monkeypatch, detail: str) -> None:
    """Oracle, nop and ablation rollouts (k = 3) on up to 10 accepted tasks of both providers, terminus-2 against the
    scripted model on a few (solved) and on one more (never completed: sent to the scripted
    trajectory judge, too hard); labelled as what they are; the rollout pages show them."""
    accepted = set(_originals(task_store.accepted_tasks(ws.db))["task_id"])
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


@pytest.mark.docker
@pytest.mark.timeout(BUILD_TIMEOUT_S)
def test_the_demo_evolves_its_tasks_into_verified_variants_of_all_three_kinds(built_demo_workspace, tmp_path,
                                                                             monkeypatch):
    """Noisy-oracle rollouts (k = 4, simulated, not a model) put the probe tasks in all three bands;
    one round of evolution makes harder, context-switch and easier variants, verified, with lineage
    rows, rolled out by the same agent (LLM-built parents through the LLM operator against the
    scripted replay model); the Evolution page shows them."""
    ws = _copy(built_demo_workspace, tmp_path)
    detail = read_status(ws.root).stage("evolution").detail
    assert "simulated" in detail, detail
    parents = demo_rollouts.probe_tasks(ws)
    noisy = ro_store.rollouts_frame(ws.db).query("agent == 'noisy-oracle'")
    assert set(noisy["agent_label"]) == {make_agent("noisy-oracle", keep_p=demo_evolve.KEEP_P).label}
    assert "simulated, not a model" in noisy["agent_label"].iloc[0]
    first = noisy[noisy["run_id"] == demo_evolve.ROLLOUT_RUN]
    assert set(first["task_id"]) == set(parents) and (first.groupby("task_id").size() == demo_evolve.K).all()
    rates = first.groupby("task_id")["passed"].mean()
    assert {operator_for(r) for r in rates} == set(OPERATORS), rates.to_dict()     # p gives all three bands

    rows = lineage.lineage_frame(ws.db, run_id=demo_evolve.EVOLVE_RUN)
    assert set(rows["parent_id"]) == set(parents) and (rows["round"] == 1).all()
    for row in rows.itertuples():
        assert row.operator == operator_for(rates[row.parent_id]) and row.root_id == row.parent_id
        assert row.task_id == variant_id(row.parent_id, row.operator, 1)
        assert row.parent_pass_rate == pytest.approx(rates[row.parent_id])
    made = rows[rows["status"] == "made"]
    accepted = made[made["verdict"] == "accepted"]
    assert set(accepted["operator"]) == set(OPERATORS), made[["task_id", "operator", "verdict"]].to_dict("records")
    assert {"offline", "llm"} <= set(made["provider"])       # LLM-built parents went through the LLM operator
    tasks = task_store.tasks_frame(ws.db).set_index("task_id")
    for vid in made["task_id"]:
        assert (ws.root / tasks.loc[vid, "bundle_dir"] / "task.toml").is_file()
    with ws.db.read() as con:
        [(n_calls,)] = con.execute("SELECT count(*) FROM llm_calls WHERE stage = 'evolve_task'").fetchall()
    assert n_calls >= (made["provider"] == "llm").sum()
    # the accepted variants are rolled out by the same agent, k each
    rolled = noisy[noisy["task_id"].isin(accepted["task_id"])]
    assert set(rolled["task_id"]) == set(accepted["task_id"])
    assert (rolled.groupby("task_id").size() == demo_evolve.K).all()
    # the Evolution page shows the variants
    at = open_page(ws, monkeypatch, "evolution.py")
    assert not at.exception, at.exception
    shown = {str(v) for d in at.dataframe for col in d.value.columns for v in d.value[col]}
    assert set(accepted["task_id"]) <= shown
