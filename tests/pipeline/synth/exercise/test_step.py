"""A path whose skill bundles a runnable script gets a step that runs it; the package ships with the
task; the step claims its skill at rubric 2 and the others claim nothing (no Docker here)."""
from __future__ import annotations

import json
import tomllib

from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.exercise.step import RECIPE_NAME

from .skills import funnel_step

BASE = "workbench/base:latest"
OTHER = PathStep("id-csv", "tabulate-csv", "data-processing", "", "a1", "a2")


def _task(**kw):
    return synthesize_task([funnel_step(), OTHER], 3, BASE, path_id="p1", **kw)


def test_the_skill_step_runs_the_skills_own_script_on_a_varied_sample():
    task = _task()
    files = task.bundle.files
    assert task.recipes[0] == RECIPE_NAME
    solve = files["solution/solve.sh"].decode()
    assert "python3 /skills/funnel-report/scripts/funnel_report.py /app/input/funnel-report/funnel.json " \
           "--format json > /app/out/funnel-report/funnel_report.json" in solve
    given = json.loads(files["environment/app/input/funnel-report/funnel.json"])
    sample = json.loads(files["environment/skills/funnel-report/assets/sample_funnel.json"])
    assert given["funnel_id"] == sample["funnel_id"] == 7                      # ids kept
    assert [s["name"] for s in given["stages"]] == [s["name"] for s in sample["stages"]]
    assert [s["users"] for s in given["stages"]] != [s["users"] for s in sample["stages"]]   # numbers drawn anew


def test_the_package_ships_read_only_and_the_instruction_says_where():
    task = _task()
    files = task.bundle.files
    assert files["environment/skills/funnel-report/SKILL.md"].startswith(b"---\nname: funnel-report")
    assert "environment/skills/funnel-report/scripts/funnel_report.py" in files
    docker = files["environment/Dockerfile"].decode()
    assert "COPY skills/ /skills/" in docker and "chmod -R a-w" in docker
    instruction = files["instruction.md"].decode()
    assert "`/skills/funnel-report`" in instruction
    assert "funnel_report.py" not in instruction.split("## Step 1")[1].split("## Step 2")[0].replace(
        "`scripts/funnel_report.py`", "")   # the step states the goal, never the command
    meta = tomllib.loads(files["task.toml"].decode())["metadata"]
    assert meta["skill_packages"] == ["/skills/funnel-report"]
    # the tests carry the pristine script: they never run the agent's copy
    assert files["tests/skill_ref/funnel-report/scripts/funnel_report.py"] == \
        files["environment/skills/funnel-report/scripts/funnel_report.py"]


def test_the_exercise_claims_its_skill_at_2_and_recipe_steps_claim_nothing():
    task = _task()
    first, second = task.fidelity[0], task.fidelity[1]
    assert first.score == 2 and first.evidence["via"] == "script"
    assert first.evidence["skill_quote"] == "python3 scripts/funnel_report.py funnel.json --format json"
    assert second.score < 2
    instruction = task.bundle.text("instruction.md")
    assert "**funnel-report**" in instruction and "tabulate-csv" not in instruction


def test_packages_off_means_no_package_and_no_exercise_with_the_reason():
    task = _task(ship_skills=False)
    assert RECIPE_NAME not in task.recipes
    assert not any(p.startswith("environment/skills/") for p in task.bundle.files)
    meta = tomllib.loads(task.bundle.text("task.toml"))["metadata"]
    assert meta["skill_packages"] == []
    assert meta["exercise_gaps"][0] == "funnel-report: skill packages are not shipped with this batch's tasks"
    assert task.fidelity[0].gap == "skill packages are not shipped with this batch's tasks"


def test_a_one_skill_path_is_one_exercise_and_a_recipe_step_never_the_same_exercise_twice():
    task = synthesize_task([funnel_step()], 3, BASE, path_id="p2")
    assert task.recipes.count(RECIPE_NAME) == 1


def test_same_path_and_seed_give_the_same_bytes():
    assert _task().bundle.files == _task().bundle.files


def test_every_connective_step_says_why_its_skill_is_not_exercised():
    task = _task()
    assert task.fidelity[0].gap == ""           # exercised
    assert task.fidelity[1].gap.startswith("its SKILL.md runs no bundled script")
    assert task.exercise_gaps == [f"tabulate-csv: {task.fidelity[1].gap}"]
