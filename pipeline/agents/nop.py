"""The nop agent: does nothing, so the tests see the untouched environment. The no-op check
of verification is a trial with it; as a rollout agent it is a baseline (AGENT_LABELS)."""
from __future__ import annotations

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.scripted import ScriptedAgent
from pipeline.trajectories.atif import TrajectoryBuilder


class NopAgent(ScriptedAgent):
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentResult:
        builder = TrajectoryBuilder(ctx.trial_id, self.name, self.version, None, extra={"agent_label": self.label})
        builder.user(ctx.instruction)
        # No tool call: nothing ran (a `true` command would be a step that did not happen).
        builder.agent("Do nothing: the nop baseline leaves the environment as it is.", llm_call_count=0)
        return AgentResult(status="completed", trajectory=builder.finish(), log="", turns=0)
