"""Near-duplicate rule on a templated corpus: template-discounted MinHash/LSH vs the old rule.

A synthetic registry of ``--n`` skills (seeded) made from ``--templates`` page templates, the
way real collections generate them: the same headings, install notes and footer around each
skill's own description and usage lines; ``--copies`` of them are planted copies of an earlier
skill with a few words edited (the true duplicates). Both rules run on the same items in the
same run:

- ``old``: the previous rule (kept below as the baseline): MinHash over all word 3-grams, every
  pair in an LSH bucket checked exactly, union-find groups, each member named against the
  group's first skill. Template text puts most of the corpus into the same buckets.
- ``new``: ``pipeline.filters.near_duplicate``: 3-grams above the document-frequency bound
  left out, at most ``BUCKET_CHECKS`` exact checks per skill and bucket, the closest older
  skill named.

Printed per rule: seconds, exact Jaccard checks, skills failed, planted copies caught (recall)
and template-made originals failed (false duplicates). Wall and CPU seconds both: on a shared
2-core machine other processes stretch the wall time, the CPU time does not move.

Last line: ``RESULT n=… new_s=… old_s=… speedup=… new_checks=… old_checks=… check_ratio=…
new_recall=… old_recall=… new_false_dups=… old_false_dups=…``.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.filters import near_duplicate as nd  # noqa: E402
from workbench.models import Outcome  # noqa: E402

FRAMES = [
    ("Installation", "Source"),
    ("Prerequisites", "Installation", "Documentation", "Source"),
    ("Overview", "Usage", "Notes"),
]
FILLER = [
    "Requirements and caveats from upstream apply to every platform the project supports.",
    "The project provides official distributions as release archives, container images and native packages.",
    "Contributors should read the handbook before they change the build scripts or the release notes.",
    "Run the command with the help flag to list every subcommand and option it accepts.",
    "Listed on the registry, a catalogue of agent skills generated from upstream documentation.",
    "Extracted from the upstream README and reviewed for security before it was published here.",
]
WORDS = ("archive backup bucket cache cluster column commit config cursor daemon digest disk "
         "dump export field filter folder format graph hash header index inode journal json key "
         "layer ledger lock log manifest matrix merge metric mirror module mount node offset "
         "package parser patch pipeline port process query queue record region release replica "
         "report request schema script section segment shard signal snapshot socket source "
         "stream table tag target task template thread token trace tree upload user vector "
         "volume warning window worker").split()


def make_corpus(n: int, templates: int, copies: int, seed: int) -> tuple[list[nd.DedupItem], set[str]]:
    rng = random.Random(seed)
    items: list[nd.DedupItem] = []
    for i in range(n - copies):
        heads = FRAMES[i % templates]
        own = " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 24)))
        body = [f"# Skill {i}", "", own, ""]
        for h in heads:
            body += [f"## {h}", "", *rng.sample(FILLER, 5), ""]
        items.append(nd.DedupItem(f"s{i}", f"'Skill {i}' (registry/skills/s{i})", "\n".join(body), (i,),
                                  f"registry/skills/s{i}"))
    planted: set[str] = set()
    for c in range(copies):
        orig = rng.choice(items[: n - copies])
        words = orig.text.split(" ")
        for _ in range(3):  # a few words edited
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        sid = f"copy{c}"
        planted.add(sid)
        items.append(nd.DedupItem(sid, f"'Copy {c}' (registry/copies/{c})", " ".join(words), (n + c,),
                                  f"registry/copies/{c}"))
    return items, planted


# ------------------------------------------------------------------ the old rule (baseline)
def old_find_near_duplicates(items, threshold=nd.THRESHOLD, counter=None):
    sets = [old_shingles(it.text) for it in items]
    rows = nd.NUM_PERM // nd.BANDS
    buckets = defaultdict(list)
    for i, sh in enumerate(sets):
        sig = old_signature(sh)
        for band in range(nd.BANDS):
            buckets[(band, sig[band * rows:(band + 1) * rows].tobytes())].append(i)
    parent = list(range(len(items)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen = set()
    for members in buckets.values():
        if len(members) < 2:
            continue
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                i, j = members[x], members[y]
                if (i, j) in seen:
                    continue
                seen.add((i, j))
                if counter is not None:
                    counter.append(1)
                if nd.jaccard(sets[i], sets[j]) >= threshold:
                    parent[find(i)] = find(j)
    groups = defaultdict(list)
    for i in range(len(items)):
        groups[find(i)].append(i)
    failed = {}
    for members in groups.values():
        keeper = min(members, key=lambda i: items[i].order)
        for i in members:
            if i != keeper:
                failed[items[i].skill_id] = items[keeper].skill_id
    return failed


def old_shingles(text, n=3):
    words = re.findall(r"[a-z0-9]+", text.lower())
    if len(words) < n:
        return {zlib.crc32(" ".join(words).encode())} if words else set()
    return {zlib.crc32(" ".join(words[i:i + n]).encode()) for i in range(len(words) - n + 1)}


def old_signature(sh):
    if not sh:
        return np.full(nd.NUM_PERM, nd._PRIME, dtype=np.uint64)
    x = np.fromiter(sh, dtype=np.uint64, count=len(sh)) % nd._PRIME
    return ((np.outer(nd._A, x) + nd._B[:, None]) % nd._PRIME).min(axis=1)


# ------------------------------------------------------------------ measuring
def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def new_failed(items, counter):
    real = nd.jaccard
    nd.jaccard = lambda a, b: counter.append(1) or real(a, b)
    try:
        res = nd.find_near_duplicates(items)
    finally:
        nd.jaccard = real
    return {sid: r.location for sid, r in res.items() if r.outcome == Outcome.FAIL}, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--templates", type=int, default=3)
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="smoke run: 500 skills, 10 planted copies")
    args = ap.parse_args()
    if args.quick:
        args.n, args.copies = 500, 10
    items, planted = make_corpus(args.n, args.templates, args.copies, args.seed)
    print(f"{len(items)} skills from {args.templates} templates, {len(planted)} planted copies; "
          f"load average {os.getloadavg()[0]:.1f}")

    new_checks: list[int] = []
    (new_fail, res), new_s, new_cpu = timed(lambda: new_failed(items, new_checks))
    old_checks: list[int] = []
    old_fail, old_s, old_cpu = timed(lambda: old_find_near_duplicates(items, counter=old_checks))

    def quality(failed):
        return (sum(s in failed for s in planted) / max(1, len(planted)),
                sum(s not in planted for s in failed))

    new_recall, new_false = quality(new_fail)
    old_recall, old_false = quality(old_fail)
    for name, s, cpu, checks, fails, recall, false in (
            ("new", new_s, new_cpu, new_checks, new_fail, new_recall, new_false),
            ("old", old_s, old_cpu, old_checks, old_fail, old_recall, old_false)):
        print(f"{name}: {s:.2f} s wall, {cpu:.2f} s CPU, {len(checks):,} exact checks, {len(fails)} failed, "
              f"copies caught {recall:.0%}, template-made originals failed {false}")
    sample = next(r.evidence for sid, r in res.items() if sid in planted and r.outcome == Outcome.FAIL)
    print(f"new evidence for a copy: {sample}")
    print(f"new evidence for an original: {res['s1'].evidence}")
    print(f"RESULT n={len(items)} new_s={new_s:.2f} old_s={old_s:.2f} speedup={old_s / new_s:.1f} "
          f"new_cpu_s={new_cpu:.2f} old_cpu_s={old_cpu:.2f} new_checks={len(new_checks)} "
          f"old_checks={len(old_checks)} check_ratio={len(old_checks) / max(1, len(new_checks)):.1f} "
          f"new_recall={new_recall:.2f} old_recall={old_recall:.2f} new_false_dups={new_false} "
          f"old_false_dups={old_false}")


if __name__ == "__main__":
    main()
