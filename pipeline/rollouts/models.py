"""Work items and outcomes of a rollout batch (the executor contract, DESIGN §9)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.agents.protocol import Agent
    from workbench.sandbox.bundle import TaskBundle

ROLLOUT_SOURCES = ("workbench", "harbor")   # run here, or imported from a Harbor job folder
DEFAULT_K = 3                 # rollouts per task
DEFAULT_CONCURRENCY = 2       # rollouts at once (each a container; the shared machine has two cores)


def rollout_key(bundle_hash: str, agent_key: str, sample: int) -> str:
    """A rollout's content key and id: the same task content, agent config and sample number
    are the same work (resume skips it)."""
    return "ro-" + hashlib.sha256(f"{bundle_hash}\0{agent_key}\0{sample}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AgentSpec:
    """How to make a batch's agent, as plain data: a Ray worker rebuilds the agent from it (an
    agent object, or terminus-2's LLM caller, does not travel)."""
    name: str                       # one of pipeline.agents.protocol.AGENTS
    model: str | None = None
    temperature: float = 0.0
    max_turns: int | None = None
    keep_p: float | None = None     # noisy-oracle: each solution step kept with probability p

    def make(self, caller: Any = None) -> Agent:
        from pipeline.agents.factory import make_agent
        return make_agent(self.name, model=self.model, temperature=self.temperature, caller=caller,
                          max_turns=self.max_turns, keep_p=self.keep_p)


@dataclass(frozen=True)
class RolloutItem:
    task_id: str
    bundle_dir: str          # relative to the workspace
    bundle_hash: str
    image: str | None        # the task's built image, when known
    agent: str               # one of pipeline.agents.protocol.AGENTS
    agent_key: str           # Agent.config_key()
    model: str | None
    sample: int              # 0..k-1; also the ablation's seed
    temperature: float = 0.0
    # The task's files, when the item travels to a worker with no shared disk (Ray); None: the
    # worker reads them from the workspace. Not part of the key (bundle_hash is).
    bundle: TaskBundle | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return rollout_key(self.bundle_hash, self.agent_key, self.sample)


@dataclass
class RolloutRecord:
    """One row of `rollouts` (migration 8). Paths are relative to the workspace."""
    rollout_id: str
    run_id: str | None
    task_id: str
    agent: str
    agent_label: str
    model: str | None
    sample: int
    temperature: float
    source: str                       # ROLLOUT_SOURCES
    reward: float | None
    passed: bool
    failure_class: str | None         # None when passed; else pipeline.agents.protocol.FAILURE_CLASSES
    n_tests: int
    n_failed: int
    turns: int
    parse_errors: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    agent_s: float
    verifier_s: float
    total_s: float
    overhead_ms_per_turn: float | None
    folder: str                       # runs/<run_id>/rollouts/<rollout_id>
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class RolloutOutcome:
    """What a worker hands back: the record, per-test outcomes, and the files of the rollout's
    folder (relative path -> bytes: trajectory.json, recording.cast, agent.log, verifier/…,
    result.json). Only the driver writes them."""
    record: RolloutRecord
    tests: list[dict]
    files: dict[str, bytes]
