"""Near-duplicate skills: MinHash over word 3-grams, LSH buckets, exact Jaccard check.

No N×N comparison: only pairs that share an LSH bucket are compared, so a corpus of tens
of thousands of skills costs about as much as reading it. In each group of near
duplicates the skill ingested first is kept and the others fail with the evidence.
"""
from __future__ import annotations

import re
import zlib
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from pipeline.filters.base import RuleResult, passed
from workbench.models import Outcome

RULE = "dedup.near_duplicate"
THRESHOLD = 0.6
NUM_PERM = 64
BANDS = 16  # 4 rows a band: pairs at Jaccard 0.6 meet in a bucket with p ≈ 0.9
_PRIME = (1 << 31) - 1
_rng = np.random.default_rng(20260101)
_A = _rng.integers(1, _PRIME, NUM_PERM, dtype=np.uint64)
_B = _rng.integers(0, _PRIME, NUM_PERM, dtype=np.uint64)


@dataclass(frozen=True)
class DedupItem:
    skill_id: str
    label: str     # shown in evidence: name (key)
    text: str
    order: tuple   # lower is older: the one kept


def shingles(text: str, n: int = 3) -> set[int]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    if len(words) < n:
        return {zlib.crc32(" ".join(words).encode())} if words else set()
    return {zlib.crc32(" ".join(words[i:i + n]).encode()) for i in range(len(words) - n + 1)}


def _signature(sh: set[int]) -> np.ndarray:
    if not sh:
        return np.full(NUM_PERM, _PRIME, dtype=np.uint64)
    x = np.fromiter(sh, dtype=np.uint64, count=len(sh)) % _PRIME
    return ((np.outer(_A, x) + _B[:, None]) % _PRIME).min(axis=1)


def jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def find_near_duplicates(items: list[DedupItem], threshold: float = THRESHOLD) -> dict[str, RuleResult]:
    sets = [shingles(it.text) for it in items]
    rows = NUM_PERM // BANDS
    buckets: dict[tuple, list[int]] = defaultdict(list)
    for i, sh in enumerate(sets):
        sig = _signature(sh)
        for band in range(BANDS):
            buckets[(band, sig[band * rows:(band + 1) * rows].tobytes())].append(i)
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best: dict[int, tuple[float, int]] = {}
    seen: set[tuple[int, int]] = set()
    for members in buckets.values():
        if len(members) < 2:
            continue
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                i, j = members[x], members[y]
                if (i, j) in seen:
                    continue
                seen.add((i, j))
                s = jaccard(sets[i], sets[j])
                if s >= threshold:
                    parent[find(i)] = find(j)
                    for a, b in ((i, j), (j, i)):
                        if s > best.get(a, (0.0, -1))[0]:
                            best[a] = (s, b)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(items)):
        groups[find(i)].append(i)
    results: dict[str, RuleResult] = {}
    for members in groups.values():
        keeper = min(members, key=lambda i: items[i].order)
        for i in members:
            it = items[i]
            if i == keeper:
                others = [items[j].label for j in members if j != i]
                note = f"kept; near-duplicates set aside: {', '.join(others)}" if others else \
                    f"no other skill shares ≥{threshold:.0%} of its word 3-grams"
                results[it.skill_id] = passed(RULE, note)
            else:
                sim = jaccard(sets[i], sets[keeper])
                results[it.skill_id] = RuleResult(
                    RULE, Outcome.FAIL,
                    f"near-duplicate of {items[keeper].label}, ingested earlier: "
                    f"{sim:.0%} of word 3-grams shared", items[keeper].skill_id)
    return results
