"""The constructor (issue 13, Deliver 2): FACET's forward order for one planned path.

environment manifest -> build (repaired from the build log) -> the real container state,
read through a Session -> instruction (from that state and the plan) -> solution, run in a
live Session so its effects are known -> tests (from the observed before and after states).

Every artifact passes its static guard (pipeline.synth.llm.guard) and, where it runs, its
run, before the next one is written; a failure is repaired through the artifact's repair
stage while the task's RepairBudget allows (`Work.settle`). A reply that never fits its
schema counts as a failed attempt of its artifact (check `guard.reply`, with an excerpt of
the raw text) and is asked again through the repair stage. `Exhausted` says construction
cannot go on. The full verification and routed repair of the finished draft live in
pipeline.synth.llm.repair_loop.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from pipeline.repair.attempts import RepairAttempt
from pipeline.repair.route import RepairBudget, pick, unified_diff
from pipeline.synth.llm import guard, render
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.models import (ENVIRONMENT, INSTRUCTION, REPAIR, SOLUTION, TESTS, EnvManifest,
                                       Instruction, Plan, Solution, TestsDraft)
from pipeline.synth.llm.planner import BASE_TOOLS, path_text
from pipeline.synth.llm.state import ContainerState, StateDiff, diff_states, read_state
from pipeline.synth.protocol import PathContext, SynthTools
from pipeline.verify.failures import Failure, tail
from workbench.llm.client import LLMResult, StructuredOutputError
from workbench.sandbox.bundle import BundleError, TaskBundle, tree_hash
from workbench.sandbox.engine import Limits
from workbench.sandbox.session import SessionStopped

SOLVE_CHECK = "solve"            # solve.sh run in a live Session (crash / timeout / limit -> solution)
REPLY_CHECK = "guard.reply"      # a reply that never fit its stage's schema
RENDER_CHECK = "guard.render"    # a manifest or tests draft that cannot be laid out as a bundle
EVIDENCE_LINES = 30
UNCHANGED = "the repair reply changed nothing"
RAW_EXCERPT = 1500               # characters of an unusable reply kept as evidence
STATE_CHARS = 12000              # container state in a prompt
BUILD_TIMEOUT_S = 600.0
ALLOWED_IMAGES = frozenset({"base"})
SESSION_MARGIN_S = 120.0
LLM_WAIT_S = 1800.0              # how long a Session may idle through instruction and solution calls

SCHEMAS: dict[str, type[BaseModel]] = {"environment": EnvManifest, "solution": Solution,
                                       "tests": TestsDraft, "instruction": Instruction}
FILE_OF = {"environment": "environment.json", "solution": "solution/solve.sh",
           "tests": "tests/test_outputs.py", "instruction": "instruction.md"}


class Stopped(Exception):
    """The batch asked to stop (SynthTools.stop): the task is left unfinished, resume makes it."""


class Exhausted(Exception):
    """An artifact still fails and its repair budget is spent; `failures` say what still fails."""

    def __init__(self, failures: list[Failure]):
        self.failures = failures
        super().__init__("; ".join(f"{f.artifact} ({f.check}): {f.reason}" for f in failures))


def artifact_text(artifact: str, model: BaseModel | None) -> str:
    """An artifact as a person (and a diff, and a repair prompt) reads it."""
    if model is None:
        return ""
    if artifact == "environment":
        return json.dumps(model.model_dump(), indent=1)
    if artifact == "solution":
        return model.solve_sh
    if artifact == "tests":
        return model.test_py + (f"\n# weights: {json.dumps(model.weights, sort_keys=True)}\n" if model.weights else "")
    return render.instruction_md(model)


@dataclass
class Draft:
    """The artifacts so far and what was observed of them."""
    manifest: EnvManifest | None = None
    instruction: Instruction | None = None
    solution: Solution | None = None
    tests: TestsDraft | None = None
    image: str | None = None
    before: ContainerState | None = None
    after: ContainerState | None = None
    diff: StateDiff | None = None


class Work:
    """One task's construction: its path, plan and the shared timer, repair budget and attempts."""

    def __init__(self, caller: LLMCaller, path: PathContext, plan: Plan, tools: SynthTools, *, item: str,
                 agent_timeout_s: float, timer: dict, budget: RepairBudget | None = None):
        self.caller, self.path, self.plan, self.tools = caller, path, plan, tools
        self.item, self.agent_timeout_s, self.timer = item, agent_timeout_s, timer
        self.budget = budget or RepairBudget()
        self.attempts: list[RepairAttempt] = []
        self.plan_json = plan.model_dump_json(indent=1, by_alias=True)
        self.plan_tools = tuple(dict.fromkeys(t for g in plan.subgoals for t in g.tools))
        self.draft = Draft()

    # ------------------------------------------------------------ LLM calls
    def ask(self, stage: str, schema: type[BaseModel], artifact: str, **values: str
            ) -> tuple[BaseModel | None, list[Failure]]:
        """A first reply; an unusable one is a failure of `artifact` (repaired like any other)."""
        self.stop_if_asked()
        try:
            res = self.caller.render_and_ask(stage, self.item, schema, timer=self.timer,
                                             path_id=self.path.path_id, base_tools=BASE_TOOLS, **values)
        except StructuredOutputError as exc:
            return None, [reply_failure(artifact, stage, exc)]
        return res.parsed, []

    def repair(self, artifact: str, failure: Failure, current: BaseModel | None) -> BaseModel | None:
        """One repair call, recorded as a RepairAttempt (None: the repair reply was unusable too)."""
        self.stop_if_asked()
        old = artifact_text(artifact, current)
        evidence = failure.evidence[-EVIDENCE_LINES:]
        attempt = RepairAttempt(n=len(self.attempts) + 1, artifact=artifact, check=failure.check,
                                reason=failure.reason, evidence=evidence + failure.failing_tests[:10])
        self.attempts.append(attempt)
        shown = "\n".join(evidence + [f"failing test: {t}" for t in failure.failing_tests[:10]]) or "(none)"
        try:
            res: LLMResult = self.caller.render_and_ask(
                REPAIR[artifact], self.item, SCHEMAS[artifact], timer=self.timer, path_id=self.path.path_id,
                base_tools=BASE_TOOLS, check=failure.check, reason=failure.reason, evidence=shown,
                current=old or "(none: the first reply could not be used)", history=self.history_of(artifact),
                context=self.context_for(artifact))
        except StructuredOutputError as exc:
            attempt.outcome = "still_failing"
            attempt.evidence = attempt.evidence + [f"repair reply unusable: {exc}"[:300]]
            return None
        attempt.prompt_tokens, attempt.completion_tokens = res.prompt_tokens, res.completion_tokens
        attempt.cost_usd = res.cost_usd
        attempt.diff = unified_diff(old, artifact_text(artifact, res.parsed), FILE_OF[artifact])
        return res.parsed

    def history_of(self, artifact: str) -> str:
        """The earlier repairs of `artifact` (the one being made left out), for its repair prompt:
        a model shown what did not work tries something else, and the prompt is not the one cached."""
        lines = [f"- attempt {a.n} ({a.check}): {a.reason[:300]} -> {a.outcome}"
                 for a in self.attempts[:-1] if a.artifact == artifact]
        return "\n".join(lines) or "(none)"

    def settle(self, artifact: str, model: BaseModel | None, failures: list[Failure],
               check: Callable[[BaseModel], list[Failure]]) -> BaseModel:
        """Repair `artifact` until `check` finds nothing, within the budget; raises Exhausted."""
        while failures:
            if not self.budget.allows(artifact):
                if self.attempts and self.attempts[-1].artifact == artifact:
                    self.attempts[-1].outcome = "exhausted"
                raise Exhausted(failures)
            # a guard may blame another artifact (an instruction naming files the manifest lacks
            # is the instruction's): this loop repairs only its own, as its caller asked
            picked = pick([f.model_copy(update={"artifact": artifact}) for f in failures], self.budget)
            if picked is None:
                raise Exhausted(failures)
            self.budget.spend(artifact)
            new = self.repair(artifact, picked, model)
            if new is None:
                continue
            if model is not None and artifact_text(artifact, new) == artifact_text(artifact, model):
                # The same failure would ask the same question again: no repair left to try.
                self.attempts[-1].outcome = "exhausted"
                raise Exhausted([picked.model_copy(update={"reason": f"{UNCHANGED}; {picked.reason}"})])
            model, failures = new, check(new)
            self.attempts[-1].outcome = "fixed" if not failures else "still_failing"
        return model

    def stop_if_asked(self) -> None:
        if self.tools.stop.is_set():
            raise Stopped()

    def context_for(self, artifact: str) -> str:
        """What a repair prompt sees of the task besides the artifact itself."""
        d = self.draft
        parts = [f"Plan:\n{self.plan_json}"]
        if artifact == "environment":
            parts.append("Skills on the path:\n" + path_text(self.path, body_cap=800))
        if artifact != "instruction" and d.instruction is not None:
            parts.append("Instruction:\n" + render.instruction_md(d.instruction))
        if artifact in ("solution", "tests", "instruction") and d.before is not None:
            parts.append("Container state before the solution:\n" + d.before.as_prompt(max_chars=STATE_CHARS // 2))
        if artifact in ("tests", "instruction") and d.diff is not None:
            parts.append("What the reference solution changed:\n" + d.diff.as_prompt())
        if artifact == "instruction" and d.solution is not None:
            parts.append("The reference solve.sh (must NOT appear in the instruction):\n" + d.solution.solve_sh)
        return "\n\n".join(parts)

    # ------------------------------------------------------------ Docker
    def limits(self, waiting: bool = False) -> Limits:
        """A Session's limits; `waiting`: it also waits through LLM calls (a longer lifetime)."""
        wait = LLM_WAIT_S if waiting else 0.0
        return Limits(network=False, lifetime_s=self.agent_timeout_s + SESSION_MARGIN_S + wait)

    def check_environment(self, draft: Draft) -> Callable[[EnvManifest], list[Failure]]:
        """Guard, lay out and build a manifest; on success `draft.image` is the built image."""
        def check(manifest: EnvManifest) -> list[Failure]:
            failures = guard.check_manifest(manifest, set(ALLOWED_IMAGES))
            if failures:
                return failures
            try:
                files = render.environment_files(manifest, self.tools.base_image)
                # the bundle's path rules and caps, before a build is tried (a stub stands in for the rest)
                TaskBundle({**{f"environment/{k}": v for k, v in files.items()},
                            **dict.fromkeys(("instruction.md", "task.toml", "tests/test.sh"), b"")}).validate()
            except (render.RenderError, BundleError) as exc:
                return [Failure(check=RENDER_CHECK, artifact="environment", reason=str(exc))]
            t0 = time.monotonic()
            try:
                res = self.tools.engine.build(files, tree_hash(files), BUILD_TIMEOUT_S)
            finally:
                self.timer["docker_s"] = self.timer.get("docker_s", 0.0) + time.monotonic() - t0
            if not res.ok:
                return [Failure(check="build", artifact="environment", reason=res.reason,
                                evidence=tail(res.log, EVIDENCE_LINES))]
            draft.image = res.image
            return []
        return check

    def read_before(self, draft: Draft, session=None) -> None:
        if session is not None:
            draft.before = read_state(session, tools=self.plan_tools)
            return
        with self.tools.engine.session(draft.image, self.limits(), purpose="synth-state", timer=self.timer) as s:
            draft.before = read_state(s, tools=self.plan_tools)

    def check_solution(self, draft: Draft, pristine=None) -> Callable[[Solution], list[Failure]]:
        """Run solve.sh in a pristine environment and observe its effects: the first run in
        `pristine` (the Session the state before was read in, untouched since), every other in a
        fresh Session."""
        spare = [pristine] if pristine is not None else []

        def check(solution: Solution) -> list[Failure]:
            failures = guard.check_solution(solution.solve_sh)
            if failures:
                return failures
            if spare:
                session = spare.pop()
                if _alive(session):
                    return self._observe(draft, session, solution)
            with self.tools.engine.session(draft.image, self.limits(), purpose="synth-solve", timer=self.timer) as s:
                return self._observe(draft, s, solution)
        return check

    def _observe(self, draft: Draft, s, solution: Solution) -> list[Failure]:
        s.write_files({"/solution/solve.sh": solution.solve_sh.encode()}, dest="/")
        res = s.exec("bash /solution/solve.sh", self.agent_timeout_s)
        if not res.ok:
            reason = res.reason("solution/solve.sh", self.agent_timeout_s, s.limits.output_bytes)
            return [Failure(check=SOLVE_CHECK, artifact="solution", reason=reason,
                            evidence=tail(res.output, EVIDENCE_LINES))]
        try:
            after = read_state(s, tools=self.plan_tools, since=draft.before)
        except SessionStopped as exc:   # what solve.sh left made reading the state hit a limit
            return [Failure(check=SOLVE_CHECK, artifact="solution",
                            reason=f"solve.sh finished, but reading what it left failed: {exc}")]
        draft.after, draft.diff = after, diff_states(draft.before, after)
        return []

    def check_instruction(self, draft: Draft) -> Callable[[Instruction], list[Failure]]:
        def check(instruction: Instruction) -> list[Failure]:
            produced = set(draft.diff.changed_paths) if draft.diff is not None else set()
            solve = draft.solution.solve_sh if draft.solution is not None else ""
            return guard.check_instruction(render.instruction_md(instruction), draft.before, produced, solve)
        return check

    @staticmethod
    def check_tests(tests: TestsDraft) -> list[Failure]:
        failures = guard.check_tests(tests.test_py)
        if failures:
            return failures
        try:
            render.test_sh_for(tests)
        except render.RenderError as exc:
            return [Failure(check=RENDER_CHECK, artifact="tests", reason=str(exc))]
        return []

    # ------------------------------------------------------------ the forward order
    def construct(self) -> Draft:
        """Every artifact, each checked before the next is written; raises Exhausted."""
        d = self.draft = Draft()
        steps = path_text(self.path, body_cap=1500)
        manifest, failures = self.ask(ENVIRONMENT, EnvManifest, "environment", plan=self.plan_json, steps=steps)
        check_env = self.check_environment(d)
        d.manifest = self.settle("environment", manifest, failures or check_env(manifest), check_env)
        # The state is read in a Session that then waits, untouched, through the instruction and
        # solution calls: the first solve.sh run needs no container of its own.
        with self.tools.engine.session(d.image, self.limits(waiting=True), purpose="synth-state",
                                       timer=self.timer) as pristine:
            self.read_before(d, pristine)
            state = d.before.as_prompt(max_chars=STATE_CHARS)
            instruction, failures = self.ask(INSTRUCTION, Instruction, "instruction", plan=self.plan_json,
                                             state=state)
            if instruction is None:   # an instruction is needed to write the solution: repair it first
                instruction = self.settle("instruction", None, failures, lambda m: [])
            d.instruction = instruction
            text = render.instruction_md(instruction)
            solution, failures = self.ask(SOLUTION, Solution, "solution", plan=self.plan_json, instruction=text,
                                          state=state)
            check_sol = self.check_solution(d, pristine)
            d.solution = self.settle("solution", solution, failures or check_sol(solution), check_sol)
        check_ins = self.check_instruction(d)
        d.instruction = self.settle("instruction", d.instruction, check_ins(d.instruction), check_ins)
        tests, failures = self.ask(TESTS, TestsDraft, "tests", instruction=render.instruction_md(d.instruction),
                                   before=state, diff=d.diff.as_prompt(), plan=self.plan_json)
        d.tests = self.settle("tests", tests, failures or self.check_tests(tests), self.check_tests)
        return d


def _alive(session) -> bool:
    """Still running (its lifetime may have ended while it waited on the LLM)."""
    if session.stopped:
        return False
    try:
        session.box.container.reload()
        return session.box.container.status == "running"
    except Exception:   # gone, or the daemon would not say: a fresh Session is the safe choice
        return False


def reply_failure(artifact: str, stage: str, exc: StructuredOutputError) -> Failure:
    raw = (exc.raw_text or "")[:RAW_EXCERPT]
    return Failure(check=REPLY_CHECK, artifact=artifact,
                   reason=f"the {stage} reply is not valid JSON for its schema: {str(exc)[:400]}",
                   evidence=["raw reply (start):"] + (raw.splitlines() or ["(empty)"]))

