"""terminus-2: its model, label and config key; and in real trials: real Docker containers, the real tmux Terminal, the real LLM
client over HTTP against the replay server playing the scripted models. The oracle-typing model
solves a demo task (reward 1); the malformed, never-completing, flooding and early-completing
models end as they should, with bounded output and trajectories Harbor's validator accepts."""
from __future__ import annotations

import json
import shutil
import uuid

import pytest

from pipeline.agents.factory import make_agent
from pipeline.agents.terminus2 import messages as msg
from pipeline.agents.terminus2.episode import MAX_PARSE_ERRORS_IN_ROW
from pipeline.agents.terminus2.scripted import (REPLAY_MODEL, scripted_terminus_rules, solution_steps,
                                                solutions_by_instruction)
from pipeline.synth.compose import synthesize_task
from pipeline.trajectories.atif import validate_with_harbor
from pipeline.trials.trial import run_trial
from tests.pipeline.synth.llm.demo_paths import tool_paths
from tests.workbench.llm.conftest import make_settings
from workbench.llm.call_log import CallLog
from workbench.llm.caller import LLMCaller
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer, Script
from workbench.llm.settings import Price
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.task_toml import parse as parse_task_toml
from workbench.sandbox.terminal import OUTPUT_CAP_BYTES
from workbench.workspace import Workspace

OBSERVATION_CAP = OUTPUT_CAP_BYTES + 1_000     # the terminal's cap plus our headings and question


@pytest.fixture(scope="module")
def demo_task(graph_workspace_template, tmp_path_factory, engine):
    """A demo task of three steps, its image built, and a workspace for the LLM call log."""
    root = tmp_path_factory.mktemp("t2") / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    pid, ctx = next(iter(tool_paths(ws, 1, steps=3).items()))
    bundle = synthesize_task(ctx.path_steps, 0, base_image_name(), path_id=pid).bundle
    cfg = parse_task_toml(bundle.text("task.toml"))
    built = engine.build(bundle.under("environment"), bundle.environment_hash(), cfg.build_timeout_sec)
    assert built.ok, built.reason
    return ws, bundle, cfg, built.image


def _rollout(engine, demo_task, behaviour, *, max_turns=None, agent_timeout_s=None):
    ws, bundle, cfg, image = demo_task
    if agent_timeout_s is not None:
        cfg = cfg.model_copy(update={"agent_timeout_sec": agent_timeout_s})
    rules = scripted_terminus_rules(solutions_by_instruction([bundle]), behaviour)
    trial_id = f"t2-{behaviour}-{uuid.uuid4().hex[:8]}"
    with ReplayServer(Script(rules)) as srv:
        settings = make_settings(srv, model=REPLAY_MODEL, prices={REPLAY_MODEL: Price(input_per_mtok=1.0,
                                                                                      output_per_mtok=2.0)})
        caller = LLMCaller(LLMClient(settings, log=CallLog(ws.db), batch_id="run-t2"))
        try:
            agent = make_agent("terminus-2", caller=caller, model=REPLAY_MODEL, max_turns=max_turns)
            trial = run_trial(engine, image, bundle, cfg, agent, trial_id=trial_id, task_id=cfg.name,
                              run_id="run-t2")
        finally:
            caller.close()
    return trial, trial_id


def _valid(tmp_path, trajectory) -> list[dict]:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(trajectory))
    assert validate_with_harbor(path) == []
    return [s for s in trajectory["steps"] if s["source"] == "agent"]


def _observations(steps) -> list[str]:
    return [r.get("content") or "" for s in steps for r in s.get("observation", {}).get("results", [])]


@pytest.mark.docker
def test_the_oracle_typing_model_solves_a_demo_task(engine, demo_task, tmp_path):
    ws, bundle, *_ = demo_task
    trial, trial_id = _rollout(engine, demo_task, "oracle")
    a = trial.agent
    assert a.status == "completed", (a.error, a.log[-3000:])
    assert trial.reward == 1 and trial.passed and all(t["outcome"] == "passed" for t in trial.tests)
    n_steps = len(solution_steps(bundle.text("solution/solve.sh")))
    assert n_steps == 3 and a.turns == 1 + n_steps + 2            # look, the steps, complete, confirm
    steps = _valid(tmp_path, a.trajectory)
    assert len(steps) == a.turns and all("exit 0" in o for o in _observations(steps)[1:1 + n_steps])
    assert a.prompt_tokens > 0 and a.cost_usd > 0 and a.llm_s > 0
    assert 0 <= a.overhead_s < a.agent_s and a.details["waited_s"] > 0
    assert a.details["terminal"]["calls"] >= a.turns               # a look into the container per command
    header = json.loads(a.recording.splitlines()[0])
    assert header["version"] == 2 and len(a.recording.splitlines()) > 1
    with ws.db.read() as con:
        rows = con.execute("SELECT stage, count(*), sum(cost_usd) FROM llm_calls WHERE item = ? GROUP BY stage",
                           [trial_id]).fetchall()
    assert rows[0][0] == msg.STAGE and rows[0][1] == a.turns and rows[0][2] == pytest.approx(a.cost_usd)


@pytest.mark.docker
def test_early_completion_is_questioned_and_the_work_then_done(engine, demo_task, tmp_path):
    trial, _ = _rollout(engine, demo_task, "early_complete")
    a = trial.agent
    assert a.status == "completed" and trial.reward == 1, (a.error, a.log[-3000:])
    steps = _valid(tmp_path, a.trajectory)
    assert msg.CONFIRM_QUESTION in _observations(steps)[0]         # the first completion only asked


@pytest.mark.docker
def test_malformed_replies_end_as_parse_errors_and_the_tests_still_run(engine, demo_task, tmp_path):
    trial, _ = _rollout(engine, demo_task, "malformed")
    a = trial.agent
    assert a.status == "parse_errors" and trial.failure_class == "parse_errors"
    assert a.parse_errors == a.turns == MAX_PARSE_ERRORS_IN_ROW
    assert trial.tests and trial.reward == 0                       # nothing ran, the tests say so
    assert all(o.startswith(msg.PARSE_ERROR_HEAD) for o in _observations(_valid(tmp_path, a.trajectory)))


@pytest.mark.docker
def test_a_model_that_never_completes_is_stopped_at_max_turns(engine, demo_task, tmp_path):
    trial, _ = _rollout(engine, demo_task, "never_completes", max_turns=4)
    a = trial.agent
    assert a.status == "never_completed" and trial.failure_class == "never_completed" and a.turns == 4
    assert "still working 4" in _observations(_valid(tmp_path, a.trajectory))[-1]


@pytest.mark.docker
def test_a_flood_of_output_reaches_the_model_capped_and_the_container_survives(engine, demo_task, tmp_path):
    trial, _ = _rollout(engine, demo_task, "floods")
    a = trial.agent
    assert a.status == "completed", (a.error, a.log[-3000:])
    assert trial.failure_class == "test_assertion" and trial.tests  # the container lived on to the tests
    observations = _observations(_valid(tmp_path, a.trajectory))
    assert all(len(o.encode()) <= OBSERVATION_CAP for o in observations)
    assert len(a.log) <= 250_000 and len(json.dumps(a.trajectory)) < 200_000


@pytest.mark.docker
def test_the_agent_timeout_ends_the_rollout_and_keeps_what_happened(engine, demo_task, tmp_path):
    trial, _ = _rollout(engine, demo_task, "never_completes", agent_timeout_s=4)
    a = trial.agent
    assert a.status == "timeout" and trial.failure_class == "timeout" and "4 s" in a.error
    assert a.agent_s < 4 + 5 and a.turns >= 2                      # cut by the agent, not the trial's margin
    assert trial.tests                                             # the tests still ran after it
    steps = _valid(tmp_path, a.trajectory)
    assert len(steps) == a.turns and "still working 1" in _observations(steps)[0]
    assert "timeout" in a.trajectory["notes"] and a.recording


def test_the_agent_says_its_model_and_config_and_refuses_a_second_model_name():
    with ReplayServer() as srv:
        caller = LLMCaller(LLMClient(make_settings(srv, model=REPLAY_MODEL)))
        try:
            agent = make_agent("terminus-2", caller=caller, temperature=0.7, max_turns=7)
            assert agent.model == REPLAY_MODEL and agent.label.endswith(f"· {REPLAY_MODEL} (test double)")
            assert "LLM agent" not in agent.label       # a replay model is a test double (workbench.double_rule)
            key = agent.config_key()
            assert key.startswith(f"terminus-2@1:{REPLAY_MODEL}:t=0.7:turns=7:prompt=")
            assert key != make_agent("terminus-2", caller=caller, temperature=0.0, max_turns=7).config_key()
            with pytest.raises(ValueError, match="model 'gpt-4o' but the LLM client is set up for"):
                make_agent("terminus-2", caller=caller, model="gpt-4o")
            with pytest.raises(ValueError, match="max_turns must be >= 1"):
                make_agent("terminus-2", caller=caller, max_turns=0)
        finally:
            caller.close()


@pytest.mark.docker
def test_the_recording_is_read_from_the_container_once_as_the_terminal_closes(engine):
    from pipeline.agents.terminus2.agent import _recording_and_close
    from workbench.sandbox.engine import Limits
    from workbench.sandbox.terminal import Terminal
    with engine.container(base_image_name(), Limits()) as box:
        term = Terminal.open(box)
        term.send_keys("echo recorded\n")
        term.wait(10)
        reads, read_files = [], box.read_files

        def counted(*args, **kwargs):          # a spy on our own Box (not Docker's client)
            reads.append(args[0])
            return read_files(*args, **kwargs)
        box.read_files = counted
        recording = _recording_and_close(term)
        assert len(reads) == 1 and "recorded" in recording
        assert box.run("pgrep -x tmux || echo none", 10).output == "none\n"
