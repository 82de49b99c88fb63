"""The user's cluster edits (merge, split, rename) as constraints for the next dedup run.

Edits name scenario ids, which stay stable across builds, so they survive re-running dedup.
A later edit wins over an earlier one it contradicts, and changes no more of it than the
contradiction needs:
- a merge drops earlier splits whose two sides it joins;
- a split takes its moved scenarios out of earlier merges that held both sides, and the rest
  of each such merge stays merged. (Dropping the whole merge instead undid a 105-scenario
  merge when one scenario was split off it.) The moved scenarios form one cluster of their own
  (``isolated``: apart from every other scenario, not only from the side that stays), and a
  rename of the cluster stays with the side that stays.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Constraints:
    must_link: list[list[int]] = field(default_factory=list)
    cannot_link: list[tuple[list[int], list[int]]] = field(default_factory=list)
    renames: dict[int, str] = field(default_factory=dict)  # member index -> canonical text
    # groups split off a cluster: each is a cluster of its own, joining no other cluster either
    # (without this, a scenario split off a cluster of copies of one sentence landed in the
    # next cluster along); a later merge of one with other scenarios lifts it
    isolated: list[list[int]] = field(default_factory=list)

    def cannot_link_all(self, n: int) -> list[tuple[list[int], list[int]]]:
        """cannot_link plus, for each isolated group, the group against every other row."""
        out = list(self.cannot_link)
        for g in self.isolated:
            inside = set(g)
            rest = [i for i in range(n) if i not in inside]
            if rest:
                out.append((g, rest))
        return out


def _without_split_sides(merges: list[set[int]], groups: list[set[int]]) -> list[set[int]]:
    """Earlier merges with a split's moved groups (all but the first, the scenarios that stay)
    taken out wherever a merge held more than one side of the split."""
    moved = set().union(*groups[1:])
    out: list[set[int]] = []
    for m in merges:
        if sum(1 for g in groups if m & g) < 2:
            out.append(m)
            continue
        out.extend(part for part in [m - moved, *(m & g for g in groups[1:])] if len(part) >= 2)
    return out


def _components(merges: list[set[int]]) -> dict[int, int]:
    """Member index -> a representative of its must-link component (merges chain through
    shared members)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for m in merges:
        first = next(iter(m))
        for x in m:
            parent[find(x)] = find(first)
    return {x: find(x) for x in parent}


def _consistent(merges: list[set[int]], splits: list[tuple[set[int], set[int]]]
                ) -> list[tuple[set[int], set[int]]]:
    """Splits whose sides no chain of merges joins. The rules above keep every single merge
    clear of every split; a chain through scenarios that left the workspace since could still
    join two sides, and then the merges win rather than the build failing."""
    comp = _components(merges)
    out = []
    for a, b in splits:
        ca = {comp.get(x, ("alone", x)) for x in a}
        if not ca & {comp.get(x, ("alone", x)) for x in b}:
            out.append((a, b))
    return out


def from_edits(edits: list[dict], index_of: dict[str, int]) -> Constraints:
    merges: list[set[int]] = []
    splits: list[tuple[set[int], set[int]]] = []
    isolated: list[set[int]] = []
    renames: dict[int, str] = {}
    for e in edits:
        p = e["payload"]
        if e["kind"] == "merge":
            group = {index_of[s] for s in p.get("scenario_ids", []) if s in index_of}
            if len(group) < 2:
                continue
            splits = [(a, b) for a, b in splits if not (a & group and b & group)]
            isolated = [g for g in isolated if not (g & group and group - g)]
            merges.append(group)
        elif e["kind"] == "split":
            groups = [{index_of[s] for s in g if s in index_of} for g in p.get("groups", [])]
            groups = [g for g in groups if g]
            if len(groups) < 2:
                continue
            merges = _without_split_sides(merges, groups)
            # a renamed cluster keeps its name on the side that stays, even when the scenario
            # the rename was anchored on is the one moved out
            moved = set().union(*groups[1:])
            stay = min(groups[0])
            for anchor in [a for a in renames if a in moved]:
                order = list(renames)
                if stay in renames and order.index(stay) > order.index(anchor):
                    del renames[anchor]  # the staying side's own, later rename wins
                else:
                    renames = {(stay if k == anchor else k): v for k, v in renames.items() if k != stay}
            merges.extend(g for g in groups[1:] if len(g) >= 2 and g not in merges)
            splits.extend((groups[i], groups[j]) for i in range(len(groups)) for j in range(i + 1, len(groups)))
            isolated.extend(g for g in groups[1:] if g not in isolated)
        elif e["kind"] == "rename":
            anchor = index_of.get(p.get("anchor", ""))
            if anchor is not None and p.get("text", "").strip():
                renames.pop(anchor, None)  # keep the dict in edit order: a later rename wins a cluster
                renames[anchor] = p["text"].strip()
    splits = _consistent(merges, splits)
    return Constraints(must_link=[sorted(m) for m in merges],
                       cannot_link=[(sorted(a), sorted(b)) for a, b in splits], renames=renames,
                       isolated=[sorted(g) for g in isolated])
