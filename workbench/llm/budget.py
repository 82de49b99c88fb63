"""Token and cost accounting, and the cap that stops a batch cleanly."""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field


class BudgetExceeded(RuntimeError):
    """The batch's spending cap is reached; work already done is kept."""


@dataclass
class Spend:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class Budget:
    cap_usd: float | None = None
    total: Spend = field(default_factory=Spend)
    by_stage: dict[str, Spend] = field(default_factory=lambda: defaultdict(Spend))
    by_item: dict[str, Spend] = field(default_factory=lambda: defaultdict(Spend))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self) -> None:
        """Refuse to start another call once the cap is spent (calls in flight may finish)."""
        if self.cap_usd is not None and self.total.cost_usd >= self.cap_usd:
            raise BudgetExceeded(f"budget of ${self.cap_usd:.4f} spent (${self.total.cost_usd:.4f})")

    def add(self, stage: str, item: str | None, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        with self._lock:
            for spend in (self.total, self.by_stage[stage], *( [self.by_item[item]] if item else [])):
                spend.calls += 1
                spend.prompt_tokens += prompt_tokens
                spend.completion_tokens += completion_tokens
                spend.cost_usd += cost
