"""A path's full context for a synthesizer, read from the store (DESIGN §9): for every step
the skill's parts (SKILL.md body, parsed steps, tools, state kinds), its inputs, outputs and
binaries, its stored pre/post scenarios, and the bridge to the next step."""
from __future__ import annotations

import pandas as pd

from pipeline.synth.compose import PathStep
from pipeline.synth.exercise.package import SkillPackage, read_package
from pipeline.synth.exercise.script_facts import IMAGE_BINARIES
from pipeline.synth.fidelity_rubric import teaching
from pipeline.synth.limits import MAX_STEPS
from pipeline.synth.protocol import BridgeView, PathContext, ScenarioView, StepContext
from pipeline.synth.skill_fit import SkillParts, parts_from_skill
from workbench.store import path_context as context_store
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

NO_BRIDGE_NEEDED = "the next skill starts in the scenario cluster this one ends in (no bridge needed)"
NO_BRIDGE_ROW = "no stored bridge verdict links these two scenarios"


def path_contexts(ws: Workspace, path_ids: list[str]) -> dict[str, PathContext]:
    """Each path's context, in the order of `path_ids` (paths without steps are left out)."""
    frame = task_store.path_steps_with_skills(ws.db, path_ids)
    steps = steps_by_path(frame)
    facts = _step_facts(frame)
    scenarios = _scenarios(context_store.path_scenarios(ws.db, path_ids))
    bridges = _bridges(context_store.path_bridges(ws.db, path_ids))
    out: dict[str, PathContext] = {}
    for pid in path_ids:
        if pid not in steps:
            continue
        path = steps[pid]
        out[pid] = PathContext(pid, tuple(
            StepContext(step=s, **facts[s.skill_id],
                        pre=scenarios.get((s.skill_id, "pre")), post=scenarios.get((s.skill_id, "post")),
                        bridge=bridges.get((pid, i)) if i < len(path) - 1 else None)
            for i, s in enumerate(path)))
    return out


def steps_by_path(frame: pd.DataFrame) -> dict[str, list[PathStep]]:
    """Each path's steps with its skills' parts (tools, state kinds, steps, body), each skill read
    once; at most MAX_STEPS steps a path (what the synthesizers compose)."""
    out: dict[str, list[PathStep]] = {}
    parts: dict[str, SkillParts] = {}
    packages: dict[str, SkillPackage | None] = {}
    for row in frame.itertuples(index=False):
        if row.skill_id not in parts:
            parts[row.skill_id] = parts_from_skill(row.raw_text, bins=_listed(row.bins), tools=_listed(row.tools),
                                                   inputs=_listed(row.inputs), outputs=_listed(row.outputs),
                                                   steps=_listed(row.steps))
            # Read here, in the driver (workers need no shared disk), and only for a skill whose SKILL.md runs
            # a bundled script or documents commands of a program the image has (an exercise step's sample
            # inputs come from the package): a batch of thousands of skills holds no thousands of packages;
            # another claimed skill ships its SKILL.md.
            source = getattr(row, "source_path", "")
            teach = teaching(row.raw_text or "", row.name, row.description, tuple(parts[row.skill_id].tools))
            wanted = bool(teach.scripts) or any(c.tool in IMAGE_BINARIES for c in teach.commands)
            packages[row.skill_id] = read_package(source, _listed(getattr(row, "package_files", None)), row.raw_text,
                                                  name=row.name, skill_id=row.skill_id) \
                if source and wanted else None
        out.setdefault(row.path_id, []).append(PathStep(
            skill_id=row.skill_id, skill_name=row.name, category=row.category, description=row.description,
            src_anchor=row.src_anchor, dst_anchor=row.dst_anchor, parts=parts[row.skill_id],
            package=packages[row.skill_id]))
    return {k: v[:MAX_STEPS] for k, v in out.items()}


def _step_facts(frame: pd.DataFrame) -> dict[str, dict]:
    return {row.skill_id: {"inputs": tuple(_listed(row.inputs)), "outputs": tuple(_listed(row.outputs)),
                           "bins": tuple(_listed(row.bins))}
            for row in frame.itertuples(index=False)}


def _scenarios(frame: pd.DataFrame) -> dict[tuple[str, str], ScenarioView]:
    return {(row.skill_id, row.role): ScenarioView(goal=row.goal, context=row.context, capability=row.capability,
                                                   state=row.state, io_tool=row.io_tool, canonical=row.canonical)
            for row in frame.itertuples(index=False)}


def _bridges(frame: pd.DataFrame) -> dict[tuple[str, int], BridgeView]:
    """(path_id, index of the step in the path) -> the bridge to the step after it."""
    out: dict[tuple[str, int], BridgeView] = {}
    seen: dict[str, int] = {}    # rows come in step order; a path's steps may be numbered from 0 or 1
    for row in frame.itertuples(index=False):
        if isinstance(row.verdict, str):
            view = BridgeView(row.from_skill, row.to_skill, row.verdict, float(row.similarity), row.reason)
        else:
            view = BridgeView(row.from_skill, row.to_skill, "unchecked", 0.0,
                              NO_BRIDGE_NEEDED if bool(row.same_cluster) else NO_BRIDGE_ROW)
        i = seen[row.path_id] = seen.get(row.path_id, -1) + 1
        out[(row.path_id, i)] = view
    return out


def _listed(value) -> list[str]:
    """A stored VARCHAR[] as DuckDB hands it to pandas (a list or an array; None for none)."""
    return [str(x) for x in value] if value is not None and not isinstance(value, str) else []
