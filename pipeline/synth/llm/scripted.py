"""Scripted replies of the LLM synthesis stages, for the local replay server: a test double
shipped with the package (used by the tests, the benchmark and the demo; never by a real run).

`ScriptedSynthesis(ws).rule()` is one `workbench.llm.replay_server.Rule` that answers every
synthesis request. It reads the stage from the request's `Stage: <stage>.` line and the path
from its `Path: <id>` line (every synthesis template starts its sections with them), builds
that path's offline task once (the recipe library, `pipeline.synth.compose.synthesize_task`)
and answers each stage from it: the plan (goal = the title, one subgoal per step with its
skill, the tools its part of solve.sh uses and the check sentences as success conditions),
the environment manifest, instruction, solution and tests (`render.artifacts_from_bundle`),
and the judge's verdicts.

`faults` breaks a path's first reply in one repair route of issue 13; the repair reply is
the correct artifact (see FAULTS). `calls[(path_id, stage)]` counts the requests.
"""
from __future__ import annotations

import ast
import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from pipeline import python_source
from pipeline.synth.compose import synthesize_task
from pipeline.synth.llm import models as M
from pipeline.synth.llm.render import artifacts_from_bundle
from pipeline.synth.protocol import PathContext
from workbench.llm.replay_server import Rule
from workbench.llm.schema_instance import schema_instance

# fault -> the artifact whose repair fixes it (the first reply of that artifact is broken)
FAULTS: dict[str, str] = {
    "broken_dockerfile": "environment",    # a setup RUN that fails (copies a file that is not there)
    "registry_pull": "environment",        # a setup command that fetches from a package registry
    "crashing_solution": "solution",       # solve.sh exits non-zero early
    "never_ends": "solution",              # solve.sh sleeps forever
    "invalid_json": "solution",            # the solution replies are prose, not JSON
    "test_bug": "tests",                   # an assertion that fails after the oracle
    "passes_untouched": "tests",           # tests that hold on the untouched environment
    "bad_imports": "tests",                # tests import numpy (the verifier has stdlib + pytest)
    "exhaust": "tests",                    # every tests reply is buggy: rejected after the repairs
    "leaking_instruction": "instruction",  # the instruction contains solve.sh's lines
    "missing_file": "instruction",         # the instruction names /app/nowhere.csv
    "judge_flags": "instruction",          # the instruction omits the skills; the judge fails exercises_skills
}
MISSING_FILE = "/app/nowhere.csv"
INPUT_DIR = "/app/input"
STAGE_LINE = re.compile(r"^Stage: ([a-z_]+)\.", re.M)
PATH_LINE = re.compile(r"^Path: (\S+)", re.M)
_STEP_TEST = re.compile(r"^test_s(\d+)_")
_STEP_HEADING = re.compile(r"^## Step (\d+): (.+)$", re.M)
_SKILL_BULLET = re.compile(r"^- \*\*.+$", re.M)
_JUDGE_INSTRUCTION = re.compile(r"<instruction_md>\n?(.*?)</instruction_md>", re.S)


@dataclass(frozen=True)
class ScriptedTask:
    """The correct artifacts of a path (its offline task)."""
    plan: M.Plan
    manifest: M.EnvManifest
    instruction: M.Instruction
    solution: M.Solution
    tests: M.TestsDraft
    skills_block: str        # the instruction's list of skills ("" when it names none)


def _messages_text(body: dict) -> str:
    parts = []
    for m in body.get("messages") or []:
        c = m.get("content")
        parts.append(c if isinstance(c, str) else json.dumps(c))
    return "\n".join(parts)


def _parse(source: str) -> ast.Module:
    return python_source.parse(source)   # replies are made in worker threads beside the batch's


def _test_docstrings(test_py: str) -> list[tuple[str, str]]:
    tree = _parse(test_py)
    return [(n.name, ast.get_docstring(n) or "") for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


def _plan(path: PathContext, task, instruction: M.Instruction, manifest: M.EnvManifest, test_py: str) -> M.Plan:
    n = len(path.steps)
    where = lambda k: min(k, n)   # noqa: E731 - a one-skill path is composed as two steps of it
    titles: dict[int, list[str]] = {}
    for k, title in _STEP_HEADING.findall(instruction.text):
        titles.setdefault(where(int(k)), []).append(title.strip())
    sentences: dict[int, list[str]] = {}
    for name, doc in _test_docstrings(test_py):
        m = _STEP_TEST.match(name)
        if m and doc:
            sentences.setdefault(where(int(m.group(1))), []).append(doc)
    tools: dict[int, list[str]] = {}
    for f in task.fidelity:
        tools.setdefault(where(f.step), []).extend(f.tools_used)
    subgoals = []
    for k, sc in enumerate(path.steps, 1):
        name = sc.step.skill_name.strip() or sc.step.skill_id
        desc = "; ".join(titles.get(k, [])) or f"the work of {name}"
        subgoals.append(M.Subgoal(step=k, skill=name, description=f"Step {k}: {desc}",
                                  tools=list(dict.fromkeys(tools.get(k, []))) or ["bash"],
                                  success_conditions=sentences.get(k) or [desc]))
    goal = instruction.title if len(instruction.title) >= 12 else f"{instruction.title} ({n} steps)"
    return M.Plan(goal=goal, subgoals=subgoals, initial_files=[f.path for f in manifest.files][:40])


def scripted_task(path: PathContext, *, seed: int = 0, base_image: str = "base",
                  force: list[str] | None = None) -> ScriptedTask:
    """The correct artifacts of a path, from its offline task (raises when the recipes cannot make one).
    `force`: the family per step (the scripted evolution's context switch swaps one)."""
    # the LLM synthesizer ships no skill package (yet): its double follows the recipes alone
    task = synthesize_task(path.path_steps, seed, base_image, path_id=path.path_id, force=force, ship_skills=False)
    manifest, instruction, solution, tests = artifacts_from_bundle(task.bundle)
    if not any(f.path.startswith(INPUT_DIR + "/") for f in manifest.files):
        # The offline layout's note "leave the files under /app/input unchanged" is said of every
        # task; an LLM instruction may name only what the container holds (guard.check_instruction).
        text = "\n".join(x for x in instruction.text.splitlines() if f"`{INPUT_DIR}`" not in x)
        instruction = instruction.model_copy(update={"text": text})
    skills = "\n".join(_SKILL_BULLET.findall(instruction.text))
    if not skills:
        instruction, skills = _naming_the_skills(instruction, path)
    return ScriptedTask(_plan(path, task, instruction, manifest, tests.test_py), manifest, instruction,
                        solution, tests, skills)


def _naming_the_skills(instruction: M.Instruction, path: PathContext) -> tuple[M.Instruction, str]:
    """The offline instruction lists only the skills a step scores 2 on (often none); an LLM's
    instruction names the path's skills, as the planner is asked to, so the scripted one does too
    (before the first step), and the judge's exercises_skills has a block to look for."""
    names = dict.fromkeys((sc.step.skill_name.strip() or sc.step.skill_id, sc.step.description.strip())
                          for sc in path.steps)
    first = {n: d.splitlines()[0].split(". ")[0].rstrip(".") for n, d in names if d}
    block = "\n".join(f"- **{n}**" + (f": {first[n]}." if n in first else "") for n, _ in names)
    text = instruction.text
    at = text.find("## Step ")
    text = text[:at] + f"Skills in play:\n\n{block}\n\n" + text[at:] if at >= 0 else f"{text}\n\n{block}\n"
    return instruction.model_copy(update={"text": text}), block


# --- broken artifacts (one per fault) -------------------------------------------------------------

def _after_cd(solve_sh: str, line: str) -> str:
    """solve.sh with `line` right after its first `cd /app` (else after the shebang)."""
    lines = solve_sh.splitlines()
    at = next((i + 1 for i, x in enumerate(lines) if x.strip() == "cd /app"), 1 if lines[:1] and lines[0].startswith("#!") else 0)
    return "\n".join(lines[:at] + [line] + lines[at:]) + "\n"


def buggy_tests(test_py: str, k: int = 0) -> str:
    """The last test gains an assertion that fails after a correct solution (a test bug;
    `k` varies it, so each buggy version differs from the one before)."""
    funcs = [n for n in _parse(test_py).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    last = funcs[-1]
    wrong = ('assert 0.1 + 0.2 == 0.3, "the share of the two parts (exact float compare)"' if k == 0 else
             f'assert len("{k}") == {k + 1}, "version {k}: off by one in the expected count"')
    lines = test_py.splitlines()
    lines.insert(last.end_lineno, " " * last.body[-1].col_offset + wrong)
    return "\n".join(lines) + "\n"


def untouched_tests(test_py: str) -> str:
    """Each test's body after its docstring becomes an assertion that holds on the untouched
    environment (the tests check nothing the task changes); def lines and docstrings stay."""
    lines = test_py.splitlines()
    funcs = [n for n in _parse(test_py).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    for f in reversed(funcs):
        start = f.body[0].end_lineno if ast.get_docstring(f) is not None else f.body[0].lineno - 1
        lines[start:f.end_lineno] = [" " * f.body[0].col_offset + 'assert os.path.isdir("/app")']
    return "\n".join(lines) + "\n"


def broken(fault: str, stage: str, t: ScriptedTask, k: int) -> dict | str | None:
    """The broken reply of `fault` at `stage` (its k-th call, 1-based), or None: answer correctly."""
    repair = stage.startswith("synth_repair_")
    if fault == "exhaust" and stage in (M.TESTS, M.REPAIR["tests"]):
        return M.TestsDraft(test_py=buggy_tests(t.tests.test_py, k if repair else 0)).model_dump()
    if repair:
        return None
    if stage == M.ENVIRONMENT and fault == "broken_dockerfile":
        cmds = t.manifest.setup_commands + ["cp /app/seed/defaults.ini /etc/defaults.ini"]
        return t.manifest.model_copy(update={"setup_commands": cmds}).model_dump()
    if stage == M.ENVIRONMENT and fault == "registry_pull":
        cmds = ["pip install --no-cache-dir pandas==2.2.2"] + t.manifest.setup_commands
        return t.manifest.model_copy(update={"setup_commands": cmds}).model_dump()
    if stage == M.SOLUTION and fault == "crashing_solution":
        return M.Solution(solve_sh=_after_cd(t.solution.solve_sh, "python3 -c 'import sys; sys.exit(\"input header is malformed\")'")).model_dump()
    if stage == M.SOLUTION and fault == "never_ends":
        return M.Solution(solve_sh=_after_cd(t.solution.solve_sh, "sleep infinity")).model_dump()
    if stage == M.SOLUTION and fault == "invalid_json":
        return "Sure! Here is the script you asked for:\n\n```bash\n" + t.solution.solve_sh + "```\n"
    if stage == M.TESTS and fault == "test_bug":
        return M.TestsDraft(test_py=buggy_tests(t.tests.test_py)).model_dump()
    if stage == M.TESTS and fault == "passes_untouched":
        return M.TestsDraft(test_py=untouched_tests(t.tests.test_py)).model_dump()
    if stage == M.TESTS and fault == "bad_imports":
        return M.TestsDraft(test_py="import numpy as np\n" + t.tests.test_py).model_dump()
    if stage == M.INSTRUCTION and fault == "leaking_instruction":
        script = "\n".join(x for x in t.solution.solve_sh.splitlines() if x.strip() and not x.startswith("#!"))
        text = t.instruction.text + f"\n\n## Hint\n\nThe quickest way is to run:\n\n```bash\n{script}\n```\n"
        return M.Instruction(title=t.instruction.title, text=text).model_dump()
    if stage == M.INSTRUCTION and fault == "missing_file":
        text = t.instruction.text + (f"\n\nBefore you start, compare your results with the reference table "
                                     f"in `{MISSING_FILE}`.\n")
        return M.Instruction(title=t.instruction.title, text=text).model_dump()
    if stage == M.INSTRUCTION and fault == "judge_flags":
        text = t.instruction.text
        for line in t.skills_block.splitlines():
            text = text.replace(line + "\n", "")
        return M.Instruction(title=t.instruction.title, text=text).model_dump()
    return None


# --- the judge ----------------------------------------------------------------------------------

def judge_reply(instruction_md: str, test_names: list[str], *, flag_skills: bool) -> dict:
    """Verdicts for the five criteria of pipeline.judge.task_judge (evidence: a requirement line
    of the instruction, or a test's name); `flag_skills` fails exercises_skills."""
    lines = [x.strip() for x in instruction_md.splitlines() if len(x.strip()) >= 12]
    quote = next((x for x in lines if re.match(r"\d+\. ", x)), lines[0] if lines else "")
    test = test_names[0] if test_names else quote

    def verdict(passed: bool, evidence: str, note: str) -> dict:
        return {"passed": passed, "evidence": evidence, "note": note}
    out = {"requirements_tested": verdict(True, test, "every requirement has a test"),
           "tests_asked_for": {**verdict(True, test, "every test checks a requirement"), "fault": "tests"},
           "no_solution_leak": verdict(True, quote, "the instruction states goals, not commands"),
           "unambiguous": verdict(True, quote, "paths and formats are given exactly"),
           "exercises_skills": verdict(True, quote, "each step's skill and tools are needed")}
    if flag_skills:
        title = next((x for x in lines if x.startswith("# ")), quote)
        out["exercises_skills"] = verdict(False, title, "the instruction never names the skills of its path, "
                                                        "so nothing ties the steps to them")
    return out


def correct_reply(stage: str, t: ScriptedTask) -> dict | str:
    """The right answer of a stage (a repair stage: the correct artifact it rewrites)."""
    artifact = next((a for a, s in M.REPAIR.items() if s == stage), None)
    by_stage = {M.PLAN: t.plan, M.ENVIRONMENT: t.manifest, M.INSTRUCTION: t.instruction,
                M.SOLUTION: t.solution, M.TESTS: t.tests}
    by_artifact = {"environment": t.manifest, "instruction": t.instruction, "solution": t.solution,
                   "tests": t.tests}
    model = by_stage.get(stage) or (by_artifact[artifact] if artifact else None)
    if model is None:
        return f"no scripted reply for stage {stage}"
    return model.model_dump(by_alias=True)


# --- the replay rule ------------------------------------------------------------------------------

class ScriptedSynthesis:
    """Scripted replies for the synthesis stages of the paths of a workspace (or of given contexts)."""

    def __init__(self, source, faults: Mapping[str, str] | None = None, *, seed: int = 0, base_image: str = "base",
                 weighted: Iterable[str] = ()):
        """`weighted`: paths whose tests reply gives the first test weight 2 (the others 1), so
        the task runs our weighted runner."""
        unknown = sorted({f for f in (faults or {}).values() if f not in FAULTS})
        if unknown:
            raise ValueError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)}")
        self.faults = dict(faults or {})
        self.seed, self.base_image, self.weighted = seed, base_image, frozenset(weighted)
        self._ws = None if isinstance(source, Mapping) else source
        self._contexts: dict[str, PathContext] = dict(source) if isinstance(source, Mapping) else {}
        self._tasks: dict[str, ScriptedTask | str] = {}
        self._lock = threading.Lock()
        self.calls: Counter[tuple[str, str]] = Counter()

    def rule(self) -> Rule:
        return Rule(match=None, reply=self.reply)

    def reply(self, body: dict):
        """The Rule's callable: answered in a worker thread, so building a path's task (and the
        store read for its context) never holds up the server's event loop."""
        return asyncio.get_running_loop().run_in_executor(None, self.answer, body)

    def calls_for(self, path_id: str) -> dict[str, int]:
        with self._lock:
            return {stage: n for (p, stage), n in self.calls.items() if p == path_id}

    def task(self, path_id: str) -> ScriptedTask | str:
        """The path's correct artifacts, or why there are none (built once)."""
        with self._lock:
            if path_id in self._tasks:
                return self._tasks[path_id]
        ctx = self._context(path_id)
        if ctx is None:
            made: ScriptedTask | str = f"no scripted task: path {path_id} is not in this workspace"
        else:
            try:
                made = scripted_task(ctx, seed=self.seed, base_image=self.base_image)
            except Exception as exc:   # a path the recipes cannot serve: the reply says so
                made = f"no scripted task for path {path_id}: {exc}"
            else:
                if path_id in self.weighted:
                    first = _test_docstrings(made.tests.test_py)[0][0]
                    made = replace(made, tests=made.tests.model_copy(update={"weights": {first: 2.0}}))
        with self._lock:
            return self._tasks.setdefault(path_id, made)

    def _context(self, path_id: str) -> PathContext | None:
        if path_id not in self._contexts and self._ws is not None:
            from pipeline.synth.context import path_contexts
            self._contexts.update(path_contexts(self._ws, [path_id]))
        return self._contexts.get(path_id)

    def answer(self, body: dict) -> dict | str:
        text = _messages_text(body)
        stage, path = STAGE_LINE.search(text), PATH_LINE.search(text)
        if stage is None or path is None:   # not a synthesis request: what the server would say
            fmt = body.get("response_format") or {}
            schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
            return schema_instance(schema) if schema else "ok"
        stage_name, path_id = stage.group(1), path.group(1)
        with self._lock:
            self.calls[(path_id, stage_name)] += 1
            k = self.calls[(path_id, stage_name)]
        t = self.task(path_id)
        if isinstance(t, str):
            return t      # not JSON: the stage's reply is unusable, with the reason as its text
        fault = self.faults.get(path_id)
        if stage_name == M.JUDGE:
            m = _JUDGE_INSTRUCTION.search(text)
            shown = m.group(1) if m else t.instruction.text
            names = re.findall(r"^\s*def (test\w*)\(", text, re.M) or [n for n, _ in _test_docstrings(t.tests.test_py)]
            flag = fault == "judge_flags" and bool(t.skills_block) and t.skills_block.splitlines()[0] not in shown
            return judge_reply(shown, names, flag_skills=flag)
        if fault is not None:
            bad = broken(fault, stage_name, t, k)
            if bad is not None:
                return bad
        return correct_reply(stage_name, t)


__all__ = ["FAULTS", "MISSING_FILE", "ScriptedSynthesis", "ScriptedTask", "broken", "correct_reply", "judge_reply",
           "scripted_task"]
