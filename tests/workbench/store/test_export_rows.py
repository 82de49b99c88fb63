"""The export rows read from a real DuckDB store: curated statuses, and steps paired with
recipes the way the synthesizer composes them."""
from __future__ import annotations

import pytest

from workbench.models import CurationChange, TaskRecord
from workbench.store import curation
from workbench.store import tasks as task_store
from workbench.store.export_rows import skill_rows, task_rows


def test_skill_rows_follow_curation_and_refuse_an_unknown_status(demo_workspace):
    ws = demo_workspace
    accepted = skill_rows(ws.db, ["accepted"])
    sid = accepted[0].id
    curation.save_changes(ws.db, [CurationChange(skill_id=sid, field="status", new_value="rejected")], "test")
    assert sid not in {r.id for r in skill_rows(ws.db, ["accepted"])}
    curated = next(r for r in skill_rows(ws.db, ["rejected"]) if r.id == sid)
    assert curated.status == "rejected" and curated.rules == []   # rejected by hand, no rule fired
    with pytest.raises(ValueError, match="unknown status approved; choose from accepted, rejected, pending"):
        skill_rows(ws.db, ["approved"])


def _save(ws, task_id: str, skill_ids: list[str], recipes: list[str]) -> None:
    task_store.save_task(ws.db, TaskRecord(task_id=task_id, name=f"t/{task_id}", path_id=f"p-{task_id}",
                                           category="text-processing", difficulty="easy", n_steps=len(recipes),
                                           recipes=recipes, skill_ids=skill_ids, scenario_ids=[],
                                           bundle_dir=f"tasks/{task_id}", bundle_hash="0"))


def test_task_steps_pair_skills_with_the_recipes_composed_for_them(demo_workspace):
    ws = demo_workspace
    skills = skill_rows(ws.db)[:6]
    ids = [s.id for s in skills]
    _save(ws, "one-skill", ids[:1], ["csv-report", "text-file"])   # a one-skill path is composed twice
    _save(ws, "six-skills", ids, ["a", "b", "c", "d", "e"])          # only the first five are composed
    _save(ws, "gone-skill", ["no-such-skill"], ["csv-report", "text-file"])
    rows = {r.task_id: r for r in task_rows(ws.db, ws.root)}
    assert [(s.step, s.skill_id, s.recipe) for s in rows["one-skill"].steps] == \
        [(1, ids[0], "csv-report"), (2, ids[0], "text-file")]
    assert [(s.skill_id, s.skill_name, s.recipe) for s in rows["six-skills"].steps] == \
        [(s.id, s.name, r) for s, r in zip(skills, ["a", "b", "c", "d", "e", None])]
    assert [s.skill_name for s in rows["gone-skill"].steps] == [None, None]
    assert rows["one-skill"].bundle_dir == str((ws.root / "tasks" / "one-skill").resolve())


def test_task_steps_carry_the_skill_fidelity_the_synthesizer_recorded(demo_workspace):
    """A synthesized task's per-step fidelity goes through the store into the export rows
    (a task saved without it, as before migration 6, keeps None)."""
    from pipeline.synth.compose import PathStep, synthesize_task
    from pipeline.synth.skill_fit import SkillParts
    ws = demo_workspace
    skills = skill_rows(ws.db)[:2]
    steps = [PathStep(skills[0].id, skills[0].name, "data-processing", "", "a", "b", SkillParts(tools=("jq",))),
             PathStep(skills[1].id, skills[1].name, "git", "", "b", "c")]
    task = synthesize_task(steps, 3, "workbench/base:latest")
    recorded = [f.as_dict() for f in task.fidelity]
    task_store.save_task(ws.db, TaskRecord(task_id=task.task_id, name=task.name, path_id="p", category=task.category,
                                           difficulty=task.difficulty, n_steps=2, recipes=task.recipes,
                                           skill_ids=[s.skill_id for s in steps], scenario_ids=[],
                                           bundle_dir=f"tasks/{task.task_id}", bundle_hash="0"),
                         skill_fidelity=recorded)
    _save(ws, "older", [skills[0].id], ["json-convert", "git-publish-tag"])
    assert task_store.skill_fidelity(ws.db, task.task_id) == recorded
    assert task_store.skill_fidelity(ws.db, "older") is None
    rows = {r.task_id: r for r in task_rows(ws.db, ws.root)}
    got = [(s.skill_id, s.recipe, s.fidelity, s.tools_used, s.kinds_used) for s in rows[task.task_id].steps]
    assert got == [(f["skill_id"], f["recipe"], f["fidelity"], f["tools_used"], f["kinds_used"]) for f in recorded]
    assert got[0][2] == "tool" and got[0][3] == ["jq"] and got[1][2] == "category-only"
    # the rubric score and its evidence travel too (issue 24): jq shared, nothing documented, so 1
    assert [(s.score, s.evidence) for s in rows[task.task_id].steps] == [(f["score"], f["evidence"]) for f in recorded]
    assert rows[task.task_id].steps[0].score == 1 and rows[task.task_id].steps[0].evidence["via"] == "tool"
    assert all(s.fidelity is None and s.tools_used is None and s.score is None for s in rows["older"].steps)


def test_skill_rows_name_a_reason_only_for_skills_that_are_not_accepted(demo_workspace):
    ws = demo_workspace
    seen = []

    def reason_of(rules):
        seen.append([r.rule for r in rules])
        return "+".join(r.rule for r in rules) or None

    rows = skill_rows(ws.db, reason_of=reason_of)
    assert all(r.reason is None for r in rows if r.status == "accepted")
    gui = next(r for r in rows if r.name == "archive-manager-bulk-extract")
    assert gui.reason == "+".join(r.rule for r in gui.rules) and "executable.gui" in gui.reason
    assert len(seen) == sum(r.status != "accepted" for r in rows)   # accepted rows are not asked
    assert all(r.reason is None for r in skill_rows(ws.db))         # no reason_of, no reason
