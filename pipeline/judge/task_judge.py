"""SkillSynth's rubric check by an LLM: one verdict with evidence per criterion of a task.

It runs only after the static rubric (`pipeline.verify.rubric`) passed: the constructor
(`pipeline.synth.llm`) calls `judge_task` then and stores its result as check "judge".
The judge reads the bundle's instruction.md, tests and solve.sh and the path's skills with
their tools. Each criterion names the artifact to repair when it fails (`CRITERIA`;
`tests_asked_for` says in its reply whether the test or the instruction is wrong), which
`pipeline.verify.failures.failures_of` reads from `details["criteria"]`.

The call goes through the batch's client: cached (same bundle text, template version and
model: no new call) and cost-accounted under stage `task_judge` with the task id as item.
A reply that never fits the schema, or whose evidence is not a line of the instruction or
the tests nor a test's name, is no verdict on the task: the check fails with
`details["unusable"]` and no criteria (nothing to repair; a person looks), as the curation
judge (`pipeline.filters.llm_judge`) turns such replies into warnings, never a pass.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from pipeline.filters.llm_judge import NO_VERDICT, quoted_line
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.models import JUDGE
from pipeline.synth.protocol import PathContext
from pipeline.verify.failures import Artifact
from workbench.llm.client import LLMCallError
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle

CHECK = "judge"
STAGE = JUDGE


@dataclass(frozen=True)
class Criterion:
    name: str
    meaning: str           # as the judge is told
    artifact: Artifact     # at fault when it fails (tests_asked_for: the reply's `fault` decides)


CRITERIA: tuple[Criterion, ...] = (
    Criterion("requirements_tested", "every requirement of the instruction (each file, value, format or "
              "condition it asks for) is checked by at least one test", "tests"),
    Criterion("tests_asked_for", "every test checks something the instruction asks for; no test demands "
              "a result, name or format the instruction never states", "tests"),
    Criterion("no_solution_leak", "the instruction states the goal and does not give away the commands, "
              "the code or the step-by-step method of solve.sh", "instruction"),
    Criterion("unambiguous", "the instruction has one reading of what success is: the paths, formats and "
              "values the tests check follow from it, and nothing in it contradicts itself", "instruction"),
    Criterion("exercises_skills", "solving the task really needs the skills of its path: the work of each "
              "step's skill, done with that skill's tools, is part of what the instruction asks", "instruction"),
)
# Caps on the prompt's cost (the head of each file holds what matters); the cut is said.
MAX_CHARS = {"instruction": 12_000, "tests": 16_000, "solution": 8_000}
_BLOCKS = ("instruction_md", "tests", "solve_sh", "path")
_CLOSING_TAG = re.compile(r"</\s*(" + "|".join(_BLOCKS) + r")\b", re.I)
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", re.M)
# A test's name, as a node id or a call, maybe followed by a remark ("test_sum: wants a newline").
_TEST_REF = re.compile(r"`?(?:(?P<file>[\w./-]+\.py)::)?(?:\w+::)?(?P<name>test\w*)(?:\(\))?`?(?=$|[\s:,;.—-])")


class CriterionVerdict(BaseModel):
    passed: bool
    evidence: str = Field(min_length=1, description="one line copied exactly from instruction.md, "
                                                    "or the name of one test function")
    note: str = Field(description="one short sentence saying why")

    @field_validator("evidence", "note", mode="before")
    @classmethod
    def _short(cls, v):  # length is cosmetic: cut, don't re-ask
        return v.strip()[:300] if isinstance(v, str) else v


class AskedForVerdict(CriterionVerdict):
    fault: Literal["tests", "instruction"] = Field(
        "tests", description='when failed: "tests" if a test checks what the instruction never asks, '
                             '"instruction" if the instruction should ask for what the test checks')


class TaskJudgement(BaseModel):
    """What the judge answers about one task: a verdict per criterion (the names of CRITERIA)."""
    requirements_tested: CriterionVerdict
    tests_asked_for: AskedForVerdict
    no_solution_leak: CriterionVerdict
    unambiguous: CriterionVerdict
    exercises_skills: CriterionVerdict


assert tuple(TaskJudgement.model_fields) == tuple(c.name for c in CRITERIA), "one name per criterion"


@dataclass(frozen=True)
class JudgedText:
    """The parts of a bundle the judge reads, and where a quote of it may come from."""
    instruction: str
    tests: dict[str, str]          # tests/*.py path -> source
    solution: str

    @classmethod
    def of(cls, bundle: TaskBundle) -> JudgedText:
        def text(path: str) -> str:  # a missing file reads as empty: the judge then says what lacks
            return bundle.text(path) if path in bundle.files else ""
        tests = {p: bundle.text(p) for p in sorted(bundle.files) if p.startswith("tests/") and p.endswith(".py")}
        return cls(text("instruction.md"), tests, text("solution/solve.sh"))

    def test_names(self) -> dict[str, str]:
        """Test function name -> the file that defines it."""
        return {name: path for path, src in self.tests.items() for name in _TEST_DEF.findall(src)}

    def locate(self, evidence: str) -> str | None:
        """Where the evidence is in the bundle ("instruction.md:3", "tests/x.py::test_y"), or None."""
        ref = _TEST_REF.match(evidence.strip())
        names = self.test_names()
        if ref and ref.group("name") in names:
            return f"{names[ref.group('name')]}::{ref.group('name')}"
        for path, text in (("instruction.md", self.instruction), *self.tests.items()):
            line = quoted_line(text, evidence)
            if line is not None:
                return f"{path}:{line}"
        return None


def _block(text: str, cap: int) -> str:
    # Bundle texts were written by a model and are hostile: none may close the block it sits in.
    text = _CLOSING_TAG.sub(r"<\\/\1", text)
    if len(text) > cap:
        text = text[:cap] + f"\n[... {len(text) - cap} more characters cut]"
    return text


def steps_text(path: PathContext) -> str:
    """Each step's skill with what it does and its tools, as the judge is shown them."""
    lines = []
    for i, ctx in enumerate(path.steps, start=1):
        s = ctx.step
        tools = ", ".join(ctx.tools or ctx.bins) or "(none named)"
        lines.append(f"Step {i}: skill {s.skill_name} ({s.category}): {s.description[:300]}")
        lines.append(f"  tools: {tools}")
        if ctx.inputs or ctx.outputs:
            lines.append(f"  reads: {', '.join(ctx.inputs) or '-'}; leaves: {', '.join(ctx.outputs) or '-'}")
    return "\n".join(lines)


def prompt_values(text: JudgedText, path: PathContext) -> dict[str, str]:
    tests = "\n\n".join(f"# file: {p}\n{src}" for p, src in text.tests.items()) or "(no test files)"
    return {"path_id": path.path_id, "steps": _block(steps_text(path), MAX_CHARS["instruction"]),
            "instruction": _block(text.instruction, MAX_CHARS["instruction"]),
            "tests": _block(tests, MAX_CHARS["tests"]), "solution": _block(text.solution, MAX_CHARS["solution"]),
            "criteria": "\n".join(f"  - {c.name}: {c.meaning};" for c in CRITERIA)}


def criteria_of(reply: TaskJudgement, text: JudgedText) -> tuple[list[dict], str | None]:
    """Per criterion {name, passed, evidence, artifact, where, note}, or the first made-up quote."""
    out = []
    for c in CRITERIA:
        v = getattr(reply, c.name)
        where = text.locate(v.evidence)
        if where is None:
            return [], (f"the judge's evidence for {c.name} is not a line of instruction.md or the tests, "
                        f"nor a test's name (quoted {v.evidence[:160]!r})")
        artifact = v.fault if isinstance(v, AskedForVerdict) else c.artifact
        out.append({"name": c.name, "passed": v.passed, "evidence": v.evidence, "artifact": artifact,
                    "where": where, "note": v.note})
    return out, None


def _unusable(problem: str, seconds: float, log: str = "", **details) -> CheckResult:
    return CheckResult(name=CHECK, passed=False, reason=f"{NO_VERDICT}: {problem}"[:2000], seconds=seconds,
                       log=log, details={"criteria": [], "unusable": True, **details})


def judge_task(caller: LLMCaller, bundle: TaskBundle, path: PathContext, *, item: str,
               timer: dict | None = None) -> CheckResult:
    """The LLM rubric check of one task (`item`: its task id), as check "judge".

    Call it only after the static rubric passed. Passed when every criterion passed; the
    reason names the first failed criterion with its evidence. Raises BudgetExceeded and an
    endpoint's own LLMCallError (the batch stops cleanly); any other failure of the call is an unusable reply, not a pass."""
    t0 = time.monotonic()
    text = JudgedText.of(bundle)
    try:
        result = caller.render_and_ask(STAGE, item, TaskJudgement, timer=timer, **prompt_values(text, path))
    except LLMCallError as exc:
        if exc.endpoint_fault:   # the endpoint is down, not the task at fault: the batch stops
            raise
        raw = (exc.raw_text or "")[:2000]
        return _unusable(f"the judge's reply could not be used: {exc}", time.monotonic() - t0,
                         log=f"last reply: {raw}" if raw else "")
    spent = {"cached": result.cached, "cost_usd": result.cost_usd,
             "tokens": result.prompt_tokens + result.completion_tokens, "model": result.model}
    criteria, problem = criteria_of(result.parsed, text)
    if problem is not None:
        return _unusable(problem, time.monotonic() - t0, log=result.text[:4000], **spent)
    log = "\n".join(f"{'PASS' if c['passed'] else 'FAIL'} {c['name']} [{c['artifact']}] {c['where']}: "
                    f"{c['note']}" for c in criteria)
    failed = [c for c in criteria if not c["passed"]]
    if failed:
        f = failed[0]
        many = f"{len(failed)} judge criteria failed, first" if len(failed) > 1 else "judge criterion failed:"
        reason = f"{many} {f['name']} ({f['artifact']}): {f['note']} — evidence {f['where']}: {f['evidence']!r}"
    else:
        reason = f"ok: all {len(criteria)} judge criteria passed"
    return CheckResult(name=CHECK, passed=not failed, reason=reason, seconds=time.monotonic() - t0, log=log,
                       details={"criteria": criteria, **spent})
