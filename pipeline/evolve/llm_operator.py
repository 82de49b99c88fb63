"""SETA-Evol's operators on LLM-built tasks (provider "llm"): the model rewrites the parent task
whole, and the variant goes through the constructor's checks and the synthesizer's repair loop.

One `evolve_task` call (workbench/prompts/evolve_task.md; stage `evolve_task`, item = the
variant id, so llm_calls reads the cost per variant) is given the parent's four artifacts, the
skills of its path and the operator's directive, and answers `EvolvedTask`: the constructor's
artifacts (environment manifest, instruction, solution, tests), a plan and a one-line `change`.
From there the variant is treated as a constructed draft of the LLM synthesizer
(pipeline.synth.llm): each artifact is guarded and run in FACET's order (build, the container
state, solve.sh in a live Session, the instruction against what it made, the tests) and
repaired through its own repair stage, then the bundle is verified (no-op must fail, oracle
must pass, rubric, decontamination, the judge) and the artifact at fault of any failed check
is repaired, at most EVOLVE_REPAIRS times per kind of artifact.

`make` never writes the workspace. A reply that is no usable variant (not the schema, an
empty or multi-line change, the parent unchanged) or a variant that cannot be built is
`NoVariant` naming the stage and what was wrong. A variant whose checks still fail with its
repairs spent is handed back with its failing checks and `details["error"]` (the driver's
verification rejects it with that reason). `BudgetExceeded`, an endpoint's own failure and
`Stopped` (the round was asked to stop) propagate.
"""
from __future__ import annotations

import json
import time

from pydantic import BaseModel, Field, field_validator

from pipeline.evolve.models import LINEAGE_MARKS, OPERATORS, NoVariant, ParentTask, VariantDraft, variant_id
from pipeline.repair.route import RepairBudget, exhausted_reason
from pipeline.synth.compose import step_category
from pipeline.synth.llm import render
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.constructor import Draft, Exhausted, Work
from pipeline.synth.llm.models import EnvManifest, Instruction, Plan, Solution, TestsDraft
from pipeline.synth.llm.planner import path_text
from pipeline.synth.llm.repair_loop import verify_and_repair
from pipeline.synth.llm.synthesizer import VERIFIER_TIMEOUT_S, difficulty_of, draft_fidelity, near_duplicate_key
from pipeline.synth.protocol import PathContext, SynthTools
from workbench.llm.client import StructuredOutputError
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import BundleError, TaskBundle
from workbench.sandbox.task_toml import parse as parse_toml

EVOLVE = "evolve_task"           # the stage: llm_calls.stage and the prompt template's name
EVOLVE_MARK = "evolve:"          # every prompt about a variant says `Path: evolve:<variant id>`
EVOLVE_REPAIRS = 3               # repairs per kind of artifact (environment; solution/tests/instruction)
CHANGE_CAP = 300                 # characters of the one-line change a person reads
KEPT = "<<unchanged>>"            # a file's content in the prompt and the reply: the parent's, kept as is
SHOWN_CAP = 4000                 # characters of one environment file shown whole in the prompt
EXCERPT_LINES = 20               # lines shown of a file that travels as KEPT
STEPS_CAP = 800                  # characters of each SKILL.md body shown to the model
DIRECTIVES = {
    "harder": "make it harder: add one more step along the path's skills, a constraint, an edge case "
              "or more data, so that the parent's solve.sh no longer passes the variant's tests",
    "context_switch": "keep the difficulty (as many steps and checks) but use another tool or another "
                      "domain for one step",
    "easier": "make it easier: drop one step (the last, when it has several) or one edge case",
}


class EvolvedTask(BaseModel):
    """The evolve_task reply: the constructor's artifacts, a plan and what changed."""
    change: str = Field(min_length=1, max_length=CHANGE_CAP)
    plan: Plan
    environment: EnvManifest
    instruction: Instruction
    solution: Solution
    tests: TestsDraft

    @field_validator("change")
    @classmethod
    def _one_line(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("change is empty: say in one line what the variant changed")
        if "\n" in v:
            raise ValueError("change must be one line")
        return v


def prompt_path_id(vid: str) -> str:
    """The `Path:` of every prompt about variant `vid` (its evolve, repair and judge calls)."""
    return EVOLVE_MARK + vid


def parent_json(manifest: EnvManifest, instruction: Instruction, solution: Solution, tests: TestsDraft) -> str:
    """The parent's artifacts as the prompt shows them (and the scripted model reads them back)."""
    return json.dumps({"environment": manifest.model_dump(), "instruction": instruction.model_dump(),
                       "solution": solution.model_dump(), "tests": tests.model_dump()}, indent=1)


def shown_manifest(manifest: EnvManifest) -> EnvManifest:
    """The parent's manifest as the prompt shows it: a file longer than SHOWN_CAP characters travels
    as KEPT (the model neither reads nor has to repeat a large data file it keeps)."""
    return manifest.model_copy(update={"files": [f.model_copy(update={"content": KEPT}) if len(f.content) > SHOWN_CAP
                                                 else f for f in manifest.files]})


def excerpts(manifest: EnvManifest) -> str:
    """What the model sees of the files shown as KEPT: their size and first lines."""
    out = []
    for f in manifest.files:
        if len(f.content) > SHOWN_CAP:
            head = "\n".join(f.content.splitlines()[:EXCERPT_LINES]) if f.encoding == "utf-8" else "(binary)"
            out.append(f"{f.path} ({len(f.content)} characters, {f.encoding}), first lines:\n{head[:SHOWN_CAP]}")
    return "\n\n".join(out) or "(none: every file is shown whole)"


def with_kept_files(reply: EnvManifest, parent: EnvManifest) -> EnvManifest:
    """The reply's manifest with each KEPT file given back its parent's content; raises ValueError
    (naming the file) for a KEPT file the parent does not have."""
    by_path = {f.path: f for f in parent.files}
    files = []
    for i, f in enumerate(reply.files):
        if f.content == KEPT:
            if f.path not in by_path:
                raise ValueError(f"environment: files[{i}] ({f.path!r}) is marked {KEPT}, but the parent has no such file")
            f = by_path[f.path].model_copy(update={"executable": f.executable})
        files.append(f)
    return reply.model_copy(update={"files": files})


def _artifacts_json(ev: EvolvedTask) -> str:
    return parent_json(ev.environment, ev.instruction, ev.solution, ev.tests)


def settle_variant(work: Work, ev: EvolvedTask) -> Draft:
    """The constructor's forward order on artifacts already written: each is guarded and run,
    and repaired through its own stage until it passes; raises Exhausted."""
    d = work.draft = Draft()
    check_env = work.check_environment(d)
    d.manifest = work.settle("environment", ev.environment, check_env(ev.environment), check_env)
    # the first solve.sh run uses the Session the state was read in, untouched since (as construct does)
    with work.tools.engine.session(d.image, work.limits(waiting=True), purpose="evolve-state",
                                   timer=work.timer) as pristine:
        work.read_before(d, pristine)
        d.instruction = ev.instruction
        check_sol = work.check_solution(d, pristine)
        d.solution = work.settle("solution", ev.solution, check_sol(ev.solution), check_sol)
    check_ins = work.check_instruction(d)
    d.instruction = work.settle("instruction", d.instruction, check_ins(d.instruction), check_ins)
    d.tests = work.settle("tests", ev.tests, work.check_tests(ev.tests), work.check_tests)
    return d


class LlmOperator:
    """The `llm` backend of pipeline.evolve.models.EvolveOperator."""
    provider = "llm"

    def __init__(self, caller: LLMCaller, *, engine, base_image: str | None = None, ws=None, judge: bool = True,
                 solve_timeout_s: float | None = None, benchmark=None, allow_network: bool = False, stop=None):
        """`ws`: where the parent's path context (its skills) is read; without it the prompt
        and the judge see no skills. `stop`: a threading.Event the round sets to stop."""
        self.caller, self.ws, self.judge = caller, ws, judge
        self.solve_timeout_s = solve_timeout_s
        self.tools = SynthTools(engine=engine, base_image=base_image or base_image_name(), benchmark=benchmark,
                                allow_network=allow_network)
        if stop is not None:
            self.tools.stop = stop

    def _path(self, vid: str, path_id: str) -> PathContext:
        ctx = None
        if self.ws is not None and path_id:
            from pipeline.synth.context import path_contexts
            ctx = path_contexts(self.ws, [path_id]).get(path_id)
        return PathContext(path_id=prompt_path_id(vid), steps=ctx.steps if ctx is not None else ())

    def agent_timeout_s(self, n_steps: int) -> float:
        return float(self.solve_timeout_s) if self.solve_timeout_s else float(300 + 300 * n_steps)

    def make(self, parent: ParentTask, operator: str, n: int) -> VariantDraft:
        if operator not in OPERATORS:
            raise ValueError(f"operator {operator!r}: choose one of {', '.join(OPERATORS)}")
        vid = variant_id(parent.task_id, operator, n)
        t0 = time.monotonic()
        timer: dict[str, float] = {"llm_s": 0.0, "docker_s": 0.0}
        try:
            toml = parse_toml(parent.bundle.text("task.toml"))
            manifest, instruction, solution, tests = render.artifacts_from_bundle(parent.bundle)
        except Exception as exc:   # a parent bundle we cannot read back is no variant, said why
            raise NoVariant(f"{EVOLVE} of {parent.task_id}: the parent's bundle cannot be read back: {exc}") from None
        meta = toml.metadata
        path_id = str(parent.record.get("path_id") or meta.path_id or "")
        path = self._path(vid, path_id)
        try:
            res = self.caller.render_and_ask(
                EVOLVE, vid, EvolvedTask, timer=timer, path_id=path.path_id, variant_id=vid,
                parent_path=path_id or "(none)", operator=operator, directive=DIRECTIVES[operator],
                steps=path_text(path, body_cap=STEPS_CAP) or "(not known)",
                parent=parent_json(shown_manifest(manifest), instruction, solution, tests),
                excerpts=excerpts(manifest))
        except StructuredOutputError as exc:
            raise NoVariant(f"{EVOLVE} ({operator}) of {parent.task_id}: the reply is not valid JSON for its "
                            f"schema: {str(exc)[:400]}") from None
        ev: EvolvedTask = res.parsed
        try:
            ev = ev.model_copy(update={"environment": with_kept_files(ev.environment, manifest)})
        except ValueError as exc:
            raise NoVariant(f"{EVOLVE} ({operator}) of {parent.task_id}: {exc}") from None
        if _artifacts_json(ev) == parent_json(manifest, instruction, solution, tests):
            raise NoVariant(f"{EVOLVE} ({operator}) of {parent.task_id}: the reply is the parent unchanged")

        n_steps = len(ev.plan.subgoals)
        work = Work(self.caller, path, ev.plan, self.tools, item=vid, agent_timeout_s=self.agent_timeout_s(n_steps),
                    timer=timer, budget=RepairBudget(max_environment=EVOLVE_REPAIRS, max_task=EVOLVE_REPAIRS))
        try:
            draft = settle_variant(work, ev)
        except Exhausted as exc:
            err = NoVariant(f"{EVOLVE} ({operator}) of {parent.task_id}: the variant could not be built: "
                            f"{exhausted_reason(exc.failures, work.budget)}")
            err.attempts = [a.model_dump() for a in work.attempts]
            raise err from None

        category = meta.category or (step_category(path.steps[0].step) if path.steps else "file-operations")
        difficulty = difficulty_of(ev.plan, n_steps)
        name = f"{toml.name}-{LINEAGE_MARKS[operator]}{n}"
        metadata = {"path_id": path_id, "seed": meta.seed, "provider": self.provider,
                    "skill_ids": list(meta.skill_ids),
                    "scenario_ids": list(meta.scenario_ids), "parent_id": parent.task_id, "operator": operator,
                    "tags": list(dict.fromkeys(["llm", "evolved", operator, *meta.tags]))[:20]}

        # the path steps the variant still has (an easier one fewer; a harder one's extra step is on no path)
        kept = PathContext(path.path_id, path.steps[:n_steps])
        recipes = list(meta.recipes[:n_steps] if n_steps < len(meta.recipes) else meta.recipes)
        fidelity: list[dict] = []     # of the draft last laid out: the variant's, once verified

        def make_bundle(d: Draft) -> TaskBundle:
            fidelity[:] = [f.as_dict() for f in draft_fidelity(d, kept, ev.plan)] if kept.steps else []
            return render.bundle_from_artifacts(
                name=name, category=category, difficulty=difficulty, manifest=d.manifest, instruction=d.instruction,
                solution=d.solution, tests=d.tests, base_image=self.tools.base_image,
                agent_timeout_sec=work.agent_timeout_s, verifier_timeout_sec=VERIFIER_TIMEOUT_S,
                metadata={**metadata, "recipes": recipes, "skill_fidelity": list(fidelity)})

        try:
            verified = verify_and_repair(work, draft, make_bundle, judge=self.judge)
        except (render.RenderError, BundleError) as exc:
            raise NoVariant(f"{EVOLVE} ({operator}) of {parent.task_id}: the variant cannot be laid out: {exc}") from None
        timer["total_s"] = time.monotonic() - t0
        details = {"attempts": [a.model_dump() for a in work.attempts],
                   "checks": [c.model_dump() for c in verified.checks], "error": verified.error,
                   "timings": dict(timer), "near_dup_key": near_duplicate_key(verified.bundle.text("instruction.md")),
                   "skill_fidelity": list(fidelity)}
        return VariantDraft(task_id=vid, parent_id=parent.task_id, operator=operator, change=ev.change,
                            bundle=verified.bundle, name=name, category=category, difficulty=difficulty,
                            n_steps=n_steps, recipes=recipes, skill_ids=list(meta.skill_ids),
                            scenario_ids=list(meta.scenario_ids), provider=self.provider, details=details)
