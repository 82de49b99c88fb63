"""Rows for `workbench skills export` and `workbench tasks export`: what scripts read about
the current skills (with the rules that fired) and the tasks a batch made (with their steps)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.store.connection import Database

SKILL_STATUSES = ("accepted", "rejected", "pending")


@dataclass(frozen=True)
class FiredRule:
    """A rule whose outcome was not `pass`, with what it found and where."""

    rule: str
    verdict: str            # fail | warn
    evidence: str
    location: str | None    # e.g. "SKILL.md:12"
    line: int | None        # the line number of `location`, when it has one


@dataclass(frozen=True)
class SkillRow:
    id: str
    name: str
    source_path: str
    status: str
    category: str | None
    tools: list[str]
    binaries: list[str]
    rules: list[FiredRule] = field(default_factory=list)
    reason: str | None = None  # why it is not accepted (a label reason); None when accepted


@dataclass(frozen=True)
class TaskStep:
    step: int
    skill_id: str
    skill_name: str | None  # None when the skill is no longer in the store
    recipe: str | None      # None for a path skill the synthesizer did not compose
    fidelity: str | None    # tool | artifact | category-only; None when not composed or not recorded
    tools_used: list[str] | None = None   # the skill's tools the step's solution runs
    kinds_used: list[str] | None = None   # the skill's state kinds the step reads or writes
    score: int | None = None              # the fidelity rubric: 2 exercises the skill, 1 shares a tool or format, 0 not
    evidence: dict | None = None          # why: via, uses, skill_quote, solution_quote, note


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    name: str
    verdict: str
    category: str
    bundle_dir: str         # absolute
    steps: list[TaskStep]
    verifier_strength: float | None = None   # caught / effective solution commands; None: not measured


def _line_of(location: str | None) -> int | None:
    m = re.search(r":(\d+)$", location or "")
    return int(m.group(1)) if m else None


def skill_rows(db: Database, statuses: list[str] | None = None,
               reason_of: Callable[[list[FiredRule]], str | None] | None = None) -> list[SkillRow]:
    """Every current skill (curation applied), optionally only those of the given statuses.
    `reason_of` names why a skill that is not accepted is not, from its fired rules (the
    entry point passes pipeline.filters.reasons; the store knows no rules)."""
    bad = sorted(set(statuses or ()) - set(SKILL_STATUSES))
    if bad:
        raise ValueError(f"unknown status {', '.join(bad)}; choose from {', '.join(SKILL_STATUSES)}")
    where = "AND status IN (SELECT unnest(?::VARCHAR[]))" if statuses else ""
    with db.read() as con:
        skills = con.execute(
            f"""SELECT id, name, source_path, status, category, tools, bins FROM skills_effective
                WHERE is_current {where} ORDER BY name, id""", [statuses] if statuses else []).fetchall()
        fired = con.execute(
            """SELECT v.skill_id, v.rule, v.outcome, v.evidence, v.location
               FROM filter_verdicts v JOIN skills s ON s.id = v.skill_id
               WHERE s.is_current AND v.outcome <> 'pass'
               ORDER BY v.skill_id, CASE v.outcome WHEN 'fail' THEN 0 ELSE 1 END, v.rule""").fetchall()
    by_skill: dict[str, list[FiredRule]] = {}
    for sid, rule, outcome, evidence, location in fired:
        by_skill.setdefault(sid, []).append(FiredRule(rule, outcome, evidence, location, _line_of(location)))
    rows = []
    for sid, name, source_path, status, category, tools, bins in skills:
        rules = by_skill.get(sid, [])
        reason = reason_of(rules) if reason_of and status != "accepted" else None
        rows.append(SkillRow(sid, name, source_path, status, category, list(tools or []), list(bins or []),
                             rules, reason))
    return rows


def run_exists(db: Database, run_id: str) -> bool:
    with db.read() as con:
        return con.execute("SELECT count(*) FROM synth_runs WHERE run_id = ?", [run_id]).fetchone()[0] > 0


def task_rows(db: Database, workspace_root, run_id: str | None = None) -> list[TaskRow]:
    """Every task (or those of one synthesis run), its steps in path order with skill names."""
    where = "WHERE task_id IN (SELECT task_id FROM run_tasks WHERE run_id = ?)" if run_id else ""
    with db.read() as con:
        tasks = con.execute(
            f"""SELECT t.task_id, t.name, t.verdict, t.category, t.bundle_dir, t.skill_ids, t.recipes, t.skill_fidelity,
                       s.strength
                FROM tasks t LEFT JOIN task_strength s ON s.task_id = t.task_id AND s.bundle_hash = t.bundle_hash
                {where.replace('task_id IN', 't.task_id IN')} ORDER BY t.created_at, t.task_id""",
            [run_id] if run_id else []).fetchall()
    names = _skill_names(db, sorted({sid for t in tasks for sid in t[5]}))
    root = workspace_root.resolve()
    return [TaskRow(task_id, name, verdict, category, str(root / bundle_dir),
                    [_step(k, sid, names.get(sid), recipe, _fidelity_of(fidelity, k))
                     for k, (sid, recipe) in enumerate(_pair_steps(list(skill_ids), list(recipes)), 1)], strength)
            for task_id, name, verdict, category, bundle_dir, skill_ids, recipes, fidelity, strength in tasks]


def _fidelity_of(stored: str | None, step: int) -> dict | None:
    """Step `step`'s record of the task's stored skill_fidelity (a JSON list), if it has one."""
    records = json.loads(stored) if stored else []
    return next((r for r in records if r.get("step") == step), None)


def _step(k: int, skill_id: str, skill_name: str | None, recipe: str | None, fid: dict | None) -> TaskStep:
    if fid is None:
        return TaskStep(k, skill_id, skill_name, recipe, None)
    return TaskStep(k, skill_id, skill_name, recipe, fid["fidelity"], list(fid["tools_used"]), list(fid["kinds_used"]),
                    fid.get("score"), fid.get("evidence"))


def _pair_steps(skill_ids: list[str], recipes: list[str]) -> list[tuple[str, str | None]]:
    """(skill id, recipe) per step. The store keeps the path's skills and one recipe per composed
    step; the synthesizer composes the first few skills, and a one-skill path twice (see
    pipeline.synth.compose.plan_steps). Skills past the composed steps have no recipe."""
    n = max(len(skill_ids), len(recipes))
    return [(skill_ids[min(k, len(skill_ids) - 1)], recipes[k] if k < len(recipes) else None)
            for k in range(n)] if skill_ids else []


def _skill_names(db: Database, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    with db.read() as con:
        return dict(con.execute("SELECT id, name FROM skills_effective WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                                [ids]).fetchall())
