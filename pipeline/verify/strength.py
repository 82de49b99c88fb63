"""Verifier strength per task (issue 27.3): how much of the solution's work the tests check.

Each top-level command of solution/solve.sh is left out once (pipeline/agents/solution_steps:
set-up lines such as `set -e` or `cd /app` are no commands of the task); after each cut run the
container's state is read (every path with its mode and owner; the contents of files written
since the run began), then the sealed tests run. A command is
- *caught* when its removal fails a test;
- *effective* when its removal changes the state (against the full solution, files that differ
  between two full runs left out as unstable: timestamps in an archive, a random name) — or is
  caught;
- *noise* when neither: it did nothing the tests or the state could see;
- *untested* when effective but not caught: work the solution does that no test checks.
strength = caught / effective (None for a solution with no effective command).

Every run has Git's dates and SOURCE_DATE_EPOCH pinned (PINNED_TIME), the second full run comes
last. Costs two full runs and one run per command, each a trial of its own (`concurrency` at once): it
is measured on demand (`workbench tasks strength`), not in every verification.
"""
from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.agents.solution_run import run_solve, solution_result, solve_status
from pipeline.agents.solution_steps import SolutionStep, command_steps, without_steps
from pipeline.trials.trial import run_trial
from pipeline.verify.reward import failing
from workbench.sandbox import toolchain
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import TaskToml

CONCURRENCY = 3
MAX_FILES = 4000
# Never the solution's work: the kernel's and the verifier's places, caches that running any
# Python leaves.
SKIP_PREFIXES = ("/proc", "/sys", "/dev", "/run", toolchain.ROOT, "/solution", "/logs", "/tmp/.wb-")
SKIP_PARTS = ("__pycache__",)

# Runs inside the container on the toolchain's Python: argv[1] the time the run began (ns),
# argv[2] what to skip. Prints {"tree": hash of every path with its mode and owner, "files":
# {path: mode, owner and content hash} of what changed since argv[1] (folders too: a chmod
# shows), "more": files left out past MAX_FILES}.
STATE_SCAN = r"""
import hashlib, json, os, stat, sys
t0, skip = int(sys.argv[1]), json.loads(sys.argv[2])
prefixes, parts, cap = tuple(skip["prefixes"]), tuple(skip["parts"]), skip["max"]
tree, files, more, todo = hashlib.sha256(), {}, 0, ["/"]
while todo:
    d = todo.pop()
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:
        continue
    for e in entries:
        p = e.path
        if p.startswith(prefixes) or any(x in p for x in parts):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        tree.update(f"{p}\0{st.st_mode}\0{st.st_uid}\0{st.st_gid}\n".encode())
        if stat.S_ISDIR(st.st_mode):
            todo.append(p)
        if max(st.st_mtime_ns, st.st_ctime_ns) < t0:
            continue
        if len(files) >= cap:
            more += 1
            continue
        who = f"{st.st_mode:o}:{st.st_uid}:{st.st_gid}:"
        if stat.S_ISDIR(st.st_mode):
            files[p] = who + "dir"
        elif stat.S_ISLNK(st.st_mode):
            files[p] = who + "link:" + os.readlink(p)
        elif stat.S_ISREG(st.st_mode) and st.st_size <= 64 << 20:
            h = hashlib.sha256()
            try:
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                files[p] = who + h.hexdigest()[:24]
            except OSError:
                files[p] = who + "unreadable"
        else:
            files[p] = who + f"size:{st.st_size}"
print(json.dumps({"tree": tree.hexdigest()[:24], "files": files, "more": more}))
"""
_SKIP = json.dumps({"prefixes": SKIP_PREFIXES, "parts": SKIP_PARTS, "max": MAX_FILES})
NOW_NS = "import time; print(time.time_ns())"
# Pinned for every run of the measure, so that a commit or a reproducible archive made by any run
# is the same bytes: otherwise each cut's own timestamps would read as an effect of the cut.
PINNED_TIME = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
               "SOURCE_DATE_EPOCH": "1767225600"}


class CutSolutionAgent(ScriptedAgent):
    """The task's solution less `cut` (none: the whole of it), then the container's state read.
    An inner agent of the strength measure, never a rollout agent: it runs under the ablation
    probe's name and label."""
    name = "ablation"

    def __init__(self, cut: SolutionStep | None):
        self.cut = cut

    def run(self, ctx: AgentContext) -> AgentResult:
        solve = ctx.bundle.text("solution/solve.sh")
        script = without_steps(solve, [self.cut], by="the strength measure") if self.cut else solve
        ctx.box.put(dict(ctx.bundle.under("solution"), **{"solve.sh": script.encode()}), "/solution")
        started = ctx.box.run(toolchain.python_argv(NOW_NS), 30, environment=toolchain.LOADER_ENV)
        run = run_solve(ctx.box, ctx.timeout_s, extra_env=PINNED_TIME)
        status, reason = solve_status(run, ctx.box)
        if status == "script_failed":            # a cut often makes a later command fail: the tests decide
            status, reason = "completed", ""
        state = None
        if started.exit_code == 0 and status == "completed":
            res = ctx.box.run(toolchain.python_argv(STATE_SCAN, started.output.strip(), _SKIP), 120,
                              environment=toolchain.LOADER_ENV)
            if res.exit_code == 0:
                state = json.loads(res.output.strip().splitlines()[-1])
        label = self.cut.label if self.cut else "nothing"
        return solution_result(ctx, self, run, status, reason, details={"cut": label, "state": state},
                               message=f"Run the task's own solution less {label}, then read the state.")


@dataclass
class CommandRow:
    number: int
    command: str
    caught: bool
    effect: bool | None          # None: the state could not be read
    failing_tests: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)     # paths that differ from the full run (a few)

    @property
    def effective(self) -> bool:
        return self.caught or bool(self.effect)


@dataclass
class StrengthReport:
    """One task's measure; `problem` says why it could not run (then `commands` is empty)."""
    commands: list[CommandRow]
    unstable: list[str] = field(default_factory=list)
    problem: str | None = None
    seconds: float = 0.0

    @property
    def effective(self) -> int:
        return sum(c.effective for c in self.commands)

    @property
    def caught(self) -> int:
        return sum(c.caught for c in self.commands)       # a caught command is effective

    @property
    def strength(self) -> float | None:
        """caught / effective; None with nothing effective to catch, or no measure (`problem`)."""
        return self.caught / self.effective if self.effective else None

    @property
    def noise(self) -> list[CommandRow]:
        return [c for c in self.commands if not c.effective and c.effect is not None]

    @property
    def untested(self) -> list[CommandRow]:
        return [c for c in self.commands if c.effective and not c.caught]

    def as_dict(self) -> dict:
        return {"strength": self.strength, "effective": self.effective, "caught": self.caught,
                "commands": [asdict(c) for c in self.commands], "unstable": self.unstable[:50],
                "problem": self.problem, "seconds": round(self.seconds, 2)}

    def summary(self) -> str:
        if self.strength is None:
            return self.problem or "no command of the solution has an effect to check"
        return (f"{self.strength:.0%} of effective commands caught ({self.caught}/{self.effective}); "
                f"{len(self.untested)} untested, {len(self.noise)} without effect")


TREE_CHANGED = "(paths, modes or owners)"


def unstable_paths(first: dict, second: dict) -> set[str]:
    """What two full runs disagree on: paths of different contents (or made by one only), and
    TREE_CHANGED when their listings differ (then a listing alone never shows a cut's effect)."""
    out = set(_differs(first, second, set()))
    if first["tree"] != second["tree"]:
        out.add(TREE_CHANGED)
    return out


def volatile_dirs(first: dict, second: dict) -> set[str]:
    """Folders whose entries come and go between two full runs: the grandparent of a file only one
    of them made (a Git object's `objects/ab/…`, a `mkdtemp` folder in /tmp): there, a file made
    or missing says nothing about a cut."""
    one_sided = set(first["files"]) ^ set(second["files"])
    return {p.rsplit("/", 2)[0] or "/" for p in one_sided if p.count("/") >= 2}


def _differs(full: dict, cut: dict, unstable: set[str], volatile: set[str] = frozenset()) -> list[str]:
    """Paths whose contents differ: an unstable one (its contents differ between two full runs)
    only when it is there in one run and not the other, and that not under a volatile folder;
    else TREE_CHANGED when only the listing differs (a folder made, a mode or owner changed)."""
    a, b = full["files"], cut["files"]

    def counts(p: str) -> bool:
        if a.get(p) == b.get(p):
            return False
        if p in a and p in b:
            return p not in unstable
        return not any(p.startswith(v.rstrip("/") + "/") for v in volatile)
    changed = sorted(p for p in set(a) | set(b) if counts(p))
    if not changed and full["tree"] != cut["tree"] and TREE_CHANGED not in unstable:
        return [TREE_CHANGED]
    return changed


def measure_strength(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, *, timeout_scale: float = 1.0,
                     concurrency: int = CONCURRENCY) -> StrengthReport:
    t0 = time.monotonic()
    steps = command_steps(bundle.text("solution/solve.sh"))
    if not steps:
        return StrengthReport([], problem="solution/solve.sh has no command beyond set-up lines",
                              seconds=time.monotonic() - t0)

    def trial(cut: SolutionStep | None):
        return run_trial(engine, image, bundle, cfg, CutSolutionAgent(cut), task_id=cfg.name,
                         trial_id=f"strength-{uuid.uuid4().hex[:12]}", timeout_scale=timeout_scale)

    # the second full run last: what depends on the clock then differs between the two
    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        runs = list(pool.map(trial, [None, *steps, None]))
    full, again, cuts = runs[0], runs[-1], runs[1:-1]
    states = [r.agent.details.get("state") for r in (full, again)]
    if not full.passed or None in states:
        if full.passed:
            why = "its state could not be read"
        else:
            why = full.problem or full.agent.error or f"the tests fail ({', '.join(failing(full.tests)[:3])})"
        return StrengthReport([], problem=f"the full solution gives no reference: {why}",
                              seconds=time.monotonic() - t0)
    unstable = unstable_paths(*states)
    volatile = volatile_dirs(*states)
    rows = []
    for step, run in zip(steps, cuts):
        state = run.agent.details.get("state")
        changed = _differs(states[0], state, unstable, volatile) if state else []
        rows.append(CommandRow(step.number, step.label, caught=not run.passed,
                               effect=None if state is None else bool(changed),
                               failing_tests=failing(run.tests)[:10] or ([run.problem[:200]] if run.problem else []),
                               changed=changed[:5]))
    return StrengthReport(rows, sorted(unstable), seconds=time.monotonic() - t0)
