"""A command-exercise task in a real container: the documented jq command filled in is the oracle and
passes, the untouched environment fails, and a solution that runs the same tool with another filter
(a plausible but wrong result) fails the skill-result test only."""
from __future__ import annotations

import pytest

from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.verify.run import image_for, verify_bundle
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine

from .skills import failing_oracle_tests, tickets_step

pytestmark = [pytest.mark.docker]

OTHER = PathStep("id-csv", "tabulate-csv", "data-processing", "", "a1", "a2")


def _tsv_task():
    """The task whose command step is the documented TSV listing (drawn per seed among the commands)."""
    for seed in range(1, 20):
        task = synthesize_task([tickets_step(), OTHER], seed, base_image_name(), path_id="p1")
        if "@tsv" in task.bundle.text("solution/solve.sh"):
            return task
    raise AssertionError("no seed draws the TSV command")


def test_the_documented_command_is_the_oracle_and_another_filter_fails():
    task = _tsv_task()
    lines = task.bundle.text("solution/solve.sh").splitlines()
    k = next(i for i, ln in enumerate(lines) if "@tsv" in ln)
    wrong = lines[k].replace("(.attributes.owner.login // \"-\")", ".attributes.status")   # another column
    assert wrong != lines[k]
    files = dict(task.bundle.files)
    files["solution/solve.sh"] = ("\n".join(lines[:k] + [wrong] + lines[k + 1:]) + "\n").encode()
    other_filter = TaskBundle(files, set(task.bundle.executables))
    engine = Engine()
    try:
        checks = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert checks["oracle"].passed, checks["oracle"].log[-2000:]
        assert checks["noop"].passed, checks["noop"].reason      # untouched, the tests fail
        assert checks["rubric"].passed, checks["rubric"].log
        untouched = {t["name"]: t["outcome"] for t in checks["noop"].details["tests"]}
        assert untouched["test_s1_skill_result"] != "passed"
        assert failing_oracle_tests(other_filter, engine) == ["test_s1_skill_result"]
    finally:
        for b in (task.bundle, other_filter):
            engine.remove_image(image_for(b))
