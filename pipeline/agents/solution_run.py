"""Running a task's solution (or the ablation's cut of it) in a trial's container: what the
oracle and ablation agents share.

solve.sh runs as its own process under a small runner on the verifier's read-only toolchain
Python. At the agent's time limit the runner stops every process of the container but PID 1
(wb_strays) and exits 124, so the container lives on and the tests can still run; only
when the runner itself is stopped or killed does the box's own limit (a margin later) kill
the container. The output cap, disk and memory limits are the box's as for any command. The
pid count is sampled from outside while it runs, so a fork bomb is named as one even when
its own output says nothing.
"""
from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, replace

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.trials.sandbox import FORK_HINT
from pipeline.trajectories.atif import TrajectoryBuilder
from workbench.sandbox import toolchain
from workbench.sandbox.box import ExecResult

SOLVE_COMMAND = "bash /solution/solve.sh"
SOLVE_LOG_MARK = f"$ {SOLVE_COMMAND}"
RUNNER_TIMEOUT_CODE = 124
KILL_MARGIN_S = 5.0          # the box kills the container this long after the runner should have
PID_SAMPLE_S = 0.25
FORK_RETRY = "fork: retry: Resource temporarily unavailable"
LOG_CAP = 200_000

# argv[1]: {name: value or null} for the loader variables the exec overrides (the image's
# own values come back for solve.sh); argv[2]: the time limit in seconds.
RUNNER = r"""
import json, os, subprocess, sys, wb_strays
restore, limit = json.loads(sys.argv[1]), float(sys.argv[2])
env = dict(os.environ)
for k, v in restore.items():
    if v is None:
        env.pop(k, None)
    else:
        env[k] = v
try:
    p = subprocess.Popen(["bash", "/solution/solve.sh"], env=env)
except OSError as exc:
    print(f"solve.sh could not start: {exc}", file=sys.stderr, flush=True)
    sys.exit(127)
try:
    code = p.wait(limit)
except subprocess.TimeoutExpired:
    wb_strays.stop_others()
    sys.exit(124)
sys.exit(code if code >= 0 else 128 - code)
"""


@dataclass
class SolveRun:
    """One run of solve.sh. `res` is the box's result of the runner; `timed_out`: stopped at the
    agent's limit (by the runner, the container alive; or by the box, the container gone)."""
    res: ExecResult
    timed_out: bool
    timeout_s: float
    process_peak: int
    pids_limit: int

    @property
    def seconds(self) -> float:
        return self.res.seconds

    @property
    def forking(self) -> bool:
        return self.process_peak >= self.pids_limit * 0.9


def _restore_env(box) -> dict[str, str | None]:
    image_env = box.engine.client.api.inspect_container(box.container.id)["Config"].get("Env") or []
    own = dict(item.partition("=")[::2] for item in image_env)
    return {k: own.get(k) for k in toolchain.LOADER_ENV}


def run_solve(box, timeout_s: float, extra_env: dict[str, str] | None = None) -> SolveRun:
    """Run /solution/solve.sh (already copied in) in /app with the image's environment (and
    `extra_env`, for a measure that pins what would differ run to run)."""
    argv = toolchain.python_argv(RUNNER, json.dumps(_restore_env(box)), f"{timeout_s:.3f}")
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            count = box.process_count()
            if count is not None:
                peak[0] = max(peak[0], count)
            done.wait(PID_SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        res = box.run(argv, timeout_s + KILL_MARGIN_S, workdir="/app",
                      environment={**(extra_env or {}), **toolchain.LOADER_ENV})
    finally:
        done.set()
        sampler.join(5)
    by_runner = res.exit_code == RUNNER_TIMEOUT_CODE and res.seconds >= timeout_s - 0.5
    return SolveRun(res, by_runner or res.timed_out, timeout_s, peak[0], box.limits.pids)


def solve_status(run: SolveRun, box) -> tuple[str, str]:
    """(status, reason): how solve.sh ended, in the words the oracle check has always used
    ('solution/solve.sh ran past its 30 s limit and was killed', '… exited with code 2')."""
    res, what = run.res, "solution/solve.sh"
    if run.timed_out:
        reason = replace(res, timed_out=True).reason(what, run.timeout_s, box.limits.output_bytes)
        if FORK_RETRY in res.output or run.forking:
            # Under load a fork bomb's own bash can outlive the limit while it retries forks.
            reason += f" ({FORK_HINT})"
        return "timeout", reason
    if res.stopped_by_limit or res.oom_killed:
        return "crashed", res.reason(what, run.timeout_s, box.limits.output_bytes)
    # A solution that leaves the pid table full would only show up as tests that cannot
    # start (exec fails with an OCI error), so it is named here, where the fault is.
    if box.pids_exhausted():
        return "crashed", (f"{what} left {box.process_count()} processes running at the limit of "
                           f"{box.limits.pids}: {FORK_HINT}")
    if res.exit_code != 0:
        return "script_failed", f"{what} exited with code {res.exit_code}"
    return "completed", ""


def capped(text: str, cap: int = LOG_CAP) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[… {len(text) - cap} characters left out …]\n{text[-half:]}"


def solution_result(ctx: AgentContext, agent, run: SolveRun, status: str, reason: str, *,
                    message: str, details: dict | None = None) -> AgentResult:
    """The AgentResult of a solution run, with its one-step ATIF trajectory (a `bash` tool call
    and its output as the observation)."""
    output = capped(run.res.output)
    builder = TrajectoryBuilder(ctx.trial_id, agent.name, agent.version, None,
                                extra={"agent_label": agent.label})
    builder.user(ctx.instruction)
    call = {"tool_call_id": f"call-{uuid.uuid4().hex[:12]}", "function_name": "bash",
            "arguments": {"command": SOLVE_COMMAND}}
    builder.agent(message, tool_calls=[call], observation=output or "(no output)", llm_call_count=0,
                  extra={"exit_code": run.res.exit_code, "status": status, **({"error": reason} if reason else {})})
    info = {"solve_exit_code": run.res.exit_code, "timed_out": run.timed_out,
            "output_capped": run.res.output_capped, "oom_killed": run.res.oom_killed,
            "process_peak": run.process_peak, **(details or {})}
    return AgentResult(status=status, trajectory=builder.finish(), log=f"{SOLVE_LOG_MARK}\n{output}", error=reason,
                       exit_code=run.res.exit_code, turns=1, agent_s=run.seconds, details=info)

