"""What an evolve run says when it ends: per round and operator, the parents it evolved, the
variants made and accepted, and the pass rate before (the parents') → after (the accepted
variants', over their own rollouts by the same agent)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import pandas as pd

from pipeline.evolve.models import OPERATORS


@dataclass
class RoundRow:
    round: int
    operator: str
    parents: int
    made: int            # variants made (bundle + tasks row), accepted or not
    accepted: int
    no_variant: int
    failed: int
    rate_before: float | None    # mean pass rate of the parents this operator got
    rate_after: float | None     # mean pass rate of its accepted variants that have rollouts


@dataclass
class EvolveReport:
    run_id: str
    agent: str
    model: str | None
    status: str = "running"       # workbench.store.lineage.RUN_STATUSES
    rounds: int = 1
    rounds_done: int = 0
    rows: list[RoundRow] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)   # ids of the variants made (this run, every round)
    reused: int = 0               # variants made before (a resume, or an earlier run), not made again
    rollout_runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0

    @property
    def made(self) -> int:
        return sum(r.made for r in self.rows)

    @property
    def accepted(self) -> int:
        return sum(r.accepted for r in self.rows)

    def summary(self) -> str:
        tried = sum(r.parents for r in self.rows)
        return (f"{self.rounds_done} of {self.rounds} round(s): {tried} parent(s) evolved, {self.made} variant(s) "
                f"made, {self.accepted} accepted" + (f" ({self.reused} made before)" if self.reused else ""))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["made"], d["accepted"] = self.made, self.accepted
        return d


def round_rows(lineage: pd.DataFrame, rates: dict[str, float]) -> list[RoundRow]:
    """One row per (round, operator) of an evolve run's lineage rows (workbench.store.lineage.
    lineage_frame), with `rates` the pass rate of each variant that has rollouts."""
    if lineage.empty:
        return []
    rows = []
    order = {op: i for i, op in enumerate(OPERATORS)}
    groups = sorted(lineage.groupby(["round", "operator"]), key=lambda g: (g[0][0], order.get(g[0][1], 9)))
    for (rnd, op), g in groups:
        made = g[g["status"] == "made"]
        accepted = made[made["verdict"] == "accepted"]
        after = [rates[t] for t in accepted["task_id"] if t in rates]
        parents = g.drop_duplicates("parent_id")
        rows.append(RoundRow(
            round=int(rnd), operator=str(op), parents=len(parents), made=len(made), accepted=len(accepted),
            no_variant=int((g["status"] == "no_variant").sum()), failed=int((g["status"] == "failed").sum()),
            rate_before=float(parents["parent_pass_rate"].mean()) if len(parents) else None,
            rate_after=sum(after) / len(after) if after else None))
    return rows
