"""The sealed test phase of a trial (pipeline/verify/verifier_phase has the steps): nothing
the agent left running, empty verifier folders, the tests copied in, test.sh on the
toolchain; then the reward, the per-test outcomes and whether they can be believed. The one
copy of this logic: the no-op and oracle checks and every rollout go through it."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from pipeline.trials.sandbox import FORK_HINT
from pipeline.verify import verifier_phase as phase
from pipeline.verify.reward import contradiction, read_reward, read_tests, reward_only
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.task_toml import TaskToml

VERIFIER_DIR = phase.VERIFIER_DIR
NOT_CLEAN = "the test phase could not start clean"
TEST_LOG_MARK = "$ bash /tests/test.sh"


@dataclass
class TestPhaseResult:
    """`details`: reward, exit_code, tests, strays_stopped (+ test_writes when watched, and
    read_reward's extras); `problem`: why the result cannot be believed, else None; `files`
    the raw files of /logs/verifier, by their path inside it ('junit.xml', 'reward.txt')."""
    __test__ = False     # not a pytest class, whatever its name
    details: dict
    log: str
    problem: str | None
    files: dict[str, bytes] = field(default_factory=dict)
    seconds: float = 0.0


def _relative(files: dict[str, bytes]) -> dict[str, bytes]:
    """Paths inside /logs/verifier ('junit.xml'), not the archive's names ('verifier/junit.xml')."""
    top = VERIFIER_DIR.rsplit("/", 1)[-1] + "/"
    return {name[len(top):] if name.startswith(top) else name: data for name, data in files.items()}


def run_tests(box, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float, watch: bool = False) -> TestPhaseResult:
    """`watch`: also list the files the tests leave behind (details["test_writes"])."""
    t0 = time.monotonic()
    timeout = cfg.verifier_timeout_sec * timeout_scale
    saved, strays = None, 0
    try:
        strays = phase.stop_strays_and_prepare(box)
        if watch:
            saved = phase.snapshot(box)
    except phase.PhaseError as exc:
        return TestPhaseResult({"tests": [], "reward": None, "exit_code": None}, "", f"{NOT_CLEAN}: {exc}",
                               seconds=time.monotonic() - t0)
    box.put(bundle.under("tests"), "/tests")
    box.settle_oom_count()
    res = phase.run_test_sh(box, timeout)
    log = f"{TEST_LOG_MARK}   (the verifier's own bash, python3, pytest and pristine copies of the image's programs)\n{res.output}"
    stray, written = None, []
    if not res.stopped_by_limit:
        try:
            phase.stop_strays(box)   # before reading: nothing a test started may still write there
            if saved:
                written = phase.traces(box, saved)
        except phase.PhaseError as exc:
            stray = f"after the tests, {exc}"
    files = _relative(box.read_files(VERIFIER_DIR)) if not (res.stopped_by_limit or stray) else {}
    reward, extra = read_reward(files)
    if reward_only(files, bundle.text("tests/test.sh")):
        extra["reward_only"] = True
    details = {"reward": reward, "exit_code": res.exit_code, "tests": read_tests(files), **extra}
    details["strays_stopped"] = strays
    if watch:
        details["test_writes"] = written
    problem = stray
    if res.stopped_by_limit or res.oom_killed:
        problem = res.reason("tests/test.sh", timeout, box.limits.output_bytes)
    elif problem:
        pass
    elif reward is None:
        last = (res.output.strip().splitlines() or ["(no output)"])[-1][:200]
        forks = "Resource temporarily unavailable" in res.output or box.pids_exhausted(samples=5)
        hint = f" ({FORK_HINT})" if forks else ""
        problem = (f"tests/test.sh wrote no readable reward to /logs/verifier/reward.txt or reward.json{hint}; "
                   f"exit code {res.exit_code}, last output: {last!r}")
    else:
        problem = contradiction(reward, details["tests"], extra)
    return TestPhaseResult(details, log, problem, files, time.monotonic() - t0)
