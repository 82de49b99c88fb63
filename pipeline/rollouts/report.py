"""What a rollout batch says when it ends (and while it runs): counts, pass@1, failure classes."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class RolloutReport:
    """`total`: rollouts the batch is made of (tasks × k); `skipped`: done before (same content
    key, this batch or another); `ran`: stored by this process (crashed ones included);
    `not_run`: rollouts of tasks whose image could not be built (not stored: resume tries
    again), with why in `notes`. pass@1 is over every stored rollout of the batch's items."""
    run_id: str
    agent: str
    model: str | None
    agent_label: str = ""             # what the CLI says the agent is (a probe, simulated, a model)
    status: str = "running"           # workbench.store.rollouts.RUN_STATUSES
    total: int = 0
    ran: int = 0
    skipped: int = 0
    passed: int = 0
    not_run: int = 0
    failure_classes: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    seconds: float = 0.0
    message: str = ""
    runs_folder: str = ""             # runs/<run_id>/rollouts, relative to the workspace
    notes: list[str] = field(default_factory=list)
    built: list[str] = field(default_factory=list)   # tasks whose missing image this batch built

    @property
    def stored(self) -> int:
        """Rollouts of this batch's items that are in the store (this run and before)."""
        return self.ran + self.skipped

    @property
    def pass_at_1(self) -> float | None:
        return self.passed / self.stored if self.stored else None

    def counts(self) -> dict[str, int]:
        """The live counts kept on the run's row for the page."""
        return {"total": self.total, "done": self.stored, "ran": self.ran, "skipped": self.skipped,
                "passed": self.passed, "failed": self.stored - self.passed, "not_run": self.not_run}

    def as_dict(self) -> dict:
        d = asdict(self)
        d["pass_at_1"] = self.pass_at_1
        return d

    def summary(self) -> str:
        """One line: what ran, what passed, what failed how."""
        p1 = f"{self.pass_at_1:.0%}" if self.pass_at_1 is not None else "n/a"
        classes = ", ".join(f"{k} {v}" for k, v in sorted(self.failure_classes.items())) or "none"
        return (f"{self.stored} of {self.total} rollouts stored ({self.ran} run now, {self.skipped} done before"
                + (f", {self.not_run} not run" if self.not_run else "")
                + f"); pass@1 {p1}; failures: {classes}")
