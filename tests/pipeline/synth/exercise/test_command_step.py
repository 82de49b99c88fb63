"""A path whose skill documents commands of a tool the image has (and bundles no script) gets a step whose
reference solution is one of those commands filled in with the task's input; it claims its skill at
rubric 2 with both quotes; the instruction states the goal, never the command (no Docker here)."""
from __future__ import annotations

import json
import tomllib

from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.exercise.command_step import OUT_MARK, RECIPE_NAME

from .skills import TICKETS, tickets_step

BASE = "workbench/base:latest"
OTHER = PathStep("id-csv", "tabulate-csv", "data-processing", "", "a1", "a2")


def _task(seed: int = 3, **kw):
    return synthesize_task([tickets_step(), OTHER], seed, BASE, path_id="p1", **kw)


def test_the_step_runs_a_documented_command_filled_in_with_the_tasks_own_input():
    task = _task()
    files = task.bundle.files
    assert task.recipes[0] == RECIPE_NAME
    solve = files["solution/solve.sh"].decode()
    assert "/app/input/ticket-fields/export.json" in solve and "jq -r '.data[]" in solve
    given = json.loads(files["environment/app/input/ticket-fields/export.json"])
    assert [t["id"] for t in given["data"]] == [17, 18, 21]                          # ids kept
    assert [t["attributes"]["points"] for t in given["data"]] != [3, 5, 1]          # numbers drawn anew
    tests = files["tests/test_outputs.py"].decode()
    assert OUT_MARK in tests and ".data[]" in tests      # the tests run the same command again
    assert not any(p.startswith("tests/skill_ref/") for p in files)   # the image's own jq: no code to carry


def test_the_instruction_states_the_goal_in_the_skills_words_never_the_command():
    for seed in (3, 4, 5, 6):
        task = _task(seed)
        step1 = task.bundle.text("instruction.md").split("## Step 1")[1].split("## Step 2")[0]
        assert "`/skills/ticket-fields`" in step1 and "documented `jq` command" in step1
        assert ".attributes" not in step1 and "@tsv" not in step1 and "uniq" not in step1
        assert "Check which statuses occur" in step1 or "List one row per ticket" in step1


def test_tasks_of_one_skill_draw_among_its_documented_commands():
    lines = {next(ln for ln in _task(seed).bundle.text("solution/solve.sh").splitlines() if ln.startswith("jq "))
             for seed in range(1, 9)}
    assert len(lines) == 2


def test_the_step_claims_its_skill_at_2_with_both_quotes():
    task = _task()
    first, second = task.fidelity[0], task.fidelity[1]
    assert first.score == 2 and first.evidence["via"] == "command" and first.evidence["uses"] == "jq"
    assert first.evidence["skill_quote"] in (TICKETS / "SKILL.md").read_text()
    assert first.evidence["solution_quote"] in task.bundle.text("solution/solve.sh")
    assert second.score < 2
    meta = tomllib.loads(task.bundle.text("task.toml"))["metadata"]
    assert meta["skill_packages"] == ["/skills/ticket-fields"] and meta["recipes"][0] == RECIPE_NAME
    assert "ticket-fields" not in " ".join(meta["exercise_gaps"] or [])


def test_same_path_and_seed_give_the_same_bytes():
    assert _task().bundle.files == _task().bundle.files


def test_packages_off_means_no_command_exercise_and_the_reason():
    task = _task(ship_skills=False)
    assert RECIPE_NAME not in task.recipes
    assert task.fidelity[0].gap == "skill packages are not shipped with this batch's tasks"


def test_two_inputs_of_one_source_differ_both_ways_and_stay_sorted():
    """`comm -13 a.txt b.txt` needs lines only b has: the second file shares most lines with the first,
    drops some and adds some, in the sorted order comm reads."""
    from pipeline.synth.skill_fit import parts_from_skill
    body = ("---\nname: comm-lists\ndescription: Compare two sorted lists with comm.\n---\n# comm lists\n\n"
            "Lines only in the second list:\n\n```bash\nLC_ALL=C comm -13 a.txt b.txt > only-b.txt\n```\n")
    step = PathStep("id-comm", "comm-lists", "text-processing", "Compare two sorted lists with comm.", "a0", "a1",
                    parts_from_skill(body), None)
    task = synthesize_task([step, OTHER], 5, BASE, path_id="p9")
    assert task.recipes[0] == RECIPE_NAME and task.fidelity[0].score == 2
    a = task.bundle.text("environment/app/input/comm-lists/a.txt").splitlines()
    b = task.bundle.text("environment/app/input/comm-lists/b.txt").splitlines()
    assert set(b) - set(a) and set(a) - set(b) and len(set(a) & set(b)) > len(b) // 2
    assert a == sorted(a) and b == sorted(b)
    assert "LC_ALL=C comm -13 /app/input/comm-lists/a.txt /app/input/comm-lists/b.txt > " \
           "/app/out/comm-lists/only-b.txt" in task.bundle.text("solution/solve.sh")
    assert "Lines only in the second list" in task.bundle.text("instruction.md")
