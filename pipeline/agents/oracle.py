"""The oracle agent: the task's own solution (solution/ copied to /solution, then
`bash /solution/solve.sh` under the agent's time limit). The oracle check of verification is
a trial with it; as a rollout agent it is a reference, not a model (AGENT_LABELS)."""
from __future__ import annotations

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.agents.solution_run import run_solve, solution_result, solve_status


class OracleAgent(ScriptedAgent):
    name = "oracle"

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.box.put(ctx.bundle.under("solution"), "/solution")
        run = run_solve(ctx.box, ctx.timeout_s)
        status, reason = solve_status(run, ctx.box)
        return solution_result(ctx, self, run, status, reason, message="Run the task's own solution (solution/solve.sh).")
