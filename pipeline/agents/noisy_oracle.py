"""The noisy-oracle agent: the task's own solution with each step (pipeline/agents/
solution_steps, the steps the ablation probe uses) kept with probability p. No LLM: it gives
the evolution loop (SETA-Evol, pipeline/evolve) pass rates between 0 and 1 to work on without
a model — simulated, not a model, and labelled so wherever it is shown (AGENT_LABELS).

Which steps are kept is drawn from a random source seeded by (the trial's seed, the task), so
the k samples of a task differ and a rerun draws the same. A script without step markers (a
hand-written solve.sh: its top-level commands are no steps of the task's path, and dropping one
mostly breaks the next) runs whole with probability p, else nothing; details say which it was.
As with the ablation, a cut script that ends on an exit of its own counts as completed (its
exit code in details) and the tests decide; nothing dropped is exactly the oracle."""
from __future__ import annotations

import math
import random

from pipeline.agents.protocol import AGENT_LABELS, AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.agents.solution_run import run_solve, solution_result, solve_status
from pipeline.agents.solution_steps import SolutionStep, solution_steps, without_steps
from pipeline.trajectories.atif import TrajectoryBuilder

DEFAULT_KEEP_P = 0.8


def noisy_label(keep_p: float | None) -> str:
    """What pages, figures and the CLI call a noisy-oracle at this p (simulated, not a model)."""
    return f"{AGENT_LABELS['noisy-oracle']} · p={DEFAULT_KEEP_P if keep_p is None else keep_p:g}"


def check_keep_p(keep_p: object) -> float:
    """p as a float in [0, 1], or ValueError saying what was wrong."""
    if isinstance(keep_p, bool) or not isinstance(keep_p, (int, float)) or math.isnan(keep_p):
        raise ValueError(f"noisy-oracle: p (the chance each solution step is kept) must be a number, got {keep_p!r}")
    if not 0.0 <= keep_p <= 1.0:
        raise ValueError(f"noisy-oracle: p (the chance each solution step is kept) must be between 0 and 1, "
                         f"got {keep_p}")
    return float(keep_p)


def draw_kept(steps: list, keep_p: float, *, seed: int, task_id: str) -> list[bool]:
    """For each step, whether it is kept: one draw each from a source seeded by (seed, task).
    A str seed goes through SHA-512 in `random`, so the draw is the same in every process."""
    rng = random.Random(f"noisy-oracle:{task_id}:{seed}")
    return [rng.random() < keep_p for _ in steps]


class NoisyOracleAgent(ScriptedAgent):
    name = "noisy-oracle"

    def __init__(self, keep_p: float = DEFAULT_KEEP_P):
        self.keep_p = check_keep_p(keep_p)

    @property
    def label(self) -> str:
        return noisy_label(self.keep_p)

    def config_key(self) -> str:
        # repr: the shortest text that reads back as the same float, so two p never share a key
        return f"{self.name}@{self.version}:p={self.keep_p!r}"

    def run(self, ctx: AgentContext) -> AgentResult:
        solve = ctx.bundle.text("solution/solve.sh")
        steps = solution_steps(solve)
        marked = [s for s in steps if s.marked]
        details: dict = {"keep_p": self.keep_p, "steps": len(marked)}
        if marked:
            kept = draw_kept(marked, self.keep_p, seed=ctx.seed, task_id=ctx.task_id)
            dropped = [s for s, k in zip(marked, kept) if not k]
            details.update(kept=[s.number for s, k in zip(marked, kept) if k], dropped=[s.as_dict() for s in dropped])
            if len(dropped) == len(marked):
                return self._nothing(ctx, details, f"every one of the {len(marked)} solution steps was dropped")
            script = without_steps(solve, dropped, by="the noisy oracle") if dropped else solve
        else:
            [whole] = draw_kept([solve], self.keep_p, seed=ctx.seed, task_id=ctx.task_id)
            details.update(whole_script=True, kept_whole=whole,
                           note="solve.sh has no step markers: it runs whole with probability p, else nothing")
            if not whole:
                return self._nothing(ctx, details, "solve.sh has no step markers and the draw dropped it whole")
            dropped = []
            script = solve
        return self._solve(ctx, script, dropped, details)

    def _solve(self, ctx: AgentContext, script: str, dropped: list[SolutionStep], details: dict) -> AgentResult:
        ctx.box.put(dict(ctx.bundle.under("solution"), **{"solve.sh": script.encode()}), "/solution")
        run = run_solve(ctx.box, ctx.timeout_s)
        status, reason = solve_status(run, ctx.box)
        if dropped and status == "script_failed":
            # a later step failing for want of a dropped one is the noise working, not the agent failing
            details["script_failed"] = reason
            status, reason = "completed", ""
        what = ("with these steps dropped: " + ", ".join(s.label for s in dropped)) if dropped else "with every step kept"
        return solution_result(ctx, self, run, status, reason, details=details,
                               message=f"Run the task's own solution {what} (noisy oracle, p={self.keep_p:g}).")

    def _nothing(self, ctx: AgentContext, details: dict, why: str) -> AgentResult:
        """Nothing run (the container untouched); the tests decide, as after any agent."""
        builder = TrajectoryBuilder(ctx.trial_id, self.name, self.version, None, extra={"agent_label": self.label})
        builder.user(ctx.instruction)
        builder.agent(f"Nothing run: {why} (noisy oracle, p={self.keep_p:g}).", llm_call_count=0)
        details["nothing_run"] = why
        return AgentResult(status="completed", trajectory=builder.finish(), log=f"(nothing run: {why})",
                           turns=0, details=details)
