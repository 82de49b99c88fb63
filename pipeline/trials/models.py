"""What one trial gives back (pipeline/trials/trial.py makes it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.agents.protocol import AgentResult


@dataclass
class TrialResult:
    """`reward` is what the verifier wrote (None when it wrote nothing believable);
    `tests` the per-test outcomes [{name, outcome: passed|failed|error|skipped, message}];
    `problem` why the verifier's result cannot be believed (a planted reward, a timeout, no
    tests collected: pipeline/verify/reward.contradiction), else None. `failure_class` is
    None for a passing trial, else one of pipeline.agents.protocol.FAILURE_CLASSES.
    `verifier_files` the raw files of /logs/verifier (junit.xml, ctrf.json, reward.*), for the
    rollout's outcome folder. Timings: env_s (container start + toolchain), agent_s,
    verifier_s, total_s."""
    agent: AgentResult
    reward: float | None
    tests: list[dict]
    problem: str | None
    failure_class: str | None
    log: str
    details: dict[str, Any] = field(default_factory=dict)
    verifier_files: dict[str, bytes] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.failure_class is None and self.reward is not None and self.reward >= 1.0
