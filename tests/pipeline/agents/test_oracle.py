"""pipeline.agents.oracle on a real container: solve.sh under the agent's limit, cut off at it
without killing the container (so the tests can still run), in the image's own environment,
with a one-step trajectory Harbor's validator accepts."""
import json

import pytest

from pipeline.agents.oracle import OracleAgent
from pipeline.agents.protocol import AgentContext
from pipeline.agents.solution_run import SOLVE_LOG_MARK
from pipeline.trajectories.atif import validate_with_harbor
from pipeline.trials.agent_phase import AgentBox
from pipeline.trials.sandbox import is_running, limits_for, sandbox
from pipeline.verify.docker_checks import check_build
from tests.helpers import sum_bundle
from workbench.sandbox.task_toml import parse

pytestmark = pytest.mark.docker


def _run(engine, bundle, timeout_s=None):
    cfg = parse(bundle.text("task.toml"))
    build, res = check_build(engine, bundle, cfg, 1.0)
    assert build.passed, build.reason
    with sandbox(engine, res.image, limits_for(cfg), "oracle-test") as box:
        ctx = AgentContext(task_id="t", trial_id="trial-oracle", instruction=bundle.text("instruction.md"),
                           bundle=bundle, box=AgentBox.of(box), timeout_s=timeout_s or cfg.agent_timeout_sec)
        result = OracleAgent().run(ctx)
        after = box.run("cat /app/sum.txt 2>/dev/null; echo \"[$SEEN]\"; cat /app/seen 2>/dev/null", 10)
        return result, is_running(box), after.output


def test_the_oracle_runs_the_solution_and_records_one_bash_step(engine, tmp_path):
    result, alive, after = _run(engine, sum_bundle("echo summing\n" + sum_bundle().text("solution/solve.sh")
                                                   .split("set -e\n", 1)[1]))
    assert result.status == "completed" and result.exit_code == 0 and not result.error
    assert result.log.startswith(SOLVE_LOG_MARK) and "summing" in result.log and alive and after.startswith("6")
    step = result.trajectory["steps"][-1]
    assert step["tool_calls"][0]["function_name"] == "bash"
    assert step["tool_calls"][0]["arguments"] == {"command": "bash /solution/solve.sh"}
    assert step["observation"]["results"][0]["content"].startswith("summing")
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(result.trajectory))
    assert validate_with_harbor(path) == []


def test_at_its_limit_the_solution_is_stopped_and_the_container_lives_on(engine):
    result, alive, _ = _run(engine, sum_bundle("echo started\nsleep infinity", agent_timeout=3))
    assert result.status == "timeout" and result.details["timed_out"]
    assert result.error == "solution/solve.sh ran past its 3 s limit and was killed"
    assert 3 <= result.agent_s < 8 and "started" in result.log
    assert alive                     # the box was not killed: the trial's tests can still run


def test_a_failing_solution_is_a_failed_script_with_its_exit_code(engine):
    result, alive, _ = _run(engine, sum_bundle("exit 3"))
    assert (result.status, result.exit_code, result.error) == ("script_failed", 3, "solution/solve.sh exited with code 3")
    assert alive


def test_solve_sh_sees_the_images_own_loader_variables(engine):
    """The runner itself runs with the loader variables blanked (it is the verifier's Python);
    solve.sh must get the image's values back, and none it never had."""
    bundle = sum_bundle('echo "$LD_LIBRARY_PATH|${LD_PRELOAD-unset}" > /app/seen',
                        dockerfile_extra="ENV LD_LIBRARY_PATH=/opt/own/lib SEEN=image-env\n")
    result, _, after = _run(engine, bundle)
    assert result.status == "completed", result.error
    assert "[image-env]" in after and "/opt/own/lib|unset" in after
