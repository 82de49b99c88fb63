"""The steps of a solve.sh, for the ablation probe: which one to leave out, and the script
without it.

Our bundles mark their steps (shell_syntax.STEP_MARK: `# --- step k (family) ---` offline,
`# step k: …` from the LLM synthesizer): a step is everything from its marker to the next,
and sections with the same number are one step. A hand-written solve.sh has no markers: its
steps are its top-level commands (shell_syntax.top_level_commands), less set-up lines that do
no work of the task (`set -e`, `cd /app`, `export X=…`, plain assignments)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.shell_syntax import STEP_MARK, simple_commands, top_level_commands

SETUP_WORDS = frozenset({"set", "cd", "pushd", "popd", "export", "shopt", "trap", "umask", "readonly", "declare",
                         "local", "true", ":"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class NoStepError(ValueError):
    """The script has no step that could be left out (empty, or set-up lines only)."""


@dataclass(frozen=True)
class SolutionStep:
    """`number`: the marker's step number, or the command's position (1-based) in a script
    without markers; `spans`: its line ranges [start, end) in the script; `label`: what a
    person reads ("step 2 (csv-filter)", "command 3: tar -czf …"); `marked`: from markers."""
    number: int
    label: str
    text: str
    spans: tuple[tuple[int, int], ...]
    marked: bool

    def as_dict(self) -> dict:
        return {"step": self.number, "label": self.label, "text": self.text, "marked": self.marked,
                "lines": [[a + 1, b] for a, b in self.spans]}


def _is_setup(text: str) -> bool:
    cmds = [c for c in simple_commands(text) if c]
    return all(c[0] in SETUP_WORDS or all(_ASSIGNMENT.match(t) for t in c) for c in cmds)


def _marked(lines: list[str]) -> list[SolutionStep]:
    marks = [(i, int(m.group(1))) for i, line in enumerate(lines) if (m := STEP_MARK.match(line))]
    by_number: dict[int, list[tuple[int, int]]] = {}
    for j, (i, k) in enumerate(marks):
        end = marks[j + 1][0] if j + 1 < len(marks) else len(lines)
        by_number.setdefault(k, []).append((i, end))
    out = []
    for k, spans in sorted(by_number.items()):
        label = lines[spans[0][0]].strip().lstrip("#").strip().strip("-").strip() or f"step {k}"
        text = "\n".join(ln for a, b in spans for ln in lines[a:b]).strip("\n")
        out.append(SolutionStep(k, label, text, tuple(spans), True))
    return out


def _commands(script: str, lines: list[str]) -> list[SolutionStep]:
    out = []
    for a, b in top_level_commands(script):
        text = "\n".join(lines[a:b])
        if _is_setup(text):
            continue
        first = text.strip().splitlines()[0]
        n = len(out) + 1
        out.append(SolutionStep(n, f"command {n}: {first[:80]}{' …' if len(first) > 80 else ''}", text,
                                ((a, b),), False))
    return out


def solution_steps(solve_sh: str) -> list[SolutionStep]:
    """The steps of `solve_sh`, in order (marked ones when it has markers)."""
    lines = solve_sh.splitlines()
    return _marked(lines) or _commands(solve_sh, lines)


def command_steps(solve_sh: str) -> list[SolutionStep]:
    """The top-level commands of `solve_sh`, markers or not (the verifier strength measure:
    one command left out at a time), set-up lines left out."""
    return _commands(solve_sh, solve_sh.splitlines())


def pick_step(steps: list[SolutionStep], seed: int) -> SolutionStep:
    """The step a seed leaves out: seeds 0, 1, … n-1 leave out each of n steps once, so k
    rollouts of a task probe k different steps. Raises NoStepError when there is none."""
    if not steps:
        raise NoStepError("solution/solve.sh has no step to leave out (no step markers, and no command "
                          "beyond set-up lines)")
    return steps[seed % len(steps)]


def without_step(solve_sh: str, step: SolutionStep) -> str:
    """`solve_sh` with the lines of `step` replaced by one comment saying so (line count kept
    small; what remains runs unchanged)."""
    return without_steps(solve_sh, [step], by="the ablation probe")


def without_steps(solve_sh: str, steps: list[SolutionStep], *, by: str) -> str:
    """`solve_sh` with the lines of each of `steps` replaced by one comment naming `by` and the step."""
    lines = solve_sh.splitlines()
    starts = {a: step for step in steps for a, _ in step.spans}
    drop = {i for step in steps for a, b in step.spans for i in range(a, b)}
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in drop:
            if i in starts:
                out.append(f"# (left out by {by}: {starts[i].label})")
            continue
        out.append(line)
    return "\n".join(out) + "\n"
