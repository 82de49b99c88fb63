"""`workbench rollout` end to end: bad arguments are refused with a clear error and exit 2
before anything is recorded; an oracle batch and a terminus-2 batch against the scripted
replay model (a test double, said so) run in real Docker and print their summary."""
import json
import uuid

import pytest

from pipeline.agents.terminus2.scripted import replay_model
from workbench.cli import main
from workbench.store import rollouts as store
from workbench.store import tasks as task_store
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401


def _run(capsys, *argv):
    code = main(["rollout", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _no_runs(ws):
    assert store.runs(ws.db).empty


@pytest.mark.parametrize("argv, says", [
    (["--agent", "oracle"], "say which tasks: --tasks ID… or --accepted"),
    (["--accepted"], "say which agent"),
    (["--agent", "oracle", "--accepted", "--tasks", "t1"], "--tasks and --accepted exclude each other"),
    (["--agent", "oracle", "--accepted", "-k", "0"], "-k must be at least 1, got 0"),
    (["--agent", "oracle", "--accepted", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["--agent", "terminus-2", "--accepted", "--temperature", "-1"], "--temperature must be 0 or more"),
    (["--agent", "oracle", "--accepted", "--model", "gpt-x"], "--model and --replay are for terminus-2 only"),
    (["--agent", "nop", "--accepted", "--replay", "oracle"], "--model and --replay are for terminus-2 only"),
    (["--agent", "nop", "--accepted", "--temperature", "0.7"], "--temperature and --max-turns are for terminus-2"),
    (["--agent", "ablation", "--accepted", "--max-turns", "5"], "--temperature and --max-turns are for terminus-2"),
    (["--agent", "terminus-2", "--accepted", "--replay", "oracle", "--model", "m"], "--model cannot be given"),
    (["--resume", "rollout-x", "--agent", "oracle"], "--agent cannot be given with it"),
    (["--resume", "rollout-x", "--p", "0.5"], "--p cannot be given with it"),
    (["--agent", "oracle", "--accepted", "--p", "0.5"], "--p is noisy-oracle's probability"),
    (["--agent", "noisy-oracle", "--accepted", "--p", "-0.1"], "--p must be between 0 and 1, got -0.1"),
    (["--agent", "oracle", "--accepted", "--ray-address", "auto"], "--ray-address 'auto' is only for --executor ray"),
    (["--agent", "terminus-2", "--accepted", "--replay", "oracle", "--executor", "ray"],
     "--agent terminus-2 cannot run with --executor ray yet"),
])
def test_bad_arguments_are_refused_with_exit_2(workspace, capsys, argv, says):
    code, _, err = _run(capsys, "--workspace", str(workspace.root), *argv)
    assert code == 2 and says in err.replace("\n", " ")
    _no_runs(workspace)


def test_an_unknown_agent_or_a_bad_budget_is_refused_by_the_parser(workspace, capsys):
    for argv in (["--agent", "gpt"], ["--agent", "oracle", "--accepted", "--budget-usd", "-1"]):
        with pytest.raises(SystemExit) as exc:
            main(["rollout", "--workspace", str(workspace.root), *argv])
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'gpt'" in err and "must be 0 or more" in err


def test_unknown_tasks_no_accepted_tasks_and_unknown_runs_are_told(workspace, capsys, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", "")
    ws = str(workspace.root)
    code, _, err = _run(capsys, "--workspace", ws, "--agent", "oracle", "--tasks", "nope")
    assert code == 2 and "unknown task id(s): nope" in err
    code, _, err = _run(capsys, "--workspace", ws, "--agent", "oracle", "--accepted")
    assert code == 2 and "no accepted tasks in this workspace" in err
    code, _, err = _run(capsys, "--workspace", ws, "--resume", "rollout-missing")
    assert code == 2 and "no rollout run 'rollout-missing'" in err
    code, _, err = _run(capsys, "--workspace", ws, "--agent", "terminus-2", "--accepted")
    assert code == 2 and "needs an LLM endpoint" in err and "--replay oracle" in err
    code, _, err = _run(capsys, "--workspace", ws, "--agent", "terminus-2", "--accepted", "--replay", "chatty")
    assert code == 2 and "--replay 'chatty': choose one of oracle" in err
    _no_runs(workspace)


@pytest.mark.docker
def test_noisy_oracle_takes_its_p_and_the_run_keeps_p_and_executor_for_resume(tasks_ws, capsys):
    ws, ids = tasks_ws
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--agent", "noisy-oracle", "--p", "0", "--tasks",
                          ids[0], "-k", "1", "--run-id", "cli-noisy", "--executor", "local", "--json")
    report = json.loads(out)
    assert code == 0, err
    assert (report["ran"], report["passed"]) == (1, 0)                 # p = 0: no solution step kept
    assert "simulated, not a model" in report["agent_label"] and report["agent_label"].endswith("p=0")
    run = store.get_run(ws.db, "cli-noisy")
    params = json.loads(run["params"])
    assert (params["keep_p"], params["executor"], params["ray_address"]) == (0.0, "local", None)
    assert "simulated, not a model" in store.rollouts_frame(ws.db, "cli-noisy").agent_label[0]
    code, out, _ = _run(capsys, "--workspace", str(ws.root), "--resume", "cli-noisy", "--json")
    assert code == 0 and (json.loads(out)["ran"], json.loads(out)["skipped"]) == (0, 1)   # same p: same work
    code, out, _ = _run(capsys, "--workspace", str(ws.root), "--resume", "cli-noisy")
    assert code == 0 and "Run cli-noisy done: noisy-oracle (each solution step kept with probability p; simulated" \
        in out.replace("\n", " ")


@pytest.mark.docker
def test_oracle_batch_prints_its_summary_and_json(tasks_ws, capsys):
    ws, ids = tasks_ws
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--agent", "oracle", "--tasks", ids[0], "-k", "2",
                          "--run-id", "cli-oracle", "--no-progress")
    assert code == 0, err
    flat = out.replace("\n", " ")
    assert "Run cli-oracle done: oracle (the task's own solution); 2 of 2 rollouts stored (2 run now, 0 done before); pass@1 100%" in flat
    assert "failures: none" in flat and str(ws.root / "runs/cli-oracle/rollouts") in flat
    assert "progress done=2 total=2 passed=2" in out
    code, out, _ = _run(capsys, "--workspace", str(ws.root), "--resume", "cli-oracle", "--json")
    report = json.loads(out)
    assert code == 0 and (report["ran"], report["skipped"], report["pass_at_1"]) == (0, 2, 1.0)
    code, _, err = _run(capsys, "--workspace", str(ws.root), "--agent", "oracle", "--tasks", ids[0],
                        "--run-id", "cli-oracle")
    assert code == 2 and "run id 'cli-oracle' is taken" in err and "--resume cli-oracle" in err


@pytest.mark.docker
def test_a_batch_whose_task_images_cannot_build_fails_with_exit_1(tasks_ws, capsys):
    """Nothing stored is no result: the run says failed, the exit code 1, and why per task."""
    ws, ids = tasks_ws
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    dockerfile = ws.root / frame.loc[ids[0], "bundle_dir"] / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + f"\nRUN exit 3  # {uuid.uuid4().hex}\n")
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--agent", "nop", "--tasks", ids[0], "-k", "1",
                          "--run-id", "cli-nobuild", "--no-progress")
    assert code == 1, err + out
    run = store.get_run(ws.db, "cli-nobuild")
    assert run["status"] == "failed" and run["message"].startswith("no rollout could run: 1 not run")
    assert ids[0] in (out + err) and store.finished_keys(ws.db) == set()


@pytest.mark.docker
def test_terminus2_against_the_scripted_replay_model_completes_k3(tasks_ws, capsys, monkeypatch):
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)    # no endpoint: the replay server is the model
    ws, ids = tasks_ws
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--agent", "terminus-2", "--replay", "oracle",
                          "--tasks", ids[0], "-k", "3", "--run-id", "cli-t2", "--no-progress")
    assert code == 0, err + out
    assert "TEST DOUBLE" in err.replace("\n", " ")                   # said plainly, before and after
    assert "3 of 3 rollouts stored" in out.replace("\n", " ") and "pass@1 100%" in out.replace("\n", " ")
    frame = store.rollouts_frame(ws.db, "cli-t2")
    assert len(frame) == 3 and frame.passed.all() and set(frame.model) == {replay_model("oracle")}
    assert (frame.turns >= 2).all() and (frame.prompt_tokens > 0).all()
    with ws.db.read() as con:
        calls = con.execute("SELECT DISTINCT stage, item FROM llm_calls WHERE batch_id = 'cli-t2'").fetchall()
    assert {s for s, _ in calls} == {"agent_terminus2"} and {i for _, i in calls} == set(frame.rollout_id)
    for row in frame.itertuples():
        assert (ws.root / row.folder / "recording.cast").read_text().startswith("{")   # asciinema v2 header


@pytest.mark.docker
def test_an_unsolved_terminus2_task_goes_to_the_trajectory_judge_after_the_batch(tasks_ws, capsys, monkeypatch):
    """The hook after a batch: a model that never completes leaves the task unsolved over 3
    rollouts, and the (scripted, labelled) trajectory judge gives it a verdict; --no-judge skips it."""
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    ws, ids = tasks_ws
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--agent", "terminus-2", "--replay", "never_completes",
                          "--max-turns", "2", "--tasks", ids[0], "-k", "3", "--run-id", "cli-unsolved",
                          "--no-progress")
    assert code == 0, err + out
    frame = store.rollouts_frame(ws.db, "cli-unsolved")
    assert len(frame) == 3 and set(frame.failure_class) == {"never_completed"}
    assert "trajectory judge: 1 unsolved task(s); judged 1" in out.replace("\n", " ")
    with ws.db.read() as con:
        verdicts = con.execute("SELECT task_id, verdict FROM trajectory_judgements").fetchall()
    assert [t for t, _ in verdicts] == [ids[0]]
    code, out, _ = _run(capsys, "--workspace", str(ws.root), "--resume", "cli-unsolved", "--no-judge")
    assert code == 0 and "trajectory judge" not in out


@pytest.mark.docker
def test_ctrl_c_cancels_the_batch_cleanly_and_says_how_to_resume(tasks_ws):
    import signal
    import subprocess
    import sys

    from workbench.config import REPO_ROOT
    from workbench.sandbox.engine import Engine
    ws, ids = tasks_ws
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "rollout", "--workspace", str(ws.root),
                             "--agent", "oracle", "--tasks", *ids, "-k", "3", "--concurrency", "1",
                             "--run-id", "cli-int", "--no-progress"],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("progress done=1 "):
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=120)
    text = "".join(seen) + rest
    assert proc.returncode == 3, text
    assert "Run cli-int cancelled" in text and "workbench rollout --resume cli-int" in text.replace("\n", " ")
    run = store.get_run(ws.db, "cli-int")
    assert run["status"] == "cancelled" and 1 <= len(store.rollouts_frame(ws.db, "cli-int")) < 6
    assert Engine(sweep=False).orphaned_containers() == []


def test_the_summary_of_a_batch_against_the_scripted_replay_says_test_double_and_whose_cost_it_is(tmp_path, capsys):
    """Issue 22.4: the CLI summary of a terminus-2 batch against the replay model read "terminus-2 (LLM
    agent)" with an "LLM cost"; it now says test double, by the one rule (workbench.double_rule)."""
    from types import SimpleNamespace

    from pipeline.agents.protocol import AGENT_LABELS
    from workbench import cli_rollout
    from workbench.workspace import Workspace
    report = SimpleNamespace(run_id="r1", status="done", agent="terminus-2", agent_label=AGENT_LABELS["terminus-2"],
                             model=replay_model("oracle"), seconds=1.0, cost_usd=0.0, message="", notes=[],
                             runs_folder="runs/r1/rollouts", summary=lambda: "1 passed of 1")
    cli_rollout._print_report(Workspace.open(tmp_path / "ws"), report)
    text = " ".join(capsys.readouterr().out.split())
    assert "LLM agent" not in text and "terminus-2 · test double" in text
    assert "LLM cost $0.0000 (a test double's cost" in text
