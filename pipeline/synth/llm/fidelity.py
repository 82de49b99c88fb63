"""What each step of an LLM-built task really uses of its skill (recorded as for offline tasks).

The solution marks its steps (`# step <k>` comment lines, as the solution prompt asks); each
step's part of solve.sh is read for the skill's tools (`skill_fit.solution_commands`), and the
files handed between steps (plan handoffs and the files the solution made) for the skill's
state kinds. Without markers every step is judged on the whole script.
"""
from __future__ import annotations

from pipeline.artifacts.vocabulary import kind_of_file
from pipeline.shell_syntax import STEP_MARK
from pipeline.synth.llm.models import Plan
from pipeline.synth.protocol import PathContext
from pipeline.synth.skill_fit import StepFidelity, rubric_fidelity, solution_commands


def recipe_of(skill_name: str) -> str:
    """The `recipes` entry of an LLM-built step: no family, the skill itself."""
    return f"llm:{skill_name}"


def solve_parts(solve_sh: str, n_steps: int) -> dict[int, str]:
    """Step number -> its lines of solve.sh (from one `# step k` marker to the next); every step
    gets the whole script when there are no markers."""
    marks = [(int(m.group(1)), m.start()) for m in STEP_MARK.finditer(solve_sh)]
    if not marks:
        return {k: solve_sh for k in range(1, n_steps + 1)}
    parts: dict[int, str] = {}
    for i, (k, start) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else len(solve_sh)
        parts[k] = parts.get(k, "") + solve_sh[start:end]
    return parts


def _kinds_of(paths) -> set[str]:
    return {k for p in paths if (k := kind_of_file(p.rsplit("/", 1)[-1]))}


def step_fidelities(path: PathContext, plan: Plan, solve_sh: str, made: set[str] | frozenset[str] = frozenset()
                    ) -> list[StepFidelity]:
    """One StepFidelity per path step. `made`: paths the solution created or changed."""
    parts = solve_parts(solve_sh, len(path.steps))
    out = []
    for k, sc in enumerate(path.steps, 1):
        s = sc.step
        tools = sorted(s.parts.evidence_tools & solution_commands(parts.get(k, "")))
        handed = {h.path for h in plan.handoffs if k in (h.from_step, h.to_step)}
        initial = set(plan.initial_files) if k == 1 else set()
        kinds = sorted(s.parts.kinds & _kinds_of(handed | initial | set(made)))
        name = s.skill_name.strip() or s.skill_id
        out.append(rubric_fidelity(k, s.skill_id, name, recipe_of(name), parts.get(k, ""), s.parts, tools, kinds,
                                   s.description))
    return out
