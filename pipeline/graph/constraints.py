"""The user's cluster edits (merge, split, rename) as constraints for the next dedup run.

Edits name scenario ids, which stay stable across builds, so they survive re-running dedup.
A later edit wins over an earlier one it contradicts: a split drops earlier merges that
joined its sides, a merge drops earlier splits between the scenarios it joins.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Constraints:
    must_link: list[list[int]] = field(default_factory=list)
    cannot_link: list[tuple[list[int], list[int]]] = field(default_factory=list)
    renames: dict[int, str] = field(default_factory=dict)  # member index -> canonical text


def from_edits(edits: list[dict], index_of: dict[str, int]) -> Constraints:
    merges: list[set[int]] = []
    splits: list[tuple[set[int], set[int]]] = []
    renames: dict[int, str] = {}
    for e in edits:
        p = e["payload"]
        if e["kind"] == "merge":
            group = {index_of[s] for s in p.get("scenario_ids", []) if s in index_of}
            if len(group) < 2:
                continue
            splits = [(a, b) for a, b in splits if not (a & group and b & group)]
            merges.append(group)
        elif e["kind"] == "split":
            groups = [{index_of[s] for s in g if s in index_of} for g in p.get("groups", [])]
            groups = [g for g in groups if g]
            for i in range(len(groups)):
                for j in range(i + 1, len(groups)):
                    a, b = groups[i], groups[j]
                    merges = [m for m in merges if not (m & a and m & b)]
                    splits.append((a, b))
        elif e["kind"] == "rename":
            anchor = index_of.get(p.get("anchor", ""))
            if anchor is not None and p.get("text", "").strip():
                renames[anchor] = p["text"].strip()
    return Constraints(must_link=[sorted(m) for m in merges],
                       cannot_link=[(sorted(a), sorted(b)) for a, b in splits], renames=renames)
