"""The one contract every agent keeps (DESIGN §9), as Harbor's agents do: a trial hands the
agent a running container and the task; the agent acts until it is done or out of time and
says how it ended. The trial — not the agent — then copies the tests in and runs the
verifier (pipeline/trials), so no agent ever sees the tests or the verifier's output.

`nop` and `oracle` are ordinary agents on this path: the no-op and oracle checks of
verification are trials with them. `ablation` is the oracle with one solution step left out
(chosen by seed): no LLM, it probes how strong a task's tests are; `red-team` tries reward
hacks without solving the task (a probe too). `terminus-2` is an LLM
agent driving a tmux terminal in the container.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from workbench.sandbox.box import Box
    from workbench.sandbox.bundle import TaskBundle

AGENTS = ("nop", "oracle", "ablation", "noisy-oracle", "red-team", "terminus-2")
# Agents that run a script, not a model: nothing, the task's solution, a cut of it, or reward hacks.
# Their trajectories are no training data and their failures say nothing of how hard a task is
# (the SFT export leaves them out unless asked; the trajectory judge never counts them).
SCRIPTED_AGENTS = ("nop", "oracle", "ablation", "red-team")


def base_agent(agent: str) -> str:
    """A Harbor-imported rollout's agent is "harbor:<name>": Harbor's scripted agents are the same
    probes as ours."""
    return agent.removeprefix("harbor:")


# Shown next to every figure that counts these agents: they are probes, not models.
AGENT_LABELS = {
    "nop": "nop (does nothing; a baseline)",
    "oracle": "oracle (the task's own solution)",
    "ablation": "ablation (oracle with one solution step left out; a verifier probe, not a model)",
    "noisy-oracle": "noisy-oracle (each solution step kept with probability p; simulated, not a model)",
    "red-team": "red-team (reward hacks, never the task; a verifier probe, not a model)",
    "terminus-2": "terminus-2 (LLM agent)",
}

# How the agent's part of a trial ended. `completed`: it finished on its own (an LLM agent:
# task_complete confirmed; a scripted agent: its script exited 0). The rest are failure
# classes of the agent side; the trial adds `test_assertion` (the agent completed but tests
# failed) and `verifier_error` (the tests could not give a believable result).
AgentStatus = Literal["completed", "script_failed", "timeout", "never_completed", "parse_errors",
                      "crashed", "stopped"]
FAILURE_CLASSES = ("timeout", "never_completed", "parse_errors", "test_assertion", "crashed",
                   "verifier_error", "script_failed", "stopped")


@dataclass
class AgentContext:
    """What an agent gets. `box` is the trial's running container (exec, put, read_files; a
    command that hits a limit stops it). `timeout_s`: the task's agent timeout (already scaled);
    the agent must end by then — the trial enforces it too. `stop` is set when the batch is
    cancelled: end at the next turn. `trial_id` names the trial in LLM call records (item)."""
    task_id: str
    trial_id: str
    instruction: str
    bundle: TaskBundle
    box: Box
    timeout_s: float
    seed: int = 0
    run_id: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class AgentResult:
    """How the agent's part ended, and what it cost. `trajectory` is an ATIF document (a dict
    that pipeline.trajectories.atif builds and Harbor's validator accepts); `recording` the
    terminal recording (asciinema v2 text) where the agent used a terminal; `log` what a person
    reads first (commands and their output, capped)."""
    status: AgentStatus
    trajectory: dict[str, Any] | None = None
    recording: str = ""
    log: str = ""
    error: str = ""
    exit_code: int | None = None        # scripted agents: their script's exit code
    turns: int = 0                      # LLM turns (scripted agents: 1 when they ran anything)
    parse_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    agent_s: float = 0.0                # wall time of the agent's part
    llm_s: float = 0.0                  # of which waiting on the model
    details: dict[str, Any] = field(default_factory=dict)   # e.g. ablation: the step left out

    @property
    def overhead_s(self) -> float:
        """Harness time: the agent's wall time less model time less the waits the model asked for
        (details["waited_s"])."""
        return max(0.0, self.agent_s - self.llm_s - float(self.details.get("waited_s", 0.0)))


class Agent(Protocol):
    """`name` is one of AGENTS; `label` what pages show (AGENT_LABELS, plus the model);
    `model` the LLM it uses (None for scripted agents); `config_key` a short string that,
    with the task's bundle hash and the sample number, makes a rollout's content key (two
    rollouts with the same key are the same work: resume skips it)."""
    name: str
    model: str | None

    @property
    def label(self) -> str: ...

    def config_key(self) -> str: ...

    def run(self, ctx: AgentContext) -> AgentResult: ...
