"""What tells tasks apart: a name unique per task (it is the export folder), and the
near-duplicate key that marks tasks reading as one although made from different paths."""
from __future__ import annotations

from dataclasses import replace

from pipeline.synth.compose import PathStep, synthesize_task, task_id_for
from pipeline.synth.skill_fit import SkillParts

BASE = "workbench/base:latest"


# Skills with evidence (a log read, sqlite3 run); the sqlite3 one documents the command its family
# runs (rubric score 2), so the instruction lists it as exercised.
SQLITE_MD = ("Load, then export a report:\n\n```bash\nsqlite3 app.db '.import --csv t.csv t'\n"
             "sqlite3 -header -csv app.db 'SELECT * FROM t;'\n```\n")
PARTS = {"log-analysis": SkillParts(consumes=("log-file",)),
         "databases": SkillParts(tools=("sqlite3",), body=SQLITE_MD)}


def steps(tag: str = "p", anchors: str = "sc") -> list[PathStep]:
    cats = ["log-analysis", "databases"]
    return [PathStep(f"{tag}-skill-{i}", f"{c} skill {i}", c, f"Does {c} work.", f"{anchors}-{i}", f"{anchors}-{i + 1}",
                     PARTS[c]) for i, c in enumerate(cats)]


def test_paths_that_differ_only_in_scenarios_give_distinct_names():
    """The slug hashed the skills and seed only, so two paths through the same skills between
    other scenarios gave one name, one export folder, and the second task was dropped."""
    a = synthesize_task(steps(anchors="x"), 1, BASE)
    b = synthesize_task(steps(anchors="y"), 1, BASE)
    assert a.task_id != b.task_id and a.name != b.name
    assert a.name.endswith(a.task_id[:10]) and b.name.endswith(b.task_id[:10])
    assert a.task_id == task_id_for(steps(anchors="x"), 1, BASE)
    assert synthesize_task(steps(anchors="x"), 1, "other/base:1").name != a.name   # the image is part of a task


def test_near_duplicate_key_marks_same_chain_and_text():
    a = synthesize_task(steps(anchors="x"), 1, BASE)
    b = synthesize_task(steps(anchors="y"), 1, BASE)         # same skills, same draws: reads the same
    renamed = [replace(s, skill_name="another name", description="Other words.") for s in steps(anchors="x")]
    c = synthesize_task(renamed, 1, BASE)                     # the skills list differs, the steps do not
    other = synthesize_task(steps(tag="q"), 1, BASE)          # other skill ids: other draws
    assert a.bundle.text("instruction.md") != c.bundle.text("instruction.md")
    assert a.near_dup_key == b.near_dup_key == c.near_dup_key
    assert other.recipes != a.recipes or other.bundle.text("instruction.md") != a.bundle.text("instruction.md")
    assert other.near_dup_key != a.near_dup_key
