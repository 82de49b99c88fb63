"""A command-exercise task in a real container: the documented jq command filled in is the oracle and
passes, the untouched environment fails, and a solution that runs the same tool with another filter
(a plausible but wrong result) fails the skill-result test only."""
from __future__ import annotations

import pytest

from pipeline.synth.compose import PathStep, synthesize_task
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle

from .skills import orders_db_step, tickets_step, verified_with_bypass

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
    checks, failed = verified_with_bypass(task.bundle, other_filter)
    assert checks["oracle"].passed, checks["oracle"].log[-2000:]
    assert checks["noop"].passed, checks["noop"].reason      # untouched, the tests fail
    assert checks["rubric"].passed, checks["rubric"].log
    untouched = {t["name"]: t["outcome"] for t in checks["noop"].details["tests"]}
    assert untouched["test_s1_skill_result"] != "passed"
    assert failed == ["test_s1_skill_result"], failed

def test_a_documented_sqlite_query_on_a_database_of_the_skills_schema_is_the_oracle():
    """The database is built from the CREATE TABLE SKILL.md shows, rows drawn per task; the same query with
    another filter (a plausible table of the same shape) fails the skill-result test only."""
    task = next(t for t in (synthesize_task([orders_db_step(), OTHER], seed, base_image_name(), path_id="p2")
                            for seed in range(1, 20)) if "status = 'paid'" in t.bundle.text("solution/solve.sh"))
    solve = task.bundle.text("solution/solve.sh")
    files = dict(task.bundle.files)
    files["solution/solve.sh"] = solve.replace("status = 'paid'", "status = 'open'").encode()
    other_status = TaskBundle(files, set(task.bundle.executables))
    checks, failed = verified_with_bypass(task.bundle, other_status)
    assert checks["oracle"].passed and checks["noop"].passed and checks["rubric"].passed, \
        {n: c.reason for n, c in checks.items()}
    assert failed == ["test_s1_skill_result"], failed
