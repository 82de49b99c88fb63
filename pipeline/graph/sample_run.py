"""`workbench sample`: draw paths with a sampler and store them with their steps.

Inverse-frequency batches read and update the global visit counts kept in the store
(keyed by cluster anchor and skill id, so they outlive rebuilds); the baselines leave them
alone so that comparing samplers does not disturb the counts.

No path appears twice in a batch (two of 40 did, giving near-identical tasks): a repeat,
or an empty path, is drawn again under a derived seed, a bounded number of times, and the
report says when the graph could not give as many distinct paths as were asked.

Paths shorter than --min-len are kept, never silently: the report counts them and says why
each walk stopped (a cluster with no out-edges, or only ways back onto the path).

The coverage-aware sampler steers to the (scenario, skill) pairs not covered yet: by the
batch alone (``uncovered_in="batch"``) or also by every path stored in the workspace
(``"workspace"``, matched by cluster anchor and skill id, so older builds count where their
pairs still exist). It leaves the visit counts alone, like the baselines.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from pipeline.graph import coverage_sampler, sampling
from pipeline.graph.samplers import SAMPLERS, UNCOVERED_IN, DrawState, draw
from pipeline.graph.assemble import assemble
from workbench.store import graph as store
from workbench.workspace import Workspace

REDRAW_ROUNDS = 8        # bounded: a small graph may have fewer distinct paths than asked
WALKS = ("inverse-frequency", "random-walk", "coverage-aware")   # samplers that walk edges and retry a short walk


@dataclass
class SampleReport:
    batch_id: str
    sampler: str
    n_paths: int
    steps: int
    unique_pairs: int
    redrawn: int = 0     # repeats of an earlier path of the batch that were drawn again
    short: int = 0       # paths asked for but not found distinct after the redraws
    min_len: int = 1
    below_min_len: int = 0       # kept paths with fewer steps than min_len ...
    dead_end: int = 0            # ... because the cluster reached has no out-edge
    dead_end_clusters: int = 0   # (in this many distinct clusters)
    revisit: int = 0             # ... because every way on leads back onto the path

    @property
    def distinct_note(self) -> str:
        if not self.short:
            return ""
        return (f"the graph gave only {self.n_paths} distinct paths of the {self.n_paths + self.short} asked "
                f"({REDRAW_ROUNDS} redraw rounds); the batch has {self.n_paths}")

    @property
    def short_note(self) -> str:
        """Paths shorter than --min-len are kept (the sampler retried each from new starts
        first), and said: how many, and why the walks could not go on."""
        if not self.below_min_len:
            return ""
        why = []
        if self.dead_end:
            why.append(f"{self.dead_end} reached a cluster with no out-edges (no skill starts from its scenario and "
                       f"no bridge leaves it; {self.dead_end_clusters} distinct cluster(s))")
        if self.revisit:
            why.append(f"{self.revisit} could only go on to a cluster already on the path")
        if other := self.below_min_len - self.dead_end - self.revisit:
            why.append(f"{other} ran out of transitions")
        mean = self.steps / self.n_paths if self.n_paths else 0.0
        tries = f" after {sampling.MAX_RETRIES} tries each from new starts" if self.sampler in WALKS else ""
        return (f"{self.below_min_len} of {self.n_paths} paths are shorter than --min-len {self.min_len} "
                f"(mean {mean:.2f} steps){tries}: " + ", ".join(why)
                + "; `workbench graph stats` says how connected the graph is and what to do")

    @property
    def note(self) -> str:
        return "; ".join(n for n in (self.distinct_note, self.short_note) if n)

    def as_dict(self) -> dict:
        return dict(self.__dict__, note=self.note)


def _path_keys(paths: sampling.Paths) -> list[tuple]:
    ptr = np.asarray(paths.ptr)
    src, sk, dst = (np.asarray(a).tolist() for a in (paths.src, paths.skill, paths.dst))
    return [tuple(zip(src[a:b], sk[a:b], dst[a:b])) for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]


def distinct_paths(draw: Callable[[int, int], sampling.Paths], n: int, seed: int,
                   rounds: int = REDRAW_ROUNDS) -> tuple[sampling.Paths, int, int]:
    """`n` paths with no path twice: `draw(k, seed)` is asked for `n`, then each round for twice
    as many as are still missing under a seed derived from `seed` (deterministic), keeping the
    first of each repeat. Returns (paths, how many repeats were drawn again, how many are still
    missing after `rounds` rounds)."""
    kept: list[tuple] = []
    seen: set[tuple] = set()
    repeats = 0
    for r in range(rounds + 1):
        missing = n - len(kept)
        if missing <= 0:
            break
        batch = draw(n if r == 0 else 2 * missing, seed if r == 0 else (seed * 1_000_003 + r) & 0xFFFFFFFF)
        for key in _path_keys(batch):
            if len(kept) == n:
                break
            if key in seen or not key:
                repeats += r == 0     # the first draw's repeats are the ones drawn again
                continue
            seen.add(key)
            kept.append(key)
    lengths = np.array([len(k) for k in kept], dtype=np.int64)
    flat = [t for k in kept for t in k]
    arr = np.array(flat, dtype=np.int32).reshape(-1, 3)
    paths = sampling.Paths(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                           arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy())
    return paths, repeats, n - len(kept)


def _visits(paths: sampling.Paths, n_nodes: int, n_skills: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's counting rule over kept paths: each path's start and every destination,
    every skill used."""
    p = paths
    starts = np.asarray(p.src)[np.asarray(p.ptr)[:-1][np.diff(p.ptr) > 0]]
    nodes = np.bincount(np.concatenate([starts, p.dst]).astype(np.int64), minlength=n_nodes)
    return nodes, np.bincount(np.asarray(p.skill, dtype=np.int64), minlength=n_skills)


def stored_pair_counts(ws: Workspace, g) -> np.ndarray:
    """Steps of every stored path per pair of the assembled graph ``g`` (pair ids of
    ``coverage_sampler.pair_index``); steps whose cluster or skill the graph no longer has
    are left out."""
    steps = store.path_steps(ws.db)
    node_of = {a: i for i, a in enumerate(g.anchors.tolist())}
    skill_of = {k: i for i, k in enumerate(g.skill_ids.tolist())}
    src = np.array([node_of.get(a, -1) for a in steps["src_anchor"].tolist()], dtype=np.int64)
    skill = np.array([skill_of.get(k, -1) for k in steps["skill_id"].tolist()], dtype=np.int64)
    return coverage_sampler.pair_counts_of(g.transitions, src, skill)


def sample(ws: Workspace, sampler: str, n: int, seed: int, min_len: int = 2, max_len: int = 6,
           uncovered_in: str = "batch") -> SampleReport:
    """Draw a batch of `n` distinct paths (a repeat is drawn again, see `distinct_paths`).
    ``uncovered_in`` is for the coverage-aware sampler (see the module docstring)."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler '{sampler}' (choose from {', '.join(SAMPLERS)})")
    if uncovered_in not in UNCOVERED_IN:
        raise ValueError(f"unknown --uncovered-in '{uncovered_in}' (choose from {', '.join(UNCOVERED_IN)})")
    if uncovered_in != "batch" and sampler != "coverage-aware":
        raise ValueError(f"--uncovered-in {uncovered_in} is for the coverage-aware sampler; {sampler} does not "
                         "look at coverage")
    if n <= 0:
        raise ValueError("--n must be positive")
    g = assemble(ws.db)
    tg = g.transitions
    nodes_by_anchor, skills_by_id = store.visit_counts(ws.db)
    node_counts = np.array([nodes_by_anchor.get(a, 0) for a in g.anchors], dtype=np.int64)
    skill_counts = np.array([skills_by_id.get(s, 0) for s in g.skill_ids], dtype=np.int64)
    # redraws see the counts of every draw before them
    state = DrawState(node_counts, skill_counts,
                      stored_pair_counts(ws, g) if sampler == "coverage-aware" and uncovered_in == "workspace" else None)
    paths, redrawn, short = distinct_paths(lambda k, s: draw(tg, sampler, k, s, min_len, max_len, state), n, seed)
    if short == n:
        raise ValueError("the graph gave no path with a step (does it have transitions?)")
    batch_id = uuid.uuid4().hex[:12]
    ptr = np.asarray(paths.ptr)
    lengths = np.diff(ptr)
    path_ids = [f"{batch_id}-{i}" for i in range(len(lengths))]
    step_path = np.repeat(np.arange(len(lengths)), lengths)
    step_no = np.arange(len(step_path)) - np.repeat(ptr[:-1], lengths)
    steps = pd.DataFrame({"path_id": np.asarray(path_ids, dtype=object)[step_path] if len(step_path) else [],
                          "step": step_no.astype(np.int32),
                          "src_anchor": g.anchors[np.asarray(paths.src)], "skill_id": g.skill_ids[np.asarray(paths.skill)],
                          "dst_anchor": g.anchors[np.asarray(paths.dst)]})
    frame = pd.DataFrame({"path_id": path_ids, "batch_id": batch_id, "idx": np.arange(len(lengths), dtype=np.int32),
                          "length": lengths.astype(np.int32)})
    last = store.last_build(ws.db)
    new_nodes = dict(nodes_by_anchor)
    new_skills = dict(skills_by_id)
    if sampler == "inverse-frequency":
        # counted from the kept paths only: a dropped repeat leaves no visit behind
        nodes_seen, skills_seen = _visits(paths, len(g.anchors), len(g.skill_ids))
        new_nodes.update({a: int(c) for a, c in zip(g.anchors, node_counts + nodes_seen) if c})
        new_skills.update({s: int(c) for s, c in zip(g.skill_ids, skill_counts + skills_seen) if c})
    store.save_sample(ws.db, {"batch_id": batch_id, "sampler": sampler, "n_paths": n, "seed": seed,
                              "min_len": min_len, "max_len": max_len,
                              "build_id": last["build_id"] if last else ""}, frame, steps, new_nodes, new_skills)
    pairs = len(set(zip(np.asarray(paths.src).tolist(), np.asarray(paths.skill).tolist())))
    # a single-skill path is one step by design; the other samplers aim for min_len
    below = sampling.short_paths(tg, paths, 1 if sampler == "single-skill" else min_len)
    return SampleReport(batch_id, sampler, len(lengths), int(len(step_path)), pairs, redrawn, short,
                        below.min_len, below.count, below.dead_end, below.dead_end_clusters, below.revisit)
