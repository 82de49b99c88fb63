"""The checks that need Docker: build, no-op (tests FAIL untouched), oracle (solution, then
tests PASS, leaving nothing behind that tests could read). The no-op and oracle checks are
trials (pipeline/trials) with the nop and oracle agents: one throwaway container each, the
tests copied in only after the agent has finished and everything it left running is stopped,
run on the verifier's own read-only toolchain. This module turns a trial into a verdict.
"""
from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from pipeline.agents.nop import NopAgent
from pipeline.agents.oracle import OracleAgent
from pipeline.trials.models import TrialResult
from pipeline.trials.sandbox import FORK_HINT, TOOLCHAIN_UNUSABLE, limits_for
from pipeline.trials.test_phase import VERIFIER_DIR
from pipeline.trials.trial import run_trial
from pipeline.verify.reward import REWARD_ONLY, failing
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import BuildResult, Engine
from workbench.sandbox.task_toml import TaskToml

__all__ = ["FORK_HINT", "TOOLCHAIN_UNUSABLE", "VERIFIER_DIR", "check_build", "check_noop", "check_noop_and_oracle",
           "check_oracle", "limits_for"]


def check_build(engine: Engine, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float) -> tuple[CheckResult, BuildResult]:
    res = engine.build(bundle.under("environment"), bundle.environment_hash(), cfg.build_timeout_sec * timeout_scale)
    reason = ("image exists (same environment built before)" if res.cached else "built") if res.ok else res.reason
    return CheckResult(name="build", passed=res.ok, reason=reason, seconds=res.seconds, log=res.log,
                       details={"image": res.image, "cached": res.cached}), res


def _trial(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float, agent,
           watch: bool = False) -> TrialResult:
    return run_trial(engine, image, bundle, cfg, agent, trial_id=f"check-{agent.name}-{uuid.uuid4().hex[:12]}",
                     task_id=cfg.name, timeout_scale=timeout_scale, watch=watch)


def _toolchain_failure(name: str, trial: TrialResult, t0: float) -> CheckResult | None:
    if trial.problem and trial.problem.startswith(TOOLCHAIN_UNUSABLE):
        return CheckResult(name=name, passed=False, reason=trial.problem, seconds=time.monotonic() - t0)
    return None


def check_noop(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    t0 = time.monotonic()
    trial = _trial(engine, image, bundle, cfg, timeout_scale, NopAgent())
    if (broken := _toolchain_failure("noop", trial, t0)) is not None:
        return broken
    details, problem = trial.details, trial.problem
    failed = failing(details["tests"])
    if problem:
        passed, reason = False, problem
    elif details["reward"] and details["reward"] > 0:
        passed, reason = False, f"the tests pass on the untouched environment (reward {details['reward']}): they check nothing the task changes"
    elif details.get("reward_only"):
        passed, reason = True, f"reward {details['reward']} untouched, as it should be; warning: {REWARD_ONLY}"
    elif not failed:
        passed, reason = False, (f"reward {details['reward']} but none of the {len(details['tests'])} tests fails "
                                 "on the untouched environment")
    else:
        passed, reason = True, f"tests fail untouched as they should ({len(failed)} of {len(details['tests'])} failing)"
    return CheckResult(name="noop", passed=passed, reason=reason, seconds=time.monotonic() - t0, log=trial.log,
                       details=details)


def check_oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0) -> CheckResult:
    t0 = time.monotonic()
    trial = _trial(engine, image, bundle, cfg, timeout_scale, OracleAgent(), watch=True)
    if (broken := _toolchain_failure("oracle", trial, t0)) is not None:
        return broken
    solve = trial.agent
    if solve.status in ("timeout", "crashed"):
        # solve.sh stopped by a limit (or forking without end): the solution's fault, whatever
        # the tests found afterwards.
        return CheckResult(name="oracle", passed=False, reason=solve.error, seconds=time.monotonic() - t0,
                           log=solve.log, details={"solve_exit_code": solve.exit_code,
                                                   "timed_out": bool(solve.details.get("timed_out")),
                                                   "output_capped": bool(solve.details.get("output_capped")),
                                                   "tests": []})
    details, problem = dict(trial.details), trial.problem
    details["solve_exit_code"] = solve.exit_code
    written = details.get("test_writes") or []
    failed = failing(details["tests"])
    strays = details.get("strays_stopped", 0)
    pids = limits_for(cfg, timeout_scale).pids
    # A fork bomb, stopped before the tests: many processes, or some and a pid table seen full.
    if strays >= pids * 0.9 or (strays and "Resource temporarily unavailable" in solve.log):
        passed, reason = False, (f"solution/solve.sh left processes behind that kept forking ({strays} "
                                 f"killed before the tests; the limit is {pids}): {FORK_HINT}")
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
    elif details.get("reward_only"):
        passed, reason = True, f"solution gets reward {details['reward']}; warning: {REWARD_ONLY}"
    else:
        passed, reason = True, f"solution passes all {len(details['tests'])} tests"
    return CheckResult(name="oracle", passed=passed, reason=reason, seconds=time.monotonic() - t0, log=trial.log,
                       details=details)


def check_noop_and_oracle(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml,
                          timeout_scale: float = 1.0) -> list[CheckResult]:
    """Both checks at once, each in its own container."""
    with ThreadPoolExecutor(2) as pool:
        noop = pool.submit(check_noop, engine, image, bundle, cfg, timeout_scale)
        oracle = pool.submit(check_oracle, engine, image, bundle, cfg, timeout_scale)
        return [noop.result(), oracle.result()]
