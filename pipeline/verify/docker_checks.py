"""The checks that need Docker: build, no-op (tests FAIL untouched), oracle (solution, then
tests PASS). One throwaway container per check; the tests are copied in only after the
solution has finished, as Harbor does.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from pipeline.verify.junit import parse_junit
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import BuildResult, Engine, Limits
from workbench.sandbox.task_toml import TaskToml

VERIFIER_DIR = "/logs/verifier"
FORK_HINT = "process limit reached: something forks without end"


def limits_for(cfg: TaskToml) -> Limits:
    # A task may ask for less than our defaults but never for more than a sane ceiling.
    return Limits(memory_mb=min(max(cfg.memory_mb, 256), 4096), cpus=min(max(cfg.cpus, 0.25), 2.0),
                  network=cfg.allow_internet)


def check_build(engine: Engine, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float) -> tuple[CheckResult, BuildResult]:
    res = engine.build(bundle.under("environment"), bundle.environment_hash(), cfg.build_timeout_sec * timeout_scale)
    reason = ("image exists (same environment built before)" if res.cached else "built") if res.ok else res.reason
    return CheckResult(name="build", passed=res.ok, reason=reason, seconds=res.seconds, log=res.log,
                       details={"image": res.image, "cached": res.cached}), res


def _reward(files: dict[str, bytes]) -> tuple[float | None, dict]:
    by_name = {k.rsplit("/", 1)[-1]: v for k, v in files.items()}
    if "reward.json" in by_name:
        try:
            data = json.loads(by_name["reward.json"])
            values = [float(v) for v in data.values()] if isinstance(data, dict) else [float(data)]
            return (min(values) if values else None), {"reward_json": data}
        except (ValueError, TypeError, AttributeError):
            return None, {"reward_json_error": by_name["reward.json"][:200].decode("utf-8", "replace")}
    if "reward.txt" in by_name:
        try:
            return float(by_name["reward.txt"].decode().strip()), {}
        except ValueError:
            return None, {"reward_txt_error": by_name["reward.txt"][:200].decode("utf-8", "replace")}
    return None, {}


def _run_tests(box, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float) -> tuple[dict, str, str | None]:
    """Copy tests in, run test.sh, read the reward and per-test outcomes."""
    box.put(bundle.under("tests"), "/tests")
    res = box.run(f"mkdir -p {VERIFIER_DIR} && bash /tests/test.sh", cfg.verifier_timeout_sec * timeout_scale)
    files = box.read_files(VERIFIER_DIR) if not (res.timed_out or res.output_capped) else {}
    reward, extra = _reward(files)
    junit = next((v for k, v in files.items() if k.endswith("junit.xml")), None)
    details = {"reward": reward, "exit_code": res.exit_code, "tests": parse_junit(junit), **extra}
    problem = None
    if res.timed_out or res.output_capped:
        problem = res.reason("tests/test.sh", cfg.verifier_timeout_sec * timeout_scale, box.limits.output_bytes)
    elif reward is None:
        last = (res.output.strip().splitlines() or ["(no output)"])[-1][:200]
        forks = "Resource temporarily unavailable" in res.output or box.pids_exhausted(samples=5)
        hint = f" ({FORK_HINT})" if forks else ""
        problem = (f"tests/test.sh wrote no readable reward to /logs/verifier/reward.txt or reward.json{hint}; "
                   f"exit code {res.exit_code}, last output: {last!r}")
    return details, f"$ bash /tests/test.sh\n{res.output}", problem


def check_noop(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    import time
    t0 = time.monotonic()
    with engine.container(image, limits_for(cfg), purpose="noop") as box:
        details, log, problem = _run_tests(box, bundle, cfg, timeout_scale)
    failed = [t["name"] for t in details["tests"] if t["outcome"] != "passed"]
    if problem:
        passed, reason = False, problem
    elif details["reward"] and details["reward"] > 0:
        passed, reason = False, f"the tests pass on the untouched environment (reward {details['reward']}): they check nothing the task changes"
    else:
        passed, reason = True, f"tests fail untouched as they should ({len(failed)} of {len(details['tests'])} failing)"
    return CheckResult(name="noop", passed=passed, reason=reason, seconds=time.monotonic() - t0, log=log, details=details)


def check_oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    import time
    t0 = time.monotonic()
    limits = limits_for(cfg)
    with engine.container(image, limits, purpose="oracle") as box:
        box.put(bundle.under("solution"), "/solution")
        solve = box.run("bash /solution/solve.sh", cfg.agent_timeout_sec * timeout_scale)
        log = f"$ bash /solution/solve.sh\n{solve.output}"
        # A solution that leaves the pid table full would only show up as tests that cannot
        # start (exec fails with an OCI error), so it is named here, where the fault is.
        forking = not (solve.timed_out or solve.output_capped) and box.pids_exhausted()
        if solve.timed_out or solve.output_capped or forking:
            reason = (f"solution/solve.sh left {box.process_count()} processes running at the limit of "
                      f"{limits.pids}: {FORK_HINT}") if forking else \
                solve.reason("solution/solve.sh", cfg.agent_timeout_sec * timeout_scale, limits.output_bytes)
            return CheckResult(name="oracle", passed=False, reason=reason, seconds=time.monotonic() - t0, log=log,
                               details={"solve_exit_code": solve.exit_code, "timed_out": solve.timed_out,
                                        "output_capped": solve.output_capped, "tests": []})
        details, test_log, problem = _run_tests(box, bundle, cfg, timeout_scale)
    details["solve_exit_code"] = solve.exit_code
    log += "\n" + test_log
    failed = [t["name"] for t in details["tests"] if t["outcome"] != "passed"]
    if problem:
        passed, reason = False, problem
    elif solve.exit_code != 0:
        passed, reason = False, f"solution/solve.sh exited with code {solve.exit_code}"
    elif details["reward"] is None or details["reward"] < 1.0:
        passed, reason = False, (f"after the solution the tests still fail (reward {details['reward']}; "
                                 f"failing: {', '.join(failed[:5]) or 'see log'})")
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
