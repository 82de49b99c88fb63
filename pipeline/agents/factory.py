"""Agent name -> Agent. Scripted agents need nothing; terminus-2 needs an LLM caller."""
from __future__ import annotations

from typing import Any

from pipeline.agents.protocol import AGENTS, Agent


def make_agent(name: str, *, model: str | None = None, temperature: float = 0.0, caller: Any = None,
               max_turns: int | None = None, keep_p: float | None = None) -> Agent:
    """`caller`: the blocking LLM caller of the batch (pipeline.synth.llm.calls.LLMCaller) for
    terminus-2; ignored by the scripted agents. `keep_p`: noisy-oracle's chance of keeping each
    solution step (None: its default); refused for any other agent, where it would be ignored."""
    if keep_p is not None and name != "noisy-oracle":
        raise ValueError(f"agent {name!r}: p (the chance each solution step is kept) is for noisy-oracle only")
    if name == "nop":
        from pipeline.agents.nop import NopAgent
        return NopAgent()
    if name == "oracle":
        from pipeline.agents.oracle import OracleAgent
        return OracleAgent()
    if name == "ablation":
        from pipeline.agents.ablation import AblationAgent
        return AblationAgent()
    if name == "noisy-oracle":
        from pipeline.agents.noisy_oracle import DEFAULT_KEEP_P, NoisyOracleAgent
        return NoisyOracleAgent(DEFAULT_KEEP_P if keep_p is None else keep_p)
    if name == "red-team":
        from pipeline.agents.red_team.agent import RedTeamAgent
        return RedTeamAgent()
    if name == "terminus-2":
        from pipeline.agents.terminus2.agent import Terminus2Agent
        if caller is None:
            raise ValueError("agent 'terminus-2' needs an LLM endpoint (WORKBENCH_LLM_BASE_URL or the Settings page)")
        return Terminus2Agent(caller=caller, model=model, temperature=temperature, max_turns=max_turns)
    raise ValueError(f"agent {name!r}: choose one of {', '.join(AGENTS)}")
