"""Scripted replies of the evolve_task stage (and of its repair and judge calls), for the local
replay server: a test double shipped with the package (the tests and the demo use it; never a
real run), like pipeline/synth/llm/scripted.py for synthesis.

Every prompt about a variant says `Path: evolve:<variant id>` (pipeline.evolve.llm_operator), so
`ScriptedEvolution(...).rule()` matches on that and must come before the synthesis rule (which
answers every request). The evolve reply is made from the parent's artifacts in the prompt:
- harder: one more step with one more checked output, a manifest of the files under /app/out
  (SHA-256 digests, then byte sizes for a second harder), added to instruction, solve.sh and
  tests;
- easier: the last step dropped (its section, its solve.sh block, its `test_s<k>_` tests), or
  on a one-step task its last test and that requirement;
- context switch: the parent's path composed again by the recipe library with another family
  (another tool) for one step (needs the workspace: the path's skills), the variant's other
  marks replayed on it, so it has the parent's steps.
Repair requests get the variant's correct artifact, the judge passes. `faults[variant id]`
breaks that variant's first reply: a fault of pipeline.synth.llm.scripted.FAULTS in its
artifact, `garbage` (the reply is prose) or `empty_change`. `calls[(variant id, stage)]`
counts the requests.
"""
from __future__ import annotations

import ast
import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline import python_source
from pipeline.evolve.llm_operator import EVOLVE, EVOLVE_MARK, EvolvedTask
from pipeline.evolve.models import lineage, parent_of
from pipeline.synth.llm import models as M
from pipeline.synth.llm.scripted import FAULTS, ScriptedTask, broken, judge_reply, scripted_task
# the stage line, step headings and test names as the synthesis double reads them (defined there once)
from pipeline.synth.llm.scripted import STAGE_LINE, _JUDGE_INSTRUCTION, _STEP_HEADING, _STEP_TEST  # noqa: E402
from workbench.llm.replay_server import Rule

EVOLVE_FAULTS = (*FAULTS, "garbage", "empty_change")
VARIANT_PATH = re.compile(r"^Path: " + re.escape(EVOLVE_MARK) + r"(\S+)", re.M)
_FIELD = {k: re.compile(rf"^{k}: (.*)$", re.M) for k in ("Operator", "Parent path")}
_PARENT = "<parent_task>"
_NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.M)
_SKILL = re.compile(r"^- \*\*(.+?)\*\*", re.M)
_ARTIFACT_STAGE = {"environment": M.ENVIRONMENT, "solution": M.SOLUTION, "tests": M.TESTS,
                   "instruction": M.INSTRUCTION}
# harder's extra outputs, in the order successive harder variants add them; each manifest
# leaves all of them out, so a later one never changes what an earlier one lists
EXTRAS = {"SHA256SUMS": ("Record checksums of the results", "its SHA-256 digest in hex, two spaces and its path "
                         "relative to `/app/out`", 'sha256sum -- "$f"',
                         'f"{hashlib.sha256((root / n).read_bytes()).hexdigest()}  {n}"'),
          "SIZES.tsv": ("Record the sizes of the results", "its path relative to `/app/out`, a tab and its size "
                        "in bytes", 'printf \'%s\\t%s\\n\' "$f" "$(stat -c %s -- "$f")"',
                        'f"{n}\\t{(root / n).stat().st_size}"')}


class NoScriptedVariant(ValueError):
    """The double cannot make this variant (its reply says why, as prose)."""


@dataclass(frozen=True)
class Artifacts:
    manifest: M.EnvManifest
    instruction: M.Instruction
    solution: M.Solution
    tests: M.TestsDraft


def _functions(test_py: str) -> list[ast.FunctionDef]:
    return [n for n in python_source.parse(test_py).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


def _sentence(line: str) -> str:
    return line.replace("`", "").replace("**", "").strip()


def _steps(text: str) -> list[tuple[int, str]]:
    return [(int(k), t.strip()) for k, t in _STEP_HEADING.findall(text)]


def plan_of(a: Artifacts) -> M.Plan:
    """A plan read from the artifacts: one subgoal per `## Step <k>:` section, its tests' docstrings
    as success conditions."""
    steps = _steps(a.instruction.text) or [(1, a.instruction.title)]
    skills = _SKILL.findall(a.instruction.text) or ["bash"]
    docs: dict[int, list[str]] = {}
    for f in _functions(a.tests.test_py):
        m = _STEP_TEST.match(f.name)
        if m and ast.get_docstring(f):
            docs.setdefault(int(m.group(1)), []).append(ast.get_docstring(f))
    subgoals = [M.Subgoal(step=i, skill=skills[min(i, len(skills)) - 1], description=f"Step {k}: {title}",
                          tools=["bash"], success_conditions=docs.get(k) or [title])
                for i, (k, title) in enumerate(steps, 1)]
    goal = a.instruction.title if len(a.instruction.title) >= 12 else f"{a.instruction.title} ({len(steps)} steps)"
    return M.Plan(goal=goal, subgoals=subgoals, initial_files=[f.path for f in a.manifest.files][:40])


# --- harder: one more checked output ---------------------------------------------------------------

def harder(a: Artifacts) -> tuple[Artifacts, str]:
    text = a.instruction.text
    if "/app/out/" not in text:
        raise NoScriptedVariant("no scripted harder variant: the parent writes nothing under /app/out")
    name = next((n for n in EXTRAS if f"/app/out/{n}" not in text), None)
    if name is None:
        raise NoScriptedVariant("no scripted harder variant: the parent has every extra output already")
    title, what, shell, line_expr = EXTRAS[name]
    k = max((s for s, _ in _steps(text)), default=1) + 1
    m = max((int(n) for n, _ in _NUMBERED.findall(text)), default=0) + 1
    others = " and ".join(f"`{n}`" for n in EXTRAS)
    req = (f"Write `/app/out/{name}` with one line per file under `/app/out` (every file but the {others} "
           f"manifests), giving {what}, sorted by that path.")
    section = f"## Step {k}: {title}\n\n{m}. {req}\n"
    at = text.find("\n## Good to know")
    text = text.rstrip("\n") + "\n\n" + section if at < 0 else text[:at].rstrip("\n") + "\n\n" + section + text[at:]
    skip = " ".join(f"! -name {n}" for n in EXTRAS)
    block = (f"# --- step {k} (manifest) ---\ncd /app/out\n"
             f"find . -type f {skip} -printf '%P\\n' | LC_ALL=C sort > /tmp/evolve-files.txt\n"
             f": > /tmp/evolve-manifest\n"
             f"while IFS= read -r f; do {shell} >> /tmp/evolve-manifest; done < /tmp/evolve-files.txt\n"
             f"mv /tmp/evolve-manifest /app/out/{name}\ncd /app\n")
    test = (f'\n\ndef test_s{k}_manifest():\n    """{_sentence(req)}"""\n    import hashlib\n'
            f'    from pathlib import Path\n    root = Path("/app/out")\n'
            f'    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")\n'
            f'                   if p.is_file() and not p.is_symlink() and p.name not in {tuple(EXTRAS)!r})\n'
            f'    want = [{line_expr} for n in names]\n'
            f'    got = Path("/app/out/{name}").read_text(encoding="utf-8").splitlines()\n'
            f'    assert got == want, f"/app/out/{name} lists {{got[:3]}}, expected {{want[:3]}}"\n')
    out = Artifacts(a.manifest, a.instruction.model_copy(update={"text": text}),
                    M.Solution(solve_sh=a.solution.solve_sh.rstrip("\n") + "\n\n" + block),
                    a.tests.model_copy(update={"test_py": a.tests.test_py.rstrip("\n") + test}))
    return out, f"added step {k}: a manifest of /app/out ({name}), one more checked output"


# --- easier: a step or an edge case dropped ------------------------------------------------------

def _drop_tests(test_py: str, names: set[str]) -> str:
    lines = test_py.splitlines()
    for f in sorted((f for f in _functions(test_py) if f.name in names), key=lambda f: -f.lineno):
        start = min([f.lineno] + [d.lineno for d in f.decorator_list]) - 1
        del lines[start:f.end_lineno]
    return "\n".join(lines).rstrip("\n") + "\n"


def easier(a: Artifacts) -> tuple[Artifacts, str]:
    text, funcs = a.instruction.text, _functions(a.tests.test_py)
    steps = _steps(text)
    if len(steps) >= 2:
        k, title = steps[-1]
        drop = {f.name for f in funcs if (m := _STEP_TEST.match(f.name)) and int(m.group(1)) == k}
        if not drop or len(drop) == len(funcs):
            raise NoScriptedVariant(f"no scripted easier variant: step {k} has no tests of its own")
        head = re.search(rf"^## Step {k}: ", text, re.M)
        nxt = re.search(r"^## ", text[head.end():], re.M)
        text = text[:head.start()].rstrip("\n") + ("\n\n" + text[head.end() + nxt.start():] if nxt else "\n")
        n = len(steps) - 1
        text = re.sub(r"Each of the \d+ steps reads what an earlier one left behind; keep your files in place\.\s*",
                      f"Each of the {n} steps reads what an earlier one left behind; keep your files in place. "
                      if n >= 2 else "", text)
        solve = a.solution.solve_sh
        blk = re.search(rf"^# --- step {k} \(.*$", solve, re.M)
        if blk is None:
            raise NoScriptedVariant(f"no scripted easier variant: solve.sh has no '# --- step {k}' block")
        rest = re.search(r"^# --- step \d+ \(", solve[blk.end():], re.M)
        solve = solve[:blk.start()] + (solve[blk.end() + rest.start():] if rest else "")
        out = Artifacts(a.manifest, a.instruction.model_copy(update={"text": text}),
                        M.Solution(solve_sh=solve.rstrip("\n") + "\n"),
                        a.tests.model_copy(update={"test_py": _drop_tests(a.tests.test_py, drop),
                                                   "weights": {t: w for t, w in a.tests.weights.items()
                                                               if t not in drop}}))
        return out, f"dropped step {k} ({title}) and its {len(drop)} check(s)"
    if len(funcs) < 2:
        raise NoScriptedVariant("no scripted easier variant: one step and one test left")
    last = funcs[-1]
    doc = ast.get_docstring(last) or ""
    kept = [x for x in text.splitlines()
            if not ((m := _NUMBERED.match(x)) and _sentence(m.group(2)).rstrip(".") == doc.strip().rstrip("."))]
    out = Artifacts(a.manifest, a.instruction.model_copy(update={"text": "\n".join(kept)}), a.solution,
                    a.tests.model_copy(update={"test_py": _drop_tests(a.tests.test_py, {last.name}),
                                               "weights": {t: w for t, w in a.tests.weights.items()
                                                           if t != last.name}}))
    return out, f"dropped the check {last.name} and its requirement"


TEXT_OPERATORS = {"harder": harder, "easier": easier}


# --- context switch: another family for one step ----------------------------------------------------

def switched(ctx, marks: list[tuple[str, int]], *, seed: int, base_image: str) -> tuple[Artifacts, str]:
    """The path composed again with another family for one step per context switch in `marks`
    (the earliest step that has one), then the text operators of `marks` replayed in order."""
    from pipeline.synth.compose import plan_steps, step_families, synthesize_task
    families = list(synthesize_task(ctx.path_steps, seed, base_image, path_id=ctx.path_id, ship_skills=False).recipes)
    planned = plan_steps(ctx.path_steps)
    force, swapped, said = list(families), set(), ""
    for op, _ in marks:
        if op != "context_switch":
            continue
        found = None
        for k, (step, cat) in enumerate(planned[:len(force)], 1):
            if k in swapped:
                continue
            tiers = step_families(step, cat)
            # the original family's own tier first: the closest other tool for the same work
            tiers = sorted(tiers, key=lambda tier: force[k - 1] not in {r.name for r in tier})
            for alt in dict.fromkeys(r.name for tier in tiers for r in tier):
                if alt == force[k - 1]:
                    continue
                trial = force[:k - 1] + [alt] + force[k:]
                try:
                    synthesize_task(ctx.path_steps, seed, base_image, path_id=ctx.path_id, force=trial,
                                    ship_skills=False)
                except Exception:   # this family cannot serve the step here: try the next
                    continue
                found = (k, alt, trial)
                break
            if found:
                break
        if found is None:
            raise NoScriptedVariant("no scripted context switch: no step of the path has another family that fits")
        k, alt, force = found
        said = f"step {k} now uses the {alt} family instead of {families[k - 1]} (another tool)"
        swapped.add(k)
    t = scripted_task(ctx, seed=seed, base_image=base_image, force=force)
    a = Artifacts(t.manifest, t.instruction, t.solution, t.tests)
    for op, _ in marks:
        if op in TEXT_OPERATORS:
            a, _ = TEXT_OPERATORS[op](a)
    return a, said


# --- the replay rule ---------------------------------------------------------------------------------

def _messages_text(body: dict) -> str:
    return "\n".join(m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                     for m in body.get("messages") or [])


def parent_artifacts(text: str) -> Artifacts:
    """The parent's artifacts from an evolve prompt (the JSON right after <parent_task>)."""
    at = text.find(f"\n{_PARENT}\n")     # the tag on a line of its own (the system text names it too)
    if at < 0:
        raise NoScriptedVariant("no scripted variant: the prompt holds no <parent_task> block")
    data, _ = json.JSONDecoder().raw_decode(text[at + len(_PARENT) + 2:].lstrip())
    return Artifacts(M.EnvManifest(**data["environment"]), M.Instruction(**data["instruction"]),
                     M.Solution(**data["solution"]), M.TestsDraft(**data["tests"]))


class ScriptedEvolution:
    """Scripted evolve replies for the variants asked about (`ws`: the workspace whose paths a
    context switch composes again, and whose stored parents a repair asked after a restart reads)."""

    def __init__(self, ws=None, faults: Mapping[str, str] | None = None, *, seed: int = 0, base_image: str = "base"):
        unknown = sorted({f for f in (faults or {}).values() if f not in EVOLVE_FAULTS})
        if unknown:
            raise ValueError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(EVOLVE_FAULTS)}")
        self.ws, self.faults, self.seed, self.base_image = ws, dict(faults or {}), seed, base_image
        self._made: dict[str, tuple[Artifacts, str] | str] = {}
        self._lock = threading.Lock()
        self.calls: Counter[tuple[str, str]] = Counter()

    def rule(self) -> Rule:
        """Put it before the synthesis rule: that one answers every request."""
        return Rule(match="Path: " + EVOLVE_MARK, reply=self.reply)

    def reply(self, body: dict):
        return asyncio.get_running_loop().run_in_executor(None, self.answer, body)

    def calls_for(self, vid: str) -> dict[str, int]:
        with self._lock:
            return {s: n for (v, s), n in self.calls.items() if v == vid}

    def variant(self, vid: str, text: str | None = None) -> tuple[Artifacts, str] | str:
        """The variant's correct artifacts and change, or why there are none (made once)."""
        with self._lock:
            if vid in self._made:
                return self._made[vid]
        try:
            made: tuple[Artifacts, str] | str = self._make(vid, text)
        except NoScriptedVariant as exc:
            made = str(exc)
        except Exception as exc:   # what the double could not read or compose: the reply says so
            made = f"no scripted variant for {vid}: {type(exc).__name__}: {exc}"
        with self._lock:
            return self._made.setdefault(vid, made)

    def _make(self, vid: str, text: str | None) -> tuple[Artifacts, str]:
        marks = lineage(vid)
        if not marks:
            raise NoScriptedVariant(f"no scripted variant: {vid} is no variant id")
        op = marks[-1][0]
        if text is None or f"\n{_PARENT}\n" not in text:
            text = self._stored_prompt(vid)
        if op in TEXT_OPERATORS:
            return TEXT_OPERATORS[op](parent_artifacts(text))
        if self.ws is None:
            raise NoScriptedVariant("no scripted context switch: the double was given no workspace")
        from pipeline.synth.context import path_contexts
        pid = _FIELD["Parent path"].search(text).group(1).strip()
        ctx = path_contexts(self.ws, [pid]).get(pid)
        if ctx is None:
            raise NoScriptedVariant(f"no scripted context switch: path {pid} is not in the workspace")
        return switched(ctx, marks, seed=self.seed, base_image=self.base_image)

    def _stored_prompt(self, vid: str) -> str:
        """A repair asked about a variant this process never made (a resumed run): the parent is read
        from the workspace and shown as the evolve prompt would show it."""
        from pipeline.evolve.llm_operator import parent_json
        from pipeline.synth.llm.render import artifacts_from_bundle
        from workbench.sandbox.bundle import read_bundle
        from workbench.sandbox.task_toml import parse as parse_toml
        if self.ws is None:
            raise NoScriptedVariant(f"no scripted variant: {vid} was never asked for here and there is no workspace")
        bundle = read_bundle(self.ws.tasks_dir / parent_of(vid))
        return (f"Parent path: {parse_toml(bundle.text('task.toml')).metadata.path_id}\n\n{_PARENT}\n"
                + parent_json(*artifacts_from_bundle(bundle)))

    def answer(self, body: dict) -> dict | str:
        text = _messages_text(body)
        stage, path = STAGE_LINE.search(text), VARIANT_PATH.search(text)
        if stage is None or path is None:
            return "no scripted reply: not a request about a variant"
        stage_name, vid = stage.group(1), path.group(1)
        with self._lock:
            self.calls[(vid, stage_name)] += 1
            k = self.calls[(vid, stage_name)]
        made = self.variant(vid, text if stage_name == EVOLVE else None)
        if isinstance(made, str):
            return made       # prose: the reply is unusable, with the reason as its text
        a, change = made
        t = ScriptedTask(plan_of(a), a.manifest, a.instruction, a.solution, a.tests, "")
        fault = self.faults.get(vid)
        if stage_name == M.JUDGE:
            m = _JUDGE_INSTRUCTION.search(text)
            names = re.findall(r"^\s*def (test\w*)\(", text, re.M)
            return judge_reply(m.group(1) if m else a.instruction.text, names, flag_skills=False)
        if stage_name == EVOLVE:
            reply = EvolvedTask(change=change, plan=t.plan, environment=a.manifest, instruction=a.instruction,
                                solution=a.solution, tests=a.tests).model_dump(by_alias=True)
            if fault == "garbage":
                return f"I made the {vid} variant: {change}. It is a much better task now!"
            if fault == "empty_change":
                return {**reply, "change": "  "}
            if fault in FAULTS:
                bad = broken(fault, _ARTIFACT_STAGE[FAULTS[fault]], t, 1)
                if isinstance(bad, str):
                    return bad
                if bad is not None:
                    return {**reply, FAULTS[fault]: bad}
            return reply
        artifact = next((x for x, s in M.REPAIR.items() if s == stage_name), None)
        if artifact is None:
            return f"no scripted reply for stage {stage_name} of variant {vid}"
        if fault in FAULTS:
            bad = broken(fault, stage_name, t, k)
            if bad is not None:
                return bad
        return {"environment": a.manifest, "instruction": a.instruction, "solution": a.solution,
                "tests": a.tests}[artifact].model_dump(by_alias=True)


__all__ = ["EVOLVE_FAULTS", "NoScriptedVariant", "ScriptedEvolution", "easier", "harder", "parent_artifacts",
           "plan_of", "switched"]
