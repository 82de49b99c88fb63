"""pipeline.trials.trial.run_trial with real Docker: the oracle, nop and ablation agents on a
demo task, an agent that overruns its limit, one that plants a reward, one that raises, a
cancelled batch — and no container left after any of them."""
from __future__ import annotations

import json
import shutil
import threading
import time

import pytest

from pipeline.agents.factory import make_agent
from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.synth.batch import run_synth
from pipeline.trajectories.atif import validate_with_harbor
from pipeline.trials.agent_phase import AGENT_MARGIN_S
from pipeline.trials.trial import run_trial
from pipeline.verify.docker_checks import check_build
from tests.helpers import sum_bundle
from workbench.sandbox.bundle import read_bundle
from workbench.sandbox.ceilings import CEILINGS
from workbench.sandbox.task_toml import parse
from workbench.store import tasks as store
from workbench.workspace import Workspace

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def demo_task(graph_workspace_template, tmp_path_factory):
    """One verified offline task of the demo graph (≥ 2 steps): (bundle, cfg, image, task_id)."""
    root = tmp_path_factory.mktemp("trial") / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    run_synth(ws, n_paths=1, seed=3, concurrency=1)
    rows = store.tasks_frame(ws.db)
    row = rows[(rows.verdict == "accepted") & (rows.n_steps >= 2)].iloc[0]
    bundle = read_bundle(ws.root / row.bundle_dir)
    return bundle, parse(bundle.text("task.toml")), row.image, row.task_id


@pytest.fixture(scope="module")
def sum_task(engine):
    """The small sum task with a short agent limit: (bundle, cfg, image)."""
    bundle = sum_bundle(agent_timeout=2)
    cfg = parse(bundle.text("task.toml"))
    build, res = check_build(engine, bundle, cfg, 1.0)
    assert build.passed, build.reason
    return bundle, cfg, res.image


def _trial(engine, task, agent, **kw):
    bundle, cfg, image = task[:3]
    return run_trial(engine, image, bundle, cfg, agent, trial_id=kw.pop("trial_id", f"trial-{agent.name}"),
                     task_id="t", **kw)


def _no_container_left(engine):
    assert engine.orphaned_containers() == []     # this process's containers included


def test_the_oracle_passes_every_test_of_a_demo_task(engine, demo_task, tmp_path):
    r = _trial(engine, demo_task, make_agent("oracle"))
    assert r.passed and r.reward == 1.0 and r.failure_class is None and r.problem is None
    assert len(r.tests) >= 2 and all(t["outcome"] == "passed" for t in r.tests)
    assert r.agent.status == "completed" and r.agent.exit_code == 0
    assert {"junit.xml", "reward.txt"} <= set(r.verifier_files)           # paths inside /logs/verifier
    assert set(r.timings) == {"env_s", "agent_s", "verifier_s", "total_s"}
    assert r.timings["total_s"] >= r.timings["env_s"] + r.timings["agent_s"] + r.timings["verifier_s"] > 0
    assert "$ bash /solution/solve.sh" in r.log and "$ bash /tests/test.sh" in r.log
    (tmp_path / "trajectory.json").write_text(json.dumps(r.agent.trajectory))
    assert validate_with_harbor(tmp_path / "trajectory.json") == []
    _no_container_left(engine)


def test_nop_scores_zero_with_per_test_failures(engine, demo_task):
    r = _trial(engine, demo_task, make_agent("nop"))
    assert r.reward == 0 and r.failure_class == "test_assertion" and r.problem is None and not r.passed
    assert r.tests and all(t["outcome"] in ("failed", "error") for t in r.tests)
    _no_container_left(engine)


def test_ablation_fails_a_test_and_says_which_step_it_left_out(engine, demo_task):
    bundle = demo_task[0]
    seen = set()
    for seed in (0, 1):
        r = _trial(engine, demo_task, make_agent("ablation"), seed=seed, trial_id=f"trial-ablation-{seed}")
        left = r.agent.details["left_out"]
        assert r.agent.status == "completed" and r.failure_class == "test_assertion", (r.agent.error, r.problem)
        assert any(t["outcome"] in ("failed", "error") for t in r.tests) and r.reward == 0
        assert left["marked"] and left["label"].startswith(f"step {left['step']} (")
        assert left["text"].splitlines()[0].strip().startswith("# --- step")
        assert left["text"] in bundle.text("solution/solve.sh")
        assert r.agent.details["steps"] >= 2
        seen.add(left["step"])
    assert seen == {1, 2}                  # seeds 0 and 1 leave out different steps
    _no_container_left(engine)


class Stubborn(ScriptedAgent):
    """Ignores its limit: waits on a command in the container for ten minutes."""
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.box.run("echo 7 > /app/sum.txt; sleep 600", 600)
        return AgentResult(status="completed")


class Hangs(ScriptedAgent):
    """Hangs in Python, outside the container, and never looks at ctx.stop."""
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        time.sleep(3600)
        return AgentResult(status="completed")


@pytest.mark.parametrize("agent", [Stubborn(), Hangs()], ids=["in-the-container", "in-python"])
def test_an_agent_past_its_limit_is_cut_off_and_the_tests_still_run(engine, sum_task, agent):
    t0 = time.monotonic()
    r = _trial(engine, sum_task, agent)
    limit = sum_task[1].agent_timeout_sec
    assert r.agent.status == "timeout" and r.failure_class == "timeout" and r.agent.details["cut_off"]
    assert f"did not end within its {limit:.0f} s limit" in r.agent.error
    assert limit + AGENT_MARGIN_S <= r.timings["agent_s"] < limit + AGENT_MARGIN_S + 12
    assert time.monotonic() - t0 < limit + AGENT_MARGIN_S + 40
    assert [t["name"] for t in r.tests] == ["test_sum"] and r.tests[0]["outcome"] == "failed"   # the tests ran
    assert r.reward == 0 and r.problem is None
    _no_container_left(engine)


def test_a_solution_stopped_at_its_limit_still_gets_its_tests_run(engine, sum_task):
    bundle = sum_bundle("echo 6 > /app/sum.txt; sleep infinity", agent_timeout=2)
    r = _trial(engine, (bundle, *sum_task[1:]), make_agent("oracle"))
    assert r.agent.status == "timeout" and "ran past its 2 s limit" in r.agent.error and not r.agent.details.get("cut_off")
    assert r.timings["agent_s"] < 2 + AGENT_MARGIN_S                 # the runner stopped it, not the trial
    assert r.tests[0]["outcome"] == "passed" and r.reward == 1.0
    assert r.failure_class == "timeout" and not r.passed            # a timeout stays a timeout
    _no_container_left(engine)


class Planter(ScriptedAgent):
    """Writes a passing reward, reward.json and JUnit file where the verifier writes its own."""
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        res = ctx.box.run("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
                          "echo '{\"reward\": 1}' > /logs/verifier/reward.json && echo '<testsuite><testcase "
                          "name=\"test_sum\"/></testsuite>' > /logs/verifier/junit.xml", 10)
        assert res.exit_code == 0
        return AgentResult(status="completed")


def test_a_reward_the_agent_planted_is_not_believed(engine, sum_task):
    r = _trial(engine, sum_task, Planter())
    assert r.reward == 0 and r.failure_class == "test_assertion" and not r.passed
    assert r.tests[0]["name"] == "test_sum" and r.tests[0]["outcome"] == "failed"
    assert r.verifier_files["reward.txt"].strip() == b"0"
    _no_container_left(engine)


class Raises(ScriptedAgent):
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        raise RuntimeError("the agent's own bug")


def test_an_agent_that_raises_is_crashed_and_its_container_removed(engine, sum_task):
    r = _trial(engine, sum_task, Raises())
    assert r.agent.status == "crashed" and r.failure_class == "crashed"
    assert r.agent.error == "the agent raised RuntimeError: the agent's own bug"
    assert r.agent.details == {"exception": "RuntimeError"}
    assert r.tests and r.tests[0]["outcome"] == "failed"             # the tests ran all the same
    _no_container_left(engine)


class OomChild(ScriptedAgent):
    """Runs a command whose child the kernel OOM-kills, and which exits 0 all the same."""
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        res = ctx.box.run("python3 -c \"a = ' ' * (1024 * 2**20)\"; true", 60)
        return AgentResult(status="completed" if res.exit_code == 0 else "crashed", error=res.output[-300:])


def test_an_oom_kill_in_the_agents_part_is_not_the_tests(engine):
    """The kernel's OOM count is the container's: one the agent caused before the tests must
    not make failing tests read as test.sh running out of memory (test.sh exits with pytest's
    code here, as hand-written ones do: a non-zero exit is when the count is looked at)."""
    from pipeline.synth.test_sh import TEST_SH
    from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render
    toml = render(TaskToml(name="workbench/oom", metadata=TaskMetadata(category="text-processing"), memory_mb=256,
                           agent_timeout_sec=60, verifier_timeout_sec=30))
    test_sh = TEST_SH.rsplit("exit 0", 1)[0] + "exit $rc\n"
    bundle = sum_bundle(name="workbench/oom", extra_files={"task.toml": toml, "tests/test.sh": test_sh})
    cfg = parse(toml)
    build, res = check_build(engine, bundle, cfg, 1.0)
    assert build.passed, build.reason
    r = run_trial(engine, res.image, bundle, cfg, OomChild(), trial_id="trial-oom", task_id="t")
    assert r.agent.status == "completed", r.agent.error
    assert r.problem is None and r.failure_class == "test_assertion" and r.tests[0]["outcome"] == "failed"
    _no_container_left(engine)


class Records(ScriptedAgent):
    """Notes the context it was given."""
    name = "nop"
    seen: dict = {}

    def run(self, ctx: AgentContext) -> AgentResult:
        Records.seen = {"timeout_s": ctx.timeout_s, "instruction": ctx.instruction, "seed": ctx.seed,
                        "trial_id": ctx.trial_id, "run_id": ctx.run_id}
        return AgentResult(status="completed")


def test_the_agent_gets_the_capped_limit_and_the_tasks_instruction(engine, sum_task):
    """A task.toml read as it is (not through verify's grant) still gets no more than the ceilings."""
    bundle, _, image = sum_task
    raw = parse(bundle.text("task.toml")).model_copy(update={"agent_timeout_sec": 1e9})
    r = run_trial(engine, image, bundle, raw, Records(), trial_id="trial-r", task_id="t", seed=4, run_id="run-1",
                  timeout_scale=0.5)
    assert Records.seen == {"timeout_s": CEILINGS.agent_timeout_sec * 0.5, "instruction": bundle.text("instruction.md"),
                            "seed": 4, "trial_id": "trial-r", "run_id": "run-1"}
    assert r.failure_class == "test_assertion"
    _no_container_left(engine)


def test_a_cancelled_batch_stops_the_agent_and_runs_no_tests(engine, sum_task):
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    r = _trial(engine, sum_task, Stubborn(), stop=stop)
    assert r.agent.status == "stopped" and r.failure_class == "stopped" and r.tests == [] and r.reward is None
    assert "cancelled" in r.problem and r.timings["agent_s"] < 1.0 + 5 + 12
    _no_container_left(engine)
