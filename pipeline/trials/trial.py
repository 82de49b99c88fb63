"""One trial, as Harbor runs one: a fresh container of the task image (its granted limits,
the verifier's read-only toolchain mounted) → the agent, bounded from outside too
(agent_phase) → the sealed test phase (test_phase: strays stopped, verifier folders emptied,
tests copied in, test.sh on the toolchain) → reward, per-test outcomes and whether they can be
believed → the container removed, whatever happens. The no-op and oracle checks and every
rollout are trials; only the agent differs.

The tests run after a timed-out or crashed agent too (per-test outcomes for the breakdowns),
unless the container itself was stopped at a limit, or the batch was cancelled.
"""
from __future__ import annotations

import threading
import time

from pipeline.agents.protocol import Agent, AgentContext, AgentResult
from pipeline.trials.agent_phase import AgentBox, drive_agent
from pipeline.trials.models import TrialResult
from pipeline.trials.sandbox import TOOLCHAIN_UNUSABLE, is_running, limits_for, sandbox
from pipeline.trials.test_phase import TestPhaseResult, run_tests
from pipeline.verify.reward import failing
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.ceilings import grant
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import TaskToml
from workbench.sandbox.toolchain import ToolchainError


def _no_tests(problem: str | None) -> TestPhaseResult:
    return TestPhaseResult({"tests": [], "reward": None, "exit_code": None}, "", problem)


def failure_class(agent: AgentResult, phase: TestPhaseResult) -> str | None:
    """Why the trial failed (one of FAILURE_CLASSES), None when it passed. The agent's own
    ending comes first (a timeout stays a timeout whatever the tests found); then a result
    that cannot be believed; then tests that fail."""
    if agent.status != "completed":
        return agent.status
    if phase.problem:
        return "verifier_error"
    reward = phase.details.get("reward")
    if reward is None or reward < 1.0 or failing(phase.details.get("tests") or []):
        return "test_assertion"
    return None


def run_trial(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, agent: Agent, *, trial_id: str,
              task_id: str, timeout_scale: float = 1.0, seed: int = 0, run_id: str | None = None,
              stop: threading.Event | None = None, watch: bool = False) -> TrialResult:
    """`watch`: the test phase also lists files the tests leave behind (the oracle check's
    details["test_writes"]). Exceptions of the agent become a crashed agent; the engine's own
    errors propagate (the container is removed all the same)."""
    t0 = time.monotonic()
    stop = stop or threading.Event()
    cfg = grant(cfg, allow_network=cfg.network_granted).task   # a raw task.toml gets no more than a checked one
    limits = limits_for(cfg, timeout_scale)
    timings: dict[str, float] = {}
    try:
        with sandbox(engine, image, limits, purpose=f"trial-{agent.name}") as box:
            timings["env_s"] = time.monotonic() - t0
            ctx = AgentContext(task_id=task_id, trial_id=trial_id, instruction=bundle.text("instruction.md"),
                               bundle=bundle, box=AgentBox.of(box), timeout_s=cfg.agent_timeout_sec * timeout_scale,
                               seed=seed, run_id=run_id, stop=stop)
            t_agent = time.monotonic()
            result = drive_agent(agent, ctx, box)
            timings["agent_s"] = time.monotonic() - t_agent
            if result.status == "stopped":
                phase = _no_tests("stopped before the tests: the batch was cancelled")
            elif not is_running(box):
                phase = _no_tests(f"no tests could run: the container was stopped during the agent's part "
                                  f"({result.error or result.status})")
            else:
                phase = run_tests(box, bundle, cfg, timeout_scale, watch=watch)
            timings["verifier_s"] = phase.seconds
    except ToolchainError as exc:
        result = AgentResult(status="crashed", error="the agent never ran: the trial could not start")
        phase = _no_tests(f"{TOOLCHAIN_UNUSABLE}: {exc}")
        timings.setdefault("env_s", time.monotonic() - t0)
        timings.update(agent_s=0.0, verifier_s=0.0, total_s=time.monotonic() - t0)
        return TrialResult(agent=result, reward=None, tests=[], problem=phase.problem, failure_class="verifier_error",
                           log=phase.problem or "", timings=timings)
    timings["total_s"] = time.monotonic() - t0
    log = "\n".join(part for part in (result.log, phase.log) if part)
    return TrialResult(agent=result, reward=phase.details.get("reward"), tests=phase.details.get("tests") or [],
                       problem=phase.problem, failure_class=failure_class(result, phase), log=log,
                       details=phase.details, verifier_files=phase.files, timings=timings)
