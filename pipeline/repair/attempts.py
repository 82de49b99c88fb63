"""What one repair attempt was: the artifact it rewrote, why, the diff, and what it cost."""
from __future__ import annotations

from pydantic import BaseModel, Field

from pipeline.verify.failures import Artifact

MAX_ENVIRONMENT_REPAIRS = 3   # FACET: build failures repaired from the build log
MAX_TASK_REPAIRS = 5          # solution / tests / instruction together


class RepairAttempt(BaseModel):
    n: int                              # 1-based, in the order attempts were made for the task
    artifact: Artifact                  # what was rewritten
    check: str                          # the check (or guard) whose failure asked for it
    reason: str                         # the failure's reason, as the repair prompt saw it
    diff: str = ""                      # unified diff of the artifact, old -> new (capped)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    outcome: str = "pending"            # fixed | still_failing | moved_on (another artifact failed next) | exhausted
    evidence: list[str] = Field(default_factory=list)   # log excerpt lines, failing tests
