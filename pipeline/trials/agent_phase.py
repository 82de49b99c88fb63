"""The agent's part of a trial, bounded from outside: the agent runs in a thread of its own
on an AgentBox (the trial's container, revocable); past its time limit plus a margin, or
soon after the batch is cancelled, the trial takes the container back — every process in it
is stopped, so whatever command the agent waits on ends — and goes on without it. An agent
that raises is a crashed agent; the trial still runs the tests."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from pipeline.agents.protocol import Agent, AgentContext, AgentResult
from pipeline.verify import verifier_phase as phase
from workbench.sandbox.box import Box, ExecResult

AGENT_MARGIN_S = 10.0     # past the agent's own limit before the trial cuts it off
STOP_GRACE_S = 5.0        # after a cancel, the agent's chance to end at its next turn
CUT_OFF_WAIT_S = 10.0     # after the cut-off, how long its thread gets to return
POLL_S = 0.1
REVOKED = "the trial took the container back: the agent's time is over"


class RevokedError(RuntimeError):
    """The agent used its box after the trial took the container back."""


@dataclass
class AgentBox(Box):
    """The trial's container as the agent sees it; once revoked, every call refuses, so an agent
    thread that outlives its cut-off cannot touch the container while the tests run."""
    revoked: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def of(cls, box: Box) -> AgentBox:
        return cls(box.engine, box.container, box.limits)

    def run(self, cmd, timeout_s, workdir="/app", environment=None) -> ExecResult:
        if self.revoked.is_set():
            return ExecResult(None, "", 0.0, container_gone=REVOKED, memory_mb=self.limits.memory_mb,
                              disk_mb=self.limits.disk_mb)
        return super().run(cmd, timeout_s, workdir=workdir, environment=environment)

    def put(self, files, dest) -> None:
        if self.revoked.is_set():
            raise RevokedError(REVOKED)
        super().put(files, dest)

    def read_files(self, path, max_bytes=4 * 1024 * 1024):
        if self.revoked.is_set():
            raise RevokedError(REVOKED)
        return super().read_files(path, max_bytes)


def _fault_details(exc: BaseException) -> dict:
    """What the rollout batch reads to tell an endpoint or budget stop from a real result."""
    from workbench.llm.budget import BudgetExceeded
    from workbench.llm.client import LLMCallError
    details: dict = {"exception": type(exc).__name__}
    if isinstance(exc, BudgetExceeded):
        details["budget_exceeded"] = True
    if isinstance(exc, LLMCallError) and exc.endpoint_fault:
        details["endpoint_fault"] = f"{type(exc).__name__}: {exc}"
    return details


def _cut_off(ctx: AgentContext, box: Box) -> str:
    """Take the container back: the agent's box refuses from now on, and every process the agent
    started is stopped (from the toolchain) so a command it waits on returns."""
    ctx.stop.set()
    ctx.box.revoked.set()
    try:
        killed = phase.stop_strays(box)
        return f"{killed} processes stopped"
    except phase.PhaseError as exc:
        return f"its processes could not all be stopped ({exc})"


def drive_agent(agent: Agent, ctx: AgentContext, box: Box) -> AgentResult:
    """Run `agent` on `ctx` (whose box is an AgentBox of `box`) and return how it ended."""
    out: dict = {}

    def target() -> None:
        try:
            out["result"] = agent.run(ctx)
        except BaseException as exc:   # an agent's bug is its crash, not the trial's
            out["error"] = exc

    t0 = time.monotonic()
    worker = threading.Thread(target=target, daemon=True, name=f"agent-{ctx.trial_id}")
    worker.start()
    deadline, cut = t0 + ctx.timeout_s + AGENT_MARGIN_S, None
    while worker.is_alive():
        now = time.monotonic()
        if ctx.stop.is_set() and cut is None:
            deadline = min(deadline, now + STOP_GRACE_S)
            cut = "stopped"
        if now >= deadline:
            cut = "stopped" if cut == "stopped" else "timeout"
            how = _cut_off(ctx, box)
            worker.join(CUT_OFF_WAIT_S)
            seconds = time.monotonic() - t0
            if cut == "stopped":
                error = f"the batch was cancelled; the trial stopped the agent after {seconds:.0f} s ({how})"
            else:
                error = (f"the agent did not end within its {ctx.timeout_s:.0f} s limit; the trial cut it off "
                         f"after {seconds:.0f} s ({how})")
            partial = out.get("result")
            result = AgentResult(status=cut, error=error, agent_s=seconds,
                                 trajectory=partial.trajectory if partial else None,
                                 log=partial.log if partial else "", details={"cut_off": True})
            return result
        worker.join(min(POLL_S, max(0.0, deadline - now)))
    seconds = time.monotonic() - t0
    if "error" in out:
        exc = out["error"]
        return AgentResult(status="crashed", error=f"the agent raised {type(exc).__name__}: {exc}", agent_s=seconds,
                           details=_fault_details(exc))
    result: AgentResult = out["result"]
    if not result.agent_s:
        result.agent_s = seconds
    return result
