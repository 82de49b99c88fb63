"""The checks that need Docker: build, no-op (tests FAIL untouched), oracle (solution, then
tests PASS, leaving nothing behind that tests could read). One throwaway container per
check; the tests are copied in only after the solution has finished and everything it left
running is stopped, and they run on the verifier's own read-only toolchain.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from pipeline.verify import verifier_phase as phase
from pipeline.verify.reward import contradiction, failing, read_reward, read_tests
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.ceilings import LIFETIME_MARGIN_S, grant
from workbench.sandbox.engine import BuildResult, Engine, Limits
from workbench.sandbox.task_toml import TaskToml
from workbench.sandbox import toolchain
from workbench.sandbox.toolchain import ToolchainError

VERIFIER_DIR = phase.VERIFIER_DIR
FORK_HINT = "process limit reached: something forks without end"
TOOLCHAIN_UNUSABLE = "the verifier's own toolchain could not be used"


def limits_for(cfg: TaskToml, timeout_scale: float = 1.0) -> Limits:
    """The container limits a task gets: its request capped at the ceilings (`grant`), with a
    floor so a tiny request cannot starve the toolchain; the network only where `cfg` came
    out of a grant the user opted in to. The container may live as long as its solution and
    tests may run, and not longer."""
    capped = grant(cfg, allow_network=cfg.network_granted).task
    lifetime = (capped.agent_timeout_sec + capped.verifier_timeout_sec) * max(1.0, timeout_scale) + LIFETIME_MARGIN_S
    return Limits(memory_mb=max(capped.memory_mb, 256), cpus=max(capped.cpus, 0.25), disk_mb=capped.storage_mb,
                  network=capped.network_granted, lifetime_s=lifetime)


def check_build(engine: Engine, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float) -> tuple[CheckResult, BuildResult]:
    res = engine.build(bundle.under("environment"), bundle.environment_hash(), cfg.build_timeout_sec * timeout_scale)
    reason = ("image exists (same environment built before)" if res.cached else "built") if res.ok else res.reason
    return CheckResult(name="build", passed=res.ok, reason=reason, seconds=res.seconds, log=res.log,
                       details={"image": res.image, "cached": res.cached}), res


@contextmanager
def _sandbox(engine: Engine, image: str, limits: Limits, purpose: str):
    """A check container with the verifier's read-only toolchain mounted (and checked to be)."""
    tc = toolchain.ensure(engine)
    with engine.container(image, limits, purpose=purpose, mounts=[tc.mount()]) as box:
        toolchain.check_mounted(engine, box.container.id, tc.volume)
        yield box


def _run_tests(box, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float,
               watch: bool = False) -> tuple[dict, str, str | None]:
    """The sealed test phase (see verifier_phase): nothing of the solution left running, empty
    verifier folders, tests copied in, test.sh on the toolchain; then reward and outcomes.
    `watch`: also list the files the tests leave behind (details["test_writes"])."""
    timeout = cfg.verifier_timeout_sec * timeout_scale
    saved, strays = None, 0
    try:
        strays = phase.stop_strays(box)
        phase.prepare(box)
        if watch:
            saved = phase.snapshot(box)
    except phase.PhaseError as exc:
        return {"tests": [], "reward": None, "exit_code": None}, "", f"the test phase could not start clean: {exc}"
    box.put(bundle.under("tests"), "/tests")
    res = phase.run_test_sh(box, timeout)
    log = f"$ bash /tests/test.sh   (the verifier's own bash, python3 and pytest)\n{res.output}"
    stray, written = None, []
    if not res.stopped_by_limit:
        try:
            phase.stop_strays(box)   # before reading: nothing a test started may still write there
            if saved:
                written = phase.traces(box, saved)
        except phase.PhaseError as exc:
            stray = f"after the tests, {exc}"
    files = box.read_files(VERIFIER_DIR) if not (res.stopped_by_limit or stray) else {}
    reward, extra = read_reward(files)
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
    return details, log, problem


def check_noop(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    t0 = time.monotonic()
    try:
        with _sandbox(engine, image, limits_for(cfg, timeout_scale), "noop") as box:
            details, log, problem = _run_tests(box, bundle, cfg, timeout_scale)
    except ToolchainError as exc:
        return CheckResult(name="noop", passed=False, reason=f"{TOOLCHAIN_UNUSABLE}: {exc}",
                           seconds=time.monotonic() - t0)
    failed = failing(details["tests"])
    if problem:
        passed, reason = False, problem
    elif details["reward"] and details["reward"] > 0:
        passed, reason = False, f"the tests pass on the untouched environment (reward {details['reward']}): they check nothing the task changes"
    elif not failed:
        passed, reason = False, (f"reward {details['reward']} but none of the {len(details['tests'])} tests fails "
                                 "on the untouched environment")
    else:
        passed, reason = True, f"tests fail untouched as they should ({len(failed)} of {len(details['tests'])} failing)"
    return CheckResult(name="noop", passed=passed, reason=reason, seconds=time.monotonic() - t0, log=log, details=details)


def check_oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    t0 = time.monotonic()
    try:
        return _oracle(engine, image, bundle, cfg, timeout_scale, t0)
    except ToolchainError as exc:
        return CheckResult(name="oracle", passed=False, reason=f"{TOOLCHAIN_UNUSABLE}: {exc}",
                           seconds=time.monotonic() - t0)


def _oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float, t0: float) -> CheckResult:
    limits = limits_for(cfg, timeout_scale)
    with _sandbox(engine, image, limits, "oracle") as box:
        box.put(bundle.under("solution"), "/solution")
        solve = box.run("bash /solution/solve.sh", cfg.agent_timeout_sec * timeout_scale)
        log = f"$ bash /solution/solve.sh\n{solve.output}"
        # A solution that leaves the pid table full would only show up as tests that cannot
        # start (exec fails with an OCI error), so it is named here, where the fault is.
        forking = not solve.stopped_by_limit and box.pids_exhausted()
        if solve.stopped_by_limit or solve.oom_killed or forking:
            reason = (f"solution/solve.sh left {box.process_count()} processes running at the limit of "
                      f"{limits.pids}: {FORK_HINT}") if forking else \
                solve.reason("solution/solve.sh", cfg.agent_timeout_sec * timeout_scale, limits.output_bytes)
            if solve.timed_out and "fork: retry: Resource temporarily unavailable" in solve.output:
                # Under load a fork bomb's own bash can outlive the limit while it retries forks.
                reason += f" ({FORK_HINT})"
            return CheckResult(name="oracle", passed=False, reason=reason, seconds=time.monotonic() - t0, log=log,
                               details={"solve_exit_code": solve.exit_code, "timed_out": solve.timed_out,
                                        "output_capped": solve.output_capped, "tests": []})
        details, test_log, problem = _run_tests(box, bundle, cfg, timeout_scale, watch=True)
    details["solve_exit_code"] = solve.exit_code
    written = details.get("test_writes") or []
    log += "\n" + test_log
    failed = failing(details["tests"])
    strays = details.get("strays_stopped", 0)
    # A fork bomb, stopped before the tests: many processes, or some and a pid table seen full.
    if strays >= limits.pids * 0.9 or (strays and "Resource temporarily unavailable" in solve.output):
        passed, reason = False, (f"solution/solve.sh left processes behind that kept forking ({strays} "
                                 f"killed before the tests; the limit is {limits.pids}): {FORK_HINT}")
    elif problem:
        passed, reason = False, problem
    elif solve.exit_code != 0:
        passed, reason = False, f"solution/solve.sh exited with code {solve.exit_code}"
    elif details["reward"] is None or details["reward"] < 1.0 or failed:
        passed, reason = False, (f"after the solution the tests still fail (reward {details['reward']}; "
                                 f"failing: {', '.join(failed[:5]) or 'see log'})")
    elif written:
        # Tests that run the solution's code themselves and leave its outputs behind can check
        # their own work: "run it yourself" passes though the solution never ran anything.
        passed, reason = False, (f"the tests leave files behind that other tests could read: {', '.join(written[:5])}"
                                 f"{' …' if len(written) > 5 else ''} (tests that run the solution's code must work "
                                 "on a scratch copy)")
    else:
        passed, reason = True, f"solution passes all {len(details['tests'])} tests"
    return CheckResult(name="oracle", passed=passed, reason=reason, seconds=time.monotonic() - t0, log=log, details=details)


def check_noop_and_oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml,
                          timeout_scale: float = 1.0) -> list[CheckResult]:
    """Both checks at once, each in its own container."""
    with ThreadPoolExecutor(2) as pool:
        noop = pool.submit(check_noop, engine, image, bundle, cfg, timeout_scale)
        oracle = pool.submit(check_oracle, engine, image, bundle, cfg, timeout_scale)
        return [noop.result(), oracle.result()]
