"""What the scripted agents (nop, oracle, ablation) share: no model, a label from
AGENT_LABELS, and a config key of name and version only (nothing else changes their work)."""
from __future__ import annotations

from pipeline.agents.protocol import AGENT_LABELS


class ScriptedAgent:
    name = ""
    version = "1"      # bump when what the agent does changes: rollouts by another version are other work
    model = None

    @property
    def label(self) -> str:
        return AGENT_LABELS[self.name]

    def config_key(self) -> str:
        return f"{self.name}@{self.version}"
