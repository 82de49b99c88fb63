"""SETA-Evol's operators on recipe tasks (provider offline): the parent's composed steps, changed
by one step, composed again by the offline synthesizer with the parent's families pinned.

- harder: one step more, along an edge of the scenario graph leaving the last step's post
  scenario (a skill that starts there, or one a verified bridge reaches), at most MAX_STEPS;
- context_switch: as many steps, one served by another family (another tool for that step: a
  family of the same category, or one that fits the skill), else another skill between the same
  two scenarios;
- easier: one step dropped (the last first, then the first, then the middle ones), never below one.

Candidates are tried in a fixed order and the n-th that composes is the variant, so the same
parent, operator and n always give the same bytes. `make` only reads the workspace.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pipeline.evolve.models import (LINEAGE_MARKS, OPERATORS, NoVariant, ParentTask, VariantDraft, lineage, root_of,
                                   variant_id)
from pipeline.graph.assemble import AssembledGraph, assemble
from pipeline.synth.compose import (PathStep, SynthesizedTask, plan_steps, step_category, step_families,
                                    synthesize_task, task_slug)
from pipeline.synth.exercise.path_steps import family_category
from pipeline.synth.context import steps_by_path
from pipeline.synth.limits import MAX_STEPS
from pipeline.synth.recipes import REGISTRY, by_category
from pipeline.synth.recipes.base import SynthesisError
from pipeline.synth.skill_fit import NoRecipeError
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.task_toml import parse as parse_task_toml
from workbench.store import lineage as lineage_store
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

STEP_SEP = ">"     # task.toml's `steps` entries: src_anchor>skill_id>dst_anchor


@dataclass(frozen=True)
class ParentPlan:
    """What the parent was composed from: one path step per family, and the seed."""
    steps: list[PathStep]
    recipes: list[str]
    seed: int
    path_id: str


@dataclass(frozen=True)
class Candidate:
    steps: list[PathStep]
    force: list[str | None]       # the family per step; None: the composer draws it
    change: str                   # with {family} for the drawn family, filled in once composed


def step_text(s: PathStep) -> str:
    return STEP_SEP.join((s.src_anchor, s.skill_id, s.dst_anchor))


def variant_name(vid: str, recipes: list[str]) -> str:
    """workbench/<families>-<root id prefix>-<marks>: a variant's name, derived from its id."""
    marks = "-".join(f"{LINEAGE_MARKS[op]}{n}" for op, n in lineage(vid))
    return f"workbench/{task_slug(root_of(vid), recipes)}-{marks}"


class OfflineOperator:
    provider = "offline"

    def __init__(self, ws: Workspace, *, base_image: str | None = None):
        self.ws = ws
        self.base_image = base_image or base_image_name()
        self._graph: AssembledGraph | None = None

    def graph(self) -> AssembledGraph:
        if self._graph is None:
            self._graph = assemble(self.ws.db)
        return self._graph

    # --- the parent --------------------------------------------------------------------------

    def plan_of(self, parent: ParentTask) -> ParentPlan:
        """The parent's composed steps (a variant's from its task.toml, an original's from its path)."""
        where = f"task {parent.task_id}"
        provider = str(parent.record.get("provider") or "offline")
        if provider != "offline":
            raise NoVariant(f"{where} was built by provider {provider!r}; the offline operators change recipe tasks")
        try:
            meta = parse_task_toml(parent.bundle.text("task.toml"), f"{where}: task.toml").metadata
        except (ValueError, KeyError) as exc:
            raise NoVariant(f"{where}: its task.toml cannot be read ({exc})") from None
        recipes = list(meta.recipes)
        if unknown := [r for r in recipes if r not in REGISTRY]:
            raise NoVariant(f"{where}: recipe families {', '.join(unknown)} are not in this synthesizer")
        path_id = str(parent.record.get("path_id") or meta.path_id)
        if meta.steps:
            triples = [tuple(s.split(STEP_SEP)) for s in meta.steps]
            if any(len(t) != 3 for t in triples):
                raise NoVariant(f"{where}: task.toml steps {meta.steps} are not src>skill>dst")
            frame = lineage_store.variant_path_frame(self.ws.db, parent.task_id, triples)
            steps = steps_by_path(frame).get(parent.task_id, [])
        else:
            steps = steps_by_path(task_store.path_steps_with_skills(self.ws.db, [path_id])).get(path_id, [])
            steps = [s for s, _ in plan_steps(steps)][:len(recipes)]   # a one-skill path was composed twice
        if not steps or len(steps) != len(recipes):
            raise NoVariant(f"{where}: its {len(recipes)} families do not match the {len(steps)} steps stored "
                            f"for path {path_id!r}")
        return ParentPlan(steps, recipes, int(meta.seed), path_id)

    # --- the operators -----------------------------------------------------------------------

    def make(self, parent: ParentTask, operator: str, n: int = 1) -> VariantDraft:
        if operator not in OPERATORS:
            raise ValueError(f"operator {operator!r}: choose one of {', '.join(OPERATORS)}")
        vid = variant_id(parent.task_id, operator, n)       # checks n too
        plan = self.plan_of(parent)
        candidates = {"harder": self._harder, "context_switch": self._context_switch,
                      "easier": self._easier}[operator](plan)
        found, reasons = 0, []
        for cand in candidates:
            try:
                task = self._compose(vid, parent, operator, plan, cand, name="workbench/probe")
            except (SynthesisError, NoRecipeError, KeyError) as exc:
                reasons.append(f"{cand.change.format(family='?')}: {exc}")
                continue
            found += 1
            if found == n:
                task = self._compose(vid, parent, operator, plan, cand, name=variant_name(vid, task.recipes))
                return self._draft(vid, parent, operator, cand, task)
        if not reasons and not found:
            raise NoVariant(self._none_why(operator, plan))
        what = f"only {found} of the {n} asked for" if found else "none"
        raise NoVariant(f"{operator} of {parent.task_id}: {what} of the candidate changes composes"
                        + (f" (first: {reasons[0]})" if reasons else ""))

    def _none_why(self, operator: str, plan: ParentPlan) -> str:
        if operator == "easier":
            return "one step left: an easier variant would have none"
        if operator == "harder":
            if len(plan.steps) >= MAX_STEPS:
                return f"already {MAX_STEPS} steps, the most the composer makes"
            return f"no skill edge or bridge leaves the last step's scenario {plan.steps[-1].dst_anchor}"
        return "no other family or skill can serve any of its steps"

    def _harder(self, plan: ParentPlan) -> Iterator[Candidate]:
        if len(plan.steps) >= MAX_STEPS:
            return
        g = self.graph()
        last = plan.steps[-1]
        node = _node_of(g, last.dst_anchor)
        if node is None:
            return
        tg = g.transitions
        used = {s.skill_id for s in plan.steps}
        edges = sorted({(str(g.skill_ids[s]), str(g.anchors[d]), int(g.skill_clusters["pre"].iat[s]) != node)
                        for s, d in zip(tg.skill[tg.indptr[node]:tg.indptr[node + 1]],
                                        tg.dest[tg.indptr[node]:tg.indptr[node + 1]])})
        k = len(plan.steps) + 1
        for skill, dst, bridged in edges:
            if skill in used:
                continue
            step = self._step(last.dst_anchor, skill, dst)
            how = "a bridge" if bridged else "a skill edge"
            yield Candidate(plan.steps + [step], list(plan.recipes) + [None],
                            f"added step {k} ({{family}}, skill {_label(step)}) along {how} "
                            f"{last.dst_anchor} > {dst}")

    def _context_switch(self, plan: ParentPlan) -> Iterator[Candidate]:
        recipes = plan.recipes
        for i in reversed(range(len(plan.steps))):
            step, cat = plan.steps[i], step_category(plan.steps[i])
            for alt in _other_families(step, cat, recipes, i):
                force = list(recipes)
                force[i] = alt
                yield Candidate(list(plan.steps), force,
                                f"step {i + 1} served by {alt} ({REGISTRY[alt].category}) instead of "
                                f"{recipes[i]} ({family_category(recipes[i])})")
        g = self.graph()
        for i in reversed(range(len(plan.steps))):     # then another skill between the same two scenarios
            step = plan.steps[i]
            src, dst = _node_of(g, step.src_anchor), _node_of(g, step.dst_anchor)
            if src is None or dst is None:
                continue
            tg = g.transitions
            sl = slice(tg.indptr[src], tg.indptr[src + 1])
            others = sorted({str(g.skill_ids[s]) for s, d in zip(tg.skill[sl], tg.dest[sl])
                             if d == dst and str(g.skill_ids[s]) != step.skill_id})
            for skill in others:
                new = self._step(step.src_anchor, skill, step.dst_anchor)
                force: list[str | None] = list(recipes)
                force[i] = None
                yield Candidate(plan.steps[:i] + [new] + plan.steps[i + 1:], force,
                                f"step {i + 1} uses skill {_label(new)} instead of {_label(step)} "
                                f"(same scenarios; family {{family}})")

    def _easier(self, plan: ParentPlan) -> Iterator[Candidate]:
        n = len(plan.steps)
        if n <= 1:
            return
        for i in dict.fromkeys([n - 1, 0, *range(1, n - 1)]):
            yield Candidate(plan.steps[:i] + plan.steps[i + 1:], plan.recipes[:i] + plan.recipes[i + 1:],
                            f"dropped step {i + 1} ({plan.recipes[i]}, skill {_label(plan.steps[i])})")

    # --- composing -----------------------------------------------------------------------------

    def _step(self, src: str, skill: str, dst: str) -> PathStep:
        frame = lineage_store.variant_path_frame(self.ws.db, "new", [(src, skill, dst)])
        return steps_by_path(frame)["new"][0]

    def _compose(self, vid: str, parent: ParentTask, operator: str, plan: ParentPlan, cand: Candidate,
                 name: str) -> SynthesizedTask:
        lineage_meta = {"parent_id": parent.task_id, "operator": operator,
                        "steps": [step_text(s) for s in cand.steps]}
        return synthesize_task(cand.steps, plan.seed, self.base_image, plan.path_id, force=cand.force,
                               variant={"task_id": vid, "name": name, "lineage": lineage_meta})

    def _draft(self, vid: str, parent: ParentTask, operator: str, cand: Candidate,
               task: SynthesizedTask) -> VariantDraft:
        drawn = [r for r, f in zip(task.recipes, cand.force) if f is None]
        steps = cand.steps
        return VariantDraft(
            task_id=vid, parent_id=parent.task_id, operator=operator,
            change=cand.change.format(family=", ".join(drawn) or "?"), bundle=task.bundle, name=task.name,
            category=task.category, difficulty=task.difficulty, n_steps=len(task.recipes), recipes=task.recipes,
            skill_ids=[s.skill_id for s in steps],
            scenario_ids=list(dict.fromkeys(a for s in steps for a in (s.src_anchor, s.dst_anchor) if a)),
            provider=self.provider,
            details={"near_dup_key": task.near_dup_key, "skill_fidelity": [f.as_dict() for f in task.fidelity],
                     "path_id": parent.record.get("path_id") or "", "steps": [step_text(s) for s in steps]})


def _node_of(g: AssembledGraph, anchor: str) -> int | None:
    hits = (g.anchors == anchor).nonzero()[0]
    return int(hits[0]) if len(hits) else None


def _label(step: PathStep) -> str:
    return (step.skill_name or "").strip() or step.skill_id


def _other_families(step: PathStep, cat: str, recipes: list[str], i: int) -> list[str]:
    """Families that may serve step i instead of its own, allowed where it stands (not its
    neighbours' families, none used twice already): its category's first, then others that fit
    its skill's tools or state kinds; specific families before universal sinks."""
    try:
        fitting = {r.name for tier in step_families(step, cat) for r in tier}
    except NoRecipeError:
        fitting = set()
    rest = recipes[:i] + recipes[i + 1:]
    barred = {recipes[i]} | set(recipes[i - 1:i]) | set(recipes[i + 1:i + 2]) | {r for r in rest if rest.count(r) >= 2}
    names = [n for n in fitting | {r.name for r in by_category(cat)} if n not in barred]
    return sorted(names, key=lambda n: (REGISTRY[n].universal, REGISTRY[n].category != cat, n))
