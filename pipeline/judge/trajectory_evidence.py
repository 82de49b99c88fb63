"""What the trajectory judge is shown of an unsolved task: the instruction and tests of its
bundle, its consistently / sporadically failing tests, and the end of each rollout's terminal.

Every text here is hostile (written by a synthesizer model, or by an agent and the programs
it ran in the container): sizes are capped, files are read bounded from the rollout's own
folder only (no links), and no text may close the prompt block it sits in.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.trajectories.atif import TrajectoryError, read_trajectory
from workbench.sandbox.bundle import TaskBundle

MAX_CHARS = {"instruction": 12_000, "tests": 16_000, "terminal": 12_000}
TAIL_CHARS = 2_500          # of one rollout's terminal
MAX_TAILS = 4               # rollouts whose terminal is shown (the newest)
_READ_CAP = 4 * 1024 * 1024  # a trajectory.json larger than this is not parsed
BLOCKS = ("instruction_md", "tests", "failing_tests", "terminal")
_CLOSING_TAG = re.compile(r"</\s*(" + "|".join(BLOCKS) + r")\b", re.I)
TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", re.M)


def block(text: str, cap: int) -> str:
    """Text for a prompt block: no closing tag of ours inside, cut (head kept, the cut said)."""
    text = _CLOSING_TAG.sub(r"<\\/\1", text)
    if len(text) > cap:
        text = text[:cap] + f"\n[... {len(text) - cap} more characters cut]"
    return text


@dataclass(frozen=True)
class TaskTexts:
    instruction: str
    tests: dict[str, str]          # tests/<file> -> source (test_*.py, conftest.py, test.sh)

    @classmethod
    def of(cls, bundle: TaskBundle) -> TaskTexts:
        tests = {p: bundle.text(p) for p in sorted(bundle.files)
                 if p.startswith("tests/") and (p.endswith(".py") or p.endswith(".sh"))}
        instruction = bundle.text("instruction.md") if "instruction.md" in bundle.files else ""
        return cls(instruction, tests)

    def test_names(self) -> set[str]:
        return {n for p, src in self.tests.items() if p.endswith(".py") for n in TEST_DEF.findall(src)}

    def tests_text(self) -> str:
        return "\n\n".join(f"# file: {p}\n{src}" for p, src in self.tests.items()) or "(no test files)"


def _tail(text: str, cap: int = TAIL_CHARS) -> str:
    return text if len(text) <= cap else f"[... {len(text) - cap} earlier characters cut]\n" + text[-cap:]


def _read_tail(path: Path, cap: int) -> str:
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - cap * 4))   # up to 4 bytes a character
        data = f.read()
    return _tail(data.decode("utf-8", errors="replace"), cap)


def _inside(root: Path, folder: str) -> Path | None:
    """The rollout's folder under the workspace, or None when it is not one (outside, a link)."""
    path = root / folder
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if path.is_symlink() or not resolved.is_relative_to(root.resolve()) or not resolved.is_dir():
        return None
    return resolved


def terminal_tail(root: Path, folder: str) -> str:
    """The end of a rollout's terminal: its agent.log, else the observations of its trajectory.json;
    a missing or unreadable file is said, not raised (the other rollouts still count)."""
    where = _inside(root, folder)
    if where is None:
        return f"(no rollout folder at {folder})"
    log = where / "agent.log"
    if log.is_file() and not log.is_symlink():
        try:
            text = _read_tail(log, TAIL_CHARS)
        except OSError as exc:
            return f"(agent.log unreadable: {exc})"
        if text.strip():
            return text
    traj = where / "trajectory.json"
    if not traj.is_file() or traj.is_symlink():
        return "(no agent.log and no trajectory.json)"
    if traj.stat().st_size > _READ_CAP:
        return f"(trajectory.json is {traj.stat().st_size:,} bytes; not read)"
    try:
        doc = read_trajectory(traj)
    except (TrajectoryError, OSError) as exc:
        return f"(trajectory.json unreadable: {str(exc)[:300]})"
    parts = []
    for step in doc.steps:
        for r in (step.observation.results if step.observation else []):
            if isinstance(r.content, str):
                parts.append(r.content)
    return _tail("\n".join(parts)) if parts else "(the trajectory has no terminal output)"


def terminals_text(root: Path, rollouts: list[tuple[str, str, str]]) -> str:
    """`rollouts`: (rollout_id, failure_class, folder), newest first; the first MAX_TAILS shown."""
    shown = rollouts[:MAX_TAILS]
    parts = [f"--- rollout {rid} (failure: {fc}) ---\n{terminal_tail(root, folder)}" for rid, fc, folder in shown]
    if len(rollouts) > len(shown):
        parts.append(f"[{len(rollouts) - len(shown)} more rollouts not shown]")
    return "\n\n".join(parts)


def normalized(text: str) -> str:
    """For matching a quote to its source: case and runs of whitespace do not count."""
    return " ".join(text.split()).lower()
