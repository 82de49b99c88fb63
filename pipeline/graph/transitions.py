"""The compact transition graph: nodes = scenarios, each entry a transition u --skill--> v.

Stored as CSR arrays sorted by source node so that a sampler reads a node's
out-transitions as one contiguous slice ``indptr[u]:indptr[u+1]`` of ``skill`` / ``dest``.
A skill is an edge from its precondition scenario to its postcondition scenario; a bridge
adds further transitions that reuse a skill id from another scenario. The same skill id
may therefore appear on several transitions, and parallel transitions are allowed.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np


@dataclass
class TransitionGraph:
    n_nodes: int
    n_skills: int
    indptr: np.ndarray  # int64, n_nodes + 1
    skill: np.ndarray   # int32, E
    dest: np.ndarray    # int32, E

    def __post_init__(self) -> None:
        self.n_nodes = int(self.n_nodes)
        self.n_skills = int(self.n_skills)
        self.indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        self.skill = np.ascontiguousarray(self.skill, dtype=np.int32)
        self.dest = np.ascontiguousarray(self.dest, dtype=np.int32)
        if self.indptr.shape != (self.n_nodes + 1,):
            raise ValueError(f"indptr must have n_nodes+1={self.n_nodes + 1} entries, got {self.indptr.shape}")
        n_edges = int(self.indptr[-1]) if self.n_nodes >= 0 and self.indptr.size else 0
        if self.indptr[0] != 0 or np.any(np.diff(self.indptr) < 0):
            raise ValueError("indptr must start at 0 and be non-decreasing")
        if self.skill.shape != (n_edges,) or self.dest.shape != (n_edges,):
            raise ValueError("skill and dest must both have indptr[-1] entries")
        if n_edges:
            if self.dest.min() < 0 or self.dest.max() >= self.n_nodes:
                raise ValueError("dest out of range [0, n_nodes)")
            if self.skill.min() < 0 or self.skill.max() >= self.n_skills:
                raise ValueError("skill out of range [0, n_skills)")

    @classmethod
    def from_edges(cls, n_nodes: int, n_skills: int, src, skill, dest) -> "TransitionGraph":
        """Build from parallel arrays of transitions; a stable sort by ``src`` keeps the input
        order among one node's transitions."""
        src = np.asarray(src, dtype=np.int64)
        skill = np.asarray(skill, dtype=np.int64)
        dest = np.asarray(dest, dtype=np.int64)
        if not (src.shape == skill.shape == dest.shape) or src.ndim != 1:
            raise ValueError("src, skill and dest must be 1-D arrays of equal length")
        if src.size and (src.min() < 0 or src.max() >= n_nodes):
            raise ValueError("src out of range [0, n_nodes)")
        order = np.argsort(src, kind="stable")
        indptr = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n_nodes), out=indptr[1:])
        return cls(n_nodes, n_skills, indptr, skill[order], dest[order])

    @property
    def n_edges(self) -> int:
        return int(self.indptr[-1])

    def out_degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def edge_src(self) -> np.ndarray:
        """The source node of every transition (int32, E), in CSR order."""
        return np.repeat(np.arange(self.n_nodes, dtype=np.int32), self.out_degree())

    def pair_universe(self) -> int:
        """How many distinct (source node, skill) pairs exist as transitions: the size of the
        space that coverage metrics normalise by."""
        if self.n_edges == 0:
            return 0
        keys = self.edge_src().astype(np.int64) * max(self.n_skills, 1) + self.skill
        return int(np.unique(keys).size)

    def to_networkx(self) -> nx.MultiDiGraph:
        """A MultiDiGraph with every node and one edge per transition (``skill`` attribute)."""
        G = nx.MultiDiGraph()
        G.add_nodes_from(range(self.n_nodes))
        G.add_edges_from(
            (int(u), int(v), {"skill": int(s)})
            for u, s, v in zip(self.edge_src().tolist(), self.skill.tolist(), self.dest.tolist()))
        return G
