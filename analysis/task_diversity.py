"""How alike the tasks of one batch read: mean pairwise 5-gram Jaccard of their instructions,
the share of tasks whose solve.sh is byte-identical to another's, and family counts.

Pure functions of texts and lists, so a page, a test or a script can call them on any batch.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

SHINGLE = 5
_WORD = re.compile(r"[a-z0-9]+")


def shingles(text: str, n: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """The set of n consecutive lower-case words of a text (a text shorter than n words is one shingle)."""
    words = _WORD.findall(text.lower())
    if not words:
        return frozenset()
    if len(words) < n:
        return frozenset([tuple(words)])
    return frozenset(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def mean_pairwise_jaccard(texts: list[str], n: int = SHINGLE) -> float:
    """Mean Jaccard similarity of the texts' n-gram sets over all pairs (0.0 for fewer than two texts)."""
    sets = [shingles(t, n) for t in texts]
    pairs = list(combinations(range(len(sets)), 2))
    if not pairs:
        return 0.0
    return sum(jaccard(sets[i], sets[j]) for i, j in pairs) / len(pairs)


def identical_share(blobs: list[str | bytes]) -> float:
    """Share of items whose bytes equal another item's (two equal of ten: 0.2)."""
    if not blobs:
        return 0.0
    digests = Counter(hashlib.sha256(b.encode() if isinstance(b, str) else b).hexdigest() for b in blobs)
    return sum(c for c in digests.values() if c > 1) / len(blobs)


@dataclass(frozen=True)
class BatchDiversity:
    tasks: int
    mean_jaccard: float               # mean pairwise 5-gram Jaccard of the instructions
    identical_solve_share: float      # share of tasks whose solve.sh another task repeats byte for byte
    family_counts: dict[str, int]     # recipe family -> number of tasks using it, most used first
    # (category coverage is analysis.synth_fidelity.category_coverage)

    @property
    def top_family_share(self) -> float:
        """Share of the tasks using the most used family (json-convert in 21 of 38 tasks: 0.55)."""
        return max(self.family_counts.values(), default=0) / self.tasks if self.tasks else 0.0


def batch_diversity(instructions: list[str], solves: list[str | bytes], recipes: list[list[str]]) -> BatchDiversity:
    """The figures of one batch; `recipes[i]` are task i's families (each counted once per task)."""
    if not (len(instructions) == len(solves) == len(recipes)):
        raise ValueError(f"one instruction, solve.sh and recipe list per task: got {len(instructions)}, "
                         f"{len(solves)} and {len(recipes)}")
    fam = Counter(r for rs in recipes for r in dict.fromkeys(rs))
    return BatchDiversity(len(instructions), mean_pairwise_jaccard(instructions), identical_share(solves),
                          dict(fam.most_common()))
