"""`workbench sample`: draw paths with a sampler and store them with their steps.

Inverse-frequency batches read and update the global visit counts kept in the store
(keyed by cluster anchor and skill id, so they outlive rebuilds); the baselines leave them
alone so that comparing samplers does not disturb the counts.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.graph import sampling
from pipeline.graph.samplers import SAMPLERS
from pipeline.graph.assemble import assemble
from workbench.store import graph as store
from workbench.workspace import Workspace



@dataclass
class SampleReport:
    batch_id: str
    sampler: str
    n_paths: int
    steps: int
    unique_pairs: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def sample(ws: Workspace, sampler: str, n: int, seed: int, min_len: int = 2, max_len: int = 6) -> SampleReport:
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler '{sampler}' (choose from {', '.join(SAMPLERS)})")
    if n <= 0:
        raise ValueError("--n must be positive")
    g = assemble(ws.db)
    tg = g.transitions
    nodes_by_anchor, skills_by_id = store.visit_counts(ws.db)
    node_counts = np.array([nodes_by_anchor.get(a, 0) for a in g.anchors], dtype=np.int64)
    skill_counts = np.array([skills_by_id.get(s, 0) for s in g.skill_ids], dtype=np.int64)
    if sampler == "inverse-frequency":
        paths, node_counts, skill_counts = sampling.sample_inverse_frequency(
            tg, n, seed, min_len=min_len, max_len=max_len, node_counts=node_counts, skill_counts=skill_counts)
    elif sampler == "random-walk":
        paths = sampling.sample_random_walk(tg, n, seed, min_len, max_len)
    elif sampler == "single-skill":
        paths = sampling.sample_single_skill(tg, n, seed)
    else:
        paths = sampling.sample_random_multi_skill(tg, n, seed, min_len, max_len)
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
        new_nodes.update({a: int(c) for a, c in zip(g.anchors, node_counts) if c})
        new_skills.update({s: int(c) for s, c in zip(g.skill_ids, skill_counts) if c})
    store.save_sample(ws.db, {"batch_id": batch_id, "sampler": sampler, "n_paths": n, "seed": seed,
                              "min_len": min_len, "max_len": max_len,
                              "build_id": last["build_id"] if last else ""}, frame, steps, new_nodes, new_skills)
    pairs = len(set(zip(np.asarray(paths.src).tolist(), np.asarray(paths.skill).tolist())))
    return SampleReport(batch_id, sampler, len(lengths), int(len(step_path)), pairs)
