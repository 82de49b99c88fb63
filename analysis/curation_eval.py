"""How well the curation agrees with hand labels: pure functions over `workbench skills export`
rows (dicts as read from its JSONL) and label records {path, label accept|reject, reason}.

A labelled skill is predicted `accepted`, `pending` (a warning left it to a person), `missing`
(not in the export: not ingested) or rejected with the reason the export row shows. Only
`accepted` counts as accepted: a pending skill is not yet training data.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

ACCEPT_REASON = "executable"     # the reason labels give an accepted skill
PENDING, MISSING, ACCEPTED = "pending", "missing", "accepted"


@dataclass(frozen=True)
class LabelledOutcome:
    path: str
    label: str              # accept | reject
    label_reason: str
    predicted: str          # accepted | pending | missing | the rejection reason (or "rejected")


@dataclass(frozen=True)
class CurationScores:
    labelled: int
    matched: int                     # labels found in the export
    accepted_precision: float | None  # None when nothing labelled was accepted
    accepted_recall: float | None     # None when no label is an accept
    reason_right: float | None        # among correct rejections; None when there are none
    true_accepts: int
    false_accepts: int
    missed_accepts: int
    correct_rejections: int
    reason_right_count: int
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)  # label reason -> predicted -> n
    false_accept_paths: list[str] = field(default_factory=list)
    wrong_reason: list[tuple[str, str, str]] = field(default_factory=list)  # (path, label, predicted)
    missing_paths: list[str] = field(default_factory=list)   # labelled, not in the export (not ingested?)


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in PurePosixPath(path.replace("\\", "/")).parts if p not in ("", "/", "."))


def predicted_of(row: Mapping) -> str:
    status = row.get("status")
    if status == "rejected":
        return row.get("reason") or "rejected"
    return ACCEPTED if status == ACCEPTED else PENDING


def match_labels(rows: Iterable[Mapping], labels: Iterable[Mapping]) -> list[LabelledOutcome]:
    """Pair each label with the export row whose source path ends with the label's path
    (labels are relative to the corpus root, export paths absolute)."""
    by_parts = {_parts(str(r["source_path"])): r for r in rows}
    index: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for parts in by_parts:
        if parts:
            index.setdefault(parts[-1:], []).append(parts)
    out = []
    for lab in labels:
        want = _parts(str(lab["path"]))
        hit = next((p for p in index.get(want[-1:], []) if p[-len(want):] == want), None) if want else None
        out.append(LabelledOutcome(str(lab["path"]), str(lab["label"]), str(lab.get("reason") or ""),
                                   predicted_of(by_parts[hit]) if hit else MISSING))
    return out


def confusion_table(outcomes: Iterable[LabelledOutcome]) -> dict[str, dict[str, int]]:
    """label reason (accepts as `executable`) -> predicted -> count."""
    table: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = table.setdefault(o.label_reason if o.label == "reject" else ACCEPT_REASON, {})
        row[o.predicted] = row.get(o.predicted, 0) + 1
    return table


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def score(rows: Iterable[Mapping], labels: Iterable[Mapping]) -> CurationScores:
    labels = list(labels)
    outcomes = match_labels(rows, labels)
    accept = [o for o in outcomes if o.label == "accept"]
    reject = [o for o in outcomes if o.label == "reject"]
    tp = sum(o.predicted == ACCEPTED for o in accept)
    fp = [o for o in reject if o.predicted == ACCEPTED]
    rejected = [o for o in reject if o.predicted not in (ACCEPTED, PENDING, MISSING)]
    right = [o for o in rejected if o.predicted == o.label_reason]
    return CurationScores(
        labelled=len(labels), matched=sum(o.predicted != MISSING for o in outcomes),
        accepted_precision=_share(tp, tp + len(fp)), accepted_recall=_share(tp, len(accept)),
        reason_right=_share(len(right), len(rejected)),
        true_accepts=tp, false_accepts=len(fp), missed_accepts=len(accept) - tp,
        correct_rejections=len(rejected), reason_right_count=len(right),
        confusion=confusion_table(outcomes),
        false_accept_paths=[o.path for o in fp],
        wrong_reason=[(o.path, o.label_reason, o.predicted) for o in rejected if o.predicted != o.label_reason],
        missing_paths=[o.path for o in outcomes if o.predicted == MISSING])


def confusion_lines(table: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The confusion table as aligned text rows: label reasons down, predictions across."""
    cols = sorted({c for row in table.values() for c in row},
                  key=lambda c: (c not in (ACCEPTED, PENDING, MISSING), c))
    width = max([len("label \\ predicted"), *map(len, table)])
    head = "label \\ predicted".ljust(width) + "".join(f" {c:>{max(len(c), 3)}}" for c in cols)
    body = [r.ljust(width) + "".join(f" {table[r].get(c, 0) or '.':>{max(len(c), 3)}}" for c in cols)
            for r in sorted(table, key=lambda r: (r != ACCEPT_REASON, r))]
    return [head, *body]


RELIABILITY_BANDS = ((0.0, 0.5, "low <0.50"), (0.5, 0.75, "medium 0.50-0.74"), (0.75, 1.01, "high >=0.75"))


@dataclass(frozen=True)
class BandReliability:
    band: str
    verdicts: int
    accepted: int
    accepted_right: int          # labelled accept among those accepted
    rejected: int
    rejected_right: int          # labelled reject among those rejected
    reason_right: int            # ... and with the label's reason
    pending: int

    @property
    def right_share(self) -> float | None:
        """Share of decided verdicts (accepted or rejected) that agree with the label."""
        return _share(self.accepted_right + self.rejected_right, self.accepted + self.rejected)


def reliability(rows: Iterable[Mapping], labels: Iterable[Mapping]) -> list[BandReliability]:
    """Precision by confidence band: rows carry `confidence` (0..1, see pipeline.filters.confidence);
    a row without one is left out."""
    rows = list(rows)
    conf = {_parts(str(r["source_path"])): r.get("confidence") for r in rows}
    outcomes = match_labels(rows, labels)
    by_path = {}
    for r in rows:
        by_path[_parts(str(r["source_path"]))] = r
    out = []
    for lo, hi, name in RELIABILITY_BANDS:
        picked = []
        for o in outcomes:
            want = _parts(o.path)
            c = next((v for p, v in conf.items() if p[-len(want):] == want), None) if o.predicted != MISSING else None
            if c is not None and lo <= c < hi:
                picked.append(o)
        acc = [o for o in picked if o.predicted == ACCEPTED]
        rej = [o for o in picked if o.predicted not in (ACCEPTED, PENDING, MISSING)]
        out.append(BandReliability(
            band=name, verdicts=len(picked), accepted=len(acc),
            accepted_right=sum(o.label == "accept" for o in acc), rejected=len(rej),
            rejected_right=sum(o.label == "reject" for o in rej),
            reason_right=sum(o.label == "reject" and o.predicted == o.label_reason for o in rej),
            pending=sum(o.predicted == PENDING for o in picked)))
    return out


def reliability_lines(rows: Iterable[Mapping], labels: Iterable[Mapping]) -> list[str]:
    """The reliability table as text: per band, how many verdicts and how often each kind is right."""
    def frac(a: int, b: int) -> str:
        return f"{a}/{b} ({a / b:.2f})" if b else "-"
    lines = [f"{'confidence':<18} {'n':>4} {'accepted right':>16} {'rejected right':>16} "
             f"{'reason right':>16} {'pending':>7}"]
    for b in reliability(rows, labels):
        lines.append(f"{b.band:<18} {b.verdicts:>4} {frac(b.accepted_right, b.accepted):>16} "
                     f"{frac(b.rejected_right, b.rejected):>16} {frac(b.reason_right, b.rejected):>16} "
                     f"{b.pending:>7}")
    return lines
