"""Issue 10.14: "run the script once yourself" is checked on the solution's own run. The tests
run the solution's script only in scratch, so a solve.sh that writes the script but never
runs it is rejected by the tests themselves, and the tests leave nothing behind."""
import re

import pytest

from pipeline.verify.run import verify_bundle
from tests.pipeline.synth.test_docker_families import chain_task
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine

pytestmark = pytest.mark.docker

# Each scheduling family after a step that makes the artifact it schedules.
CHAINS = {"cron-refresh-job": ["regex-extract", "cron-refresh-job"],
          "systemd-timer-lock": ["line-diff", "systemd-timer-lock"]}


def _task(family: str):
    return chain_task(0, CHAINS[family])


def _never_runs_the_script(bundle: TaskBundle) -> TaskBundle:
    solve = bundle.text("solution/solve.sh")
    lazy = re.sub(r"(?m)^bash /app/bin/\S+\.sh\n?", "", solve)
    assert lazy != solve, solve
    return TaskBundle({**bundle.files, "solution/solve.sh": lazy.encode()}, bundle.executables)


@pytest.mark.parametrize("family", sorted(CHAINS))
def test_a_solution_that_never_runs_its_script_is_rejected_by_the_tests(family):
    engine = Engine()
    task = _task(family)
    checks = {c.name: c for c in verify_bundle(_never_runs_the_script(task.bundle), engine=engine)}
    oracle = checks["oracle"]
    assert not oracle.passed and "after the solution the tests still fail" in oracle.reason, oracle.reason
    failed = [t["name"] for t in oracle.details["tests"] if t["outcome"] != "passed"]
    assert any(name.endswith("_ran") for name in failed), failed
    # The tests that run the script did so in scratch: nothing of theirs is left behind.
    assert oracle.details["test_writes"] == [], oracle.details["test_writes"]
    good = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
    assert good["oracle"].passed and good["noop"].passed, (good["oracle"].reason, good["noop"].reason)
    assert engine.orphaned_containers() == []
