"""Near-duplicate skills: MinHash over distinctive word 3-grams, LSH buckets, exact Jaccard check.

Collections generate skills from one template (the same headings, install notes and footer
around a different description). Word 3-grams found in a large share of the corpus are that
template's text: they are left out before comparing, so skills made from one template are
compared on what they say of their own, and a skill whose distinctive text still matches an
older one's is its duplicate. The evidence names the template (how many skills share it, their
collection, its headings) and the closest older skill with its score.

No N×N comparison: only pairs that share an LSH bucket are compared, and in a bucket each
skill is checked against a bounded number of older members, so a bucket of thousands (a
template the share bound did not catch) costs linear, not quadratic, work.
"""
from __future__ import annotations

import posixpath
import re
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from pipeline.filters.base import RuleResult, passed
from workbench.models import Outcome

RULE = "dedup.near_duplicate"
THRESHOLD = 0.6
NUM_PERM = 64
BANDS = 16  # 4 rows a band: pairs at Jaccard 0.6 meet in a bucket with p ≈ 0.9
# A 3-gram in more than 2% of the skills (and in more than 4: a small corpus has no template)
# is template text, not what a skill says of its own.
BOILERPLATE_SHARE = 0.02
BOILERPLATE_MIN_DOCS = 4
MIN_DISTINCT = 8        # fewer distinctive 3-grams than this: the skill is compared on its whole text
TEMPLATE_MIN_SHARE = 0.2  # a skill whose text is at least this much template text is "made from" it
BUCKET_CHECKS = 8       # in one bucket a skill is checked against the oldest and its 7 older neighbours
_PRIME = (1 << 31) - 1
_rng = np.random.default_rng(20260101)
_A = _rng.integers(1, _PRIME, NUM_PERM, dtype=np.uint64)
_B = _rng.integers(0, _PRIME, NUM_PERM, dtype=np.uint64)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


@dataclass(frozen=True)
class DedupItem:
    skill_id: str
    label: str     # shown in evidence: name (key)
    text: str
    order: tuple   # lower is older: the one kept
    key: str = ""  # path inside the corpus: the collection a template belongs to is read from it


@dataclass(frozen=True)
class Template:
    """Text that many skills share: how many, where they live, the headings they share."""

    docs: int
    collection: str
    headings: tuple[str, ...]

    def describe(self) -> str:
        where = f" in {self.collection}/" if self.collection else ""
        heads = f" (headings: {', '.join(self.headings[:6])})" if self.headings else ""
        return f"the template shared by {self.docs} skills{where}{heads}"


def shingles(text: str, n: int = 3) -> set[int]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    if len(words) < n:
        return {zlib.crc32(" ".join(words).encode())} if words else set()
    return {zlib.crc32(" ".join(words[i:i + n]).encode()) for i in range(len(words) - n + 1)}


def _signature(sh: set[int]) -> np.ndarray:
    x = np.fromiter(sh, dtype=np.uint64, count=len(sh)) % _PRIME
    return ((np.outer(_A, x) + _B[:, None]) % _PRIME).min(axis=1)


def jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def boilerplate_bound(n_docs: int) -> float:
    """A 3-gram (or heading) in more documents than this is template text."""
    return max(BOILERPLATE_MIN_DOCS, BOILERPLATE_SHARE * n_docs)


def _headings(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for m in _HEADING.finditer(text):
        seen.setdefault(" ".join(re.findall(r"\w+", m.group(1))).strip(), None)
    return [h for h in seen if h]


def _common_folder(keys: list[str]) -> str:
    """The folder all these skill keys live in ("" when they share none or one has no key)."""
    if not keys or not all(keys):
        return ""
    try:
        return posixpath.commonpath([posixpath.dirname(k) for k in keys])
    except ValueError:  # absolute and relative keys mixed
        return ""


def _templates(items: list[DedupItem], full: list[set[int]], boiler: set[int],
               bound: float) -> dict[int, tuple[Template, float]]:
    """For each skill made mostly of template text: its template and the share of its 3-grams."""
    heads = [_headings(it.text) for it in items]
    heading_df = Counter(h.lower() for hs in heads for h in hs)
    made: dict[int, tuple[tuple[str, ...], float]] = {}
    for i, sh in enumerate(full):
        share = len(sh & boiler) / len(sh) if sh else 0.0
        if share >= TEMPLATE_MIN_SHARE:
            made[i] = (tuple(h for h in heads[i] if heading_df[h.lower()] > bound), share)
    members: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, (common, _) in made.items():
        members[tuple(h.lower() for h in common)].append(i)
    out: dict[int, tuple[Template, float]] = {}
    for group in members.values():
        collection = _common_folder([items[i].key for i in group])
        for i in group:
            out[i] = (Template(len(group), collection, made[i][0]), made[i][1])
    return out


def _candidate_pairs(sets: list[set[int]], order: list[tuple]) -> set[tuple[int, int]]:
    """(older, newer) pairs that share an LSH bucket, at most BUCKET_CHECKS per skill and bucket."""
    rows = NUM_PERM // BANDS
    buckets: dict[tuple, list[int]] = defaultdict(list)
    for i, sh in enumerate(sets):
        if not sh:
            continue  # an empty text is nobody's duplicate
        sig = _signature(sh)
        for band in range(BANDS):
            buckets[(band, sig[band * rows:(band + 1) * rows].tobytes())].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in buckets.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: order[i])
        for p in range(1, len(members)):
            newer = members[p]
            pairs.add((members[0], newer))
            pairs.update((members[q], newer) for q in range(max(1, p - BUCKET_CHECKS + 1), p))
    return pairs


def find_near_duplicates(items: list[DedupItem], threshold: float = THRESHOLD) -> dict[str, RuleResult]:
    full = [shingles(it.text) for it in items]
    bound = boilerplate_bound(len(items))
    df = Counter(x for sh in full for x in sh)
    boiler = {x for x, c in df.items() if c > bound}
    distinct = [sh - boiler for sh in full]
    whole = [len(d) < MIN_DISTINCT for d in distinct]  # too little of its own: compare the whole text
    sets = [f if w else d for f, d, w in zip(full, distinct, whole)]
    order = [it.order for it in items]
    closest: dict[int, tuple[float, int]] = {}  # newer -> (score, its closest older near-duplicate)
    for older, newer in _candidate_pairs(sets, order):
        if whole[older] != whole[newer]:
            continue  # whole text against distinctive text measures nothing
        s = jaccard(sets[older], sets[newer])
        prev = closest.get(newer)
        if s >= threshold and (prev is None or s > prev[0] or (s == prev[0] and order[older] < order[prev[1]])):
            closest[newer] = (s, older)
    set_aside: dict[int, list[int]] = defaultdict(list)
    for newer, (_, older) in closest.items():
        set_aside[older].append(newer)
    templates = _templates(items, full, boiler, bound)
    results: dict[str, RuleResult] = {}
    for i, it in enumerate(items):
        made = templates.get(i)
        template_note = f"{made[1]:.0%} of its word 3-grams are {made[0].describe()}, not counted" if made else ""
        compared = "distinctive word 3-grams" if not whole[i] and len(distinct[i]) < len(full[i]) else "word 3-grams"
        if i in closest:
            s, older = closest[i]
            note = f" ({template_note})" if made and not whole[i] else ""
            results[it.skill_id] = RuleResult(
                RULE, Outcome.FAIL,
                f"near-duplicate of {items[older].label}, ingested earlier: {s:.0%} of {compared} "
                f"shared{note}", items[older].skill_id)
            continue
        if set_aside[i]:
            newer = sorted(set_aside[i], key=lambda j: order[j])
            names = ", ".join(items[j].label for j in newer[:10])
            more = f" and {len(newer) - 10} more" if len(newer) > 10 else ""
            note = f"kept; near-duplicates set aside: {names}{more}"
        elif made and not whole[i]:
            note = f"made from a template: {template_note}; no other skill shares ≥{threshold:.0%} of the rest"
        else:
            note = f"no other skill shares ≥{threshold:.0%} of its word 3-grams"
        results[it.skill_id] = passed(RULE, note)
    return results
