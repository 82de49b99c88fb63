"""The ablation agent: the oracle with ONE solution step left out (pipeline/agents/
solution_steps: which step, chosen by ctx.seed). No LLM: it probes how strong a task's tests
are — tests that still pass without a step do not check that step. A verifier probe, not a
model, and labelled so wherever it is shown (AGENT_LABELS).

Leaving a step out often makes a later step fail (`set -e` stops the script there): that
is the probe's expected effect, not the agent's failure, so a script that ran to an exit of
its own counts as completed (its exit code in details) and the tests decide. Only a limit
(time, output, disk, memory, a fork bomb) ends it otherwise."""
from __future__ import annotations

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.agents.solution_run import run_solve, solution_result, solve_status
from pipeline.agents.solution_steps import NoStepError, pick_step, solution_steps, without_step
from pipeline.trajectories.atif import TrajectoryBuilder


class AblationAgent(ScriptedAgent):
    name = "ablation"

    def run(self, ctx: AgentContext) -> AgentResult:
        solve = ctx.bundle.text("solution/solve.sh")
        steps = solution_steps(solve)
        try:
            step = pick_step(steps, ctx.seed)
        except NoStepError as exc:
            # Never the whole solution instead: that would be the oracle under the probe's name.
            builder = TrajectoryBuilder(ctx.trial_id, self.name, self.version, None, extra={"agent_label": self.label})
            builder.user(ctx.instruction)
            builder.agent(f"Nothing run: {exc}.", llm_call_count=0)
            return AgentResult(status="crashed", error=str(exc), trajectory=builder.finish(),
                               details={"left_out": None, "steps": 0})
        files = dict(ctx.bundle.under("solution"), **{"solve.sh": without_step(solve, step).encode()})
        ctx.box.put(files, "/solution")
        run = run_solve(ctx.box, ctx.timeout_s)
        status, reason = solve_status(run, ctx.box)
        details = {"left_out": step.as_dict(), "steps": len(steps)}
        if status == "script_failed":
            details["script_failed"] = reason
            status, reason = "completed", ""
        return solution_result(ctx, self, run, status, reason, details=details,
                               message=f"Run the task's own solution with one step left out ({step.label}).")
