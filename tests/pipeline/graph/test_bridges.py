"""Bridge candidates and the offline verifier."""
from __future__ import annotations

import numpy as np

from pipeline.graph import bridges


def _unit(rows):
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_candidates_skip_own_skill_same_cluster_and_weak_links():
    # rows: skill0 pre/post, skill1 pre/post, skill2 pre/post
    vectors = _unit([[1, 0, 0], [0, 1, 0],      # skill 0: pre, post
                     [0, 1, 0.05], [0, 0, 1],   # skill 1: pre close to skill 0's post
                     [0, 0.3, 1], [1, 0, 0.1]])  # skill 2: pre close to skill 1's post
    roles = np.array(["pre", "post"] * 3)
    skills = np.array([0, 0, 1, 1, 2, 2])
    labels = np.arange(6)
    cands = bridges.find_candidates(vectors, roles, skills, labels, k=3, threshold=0.9)
    pairs = {(c.post, c.pre) for c in cands}
    assert (1, 2) in pairs and (3, 4) in pairs
    assert all(skills[c.post] != skills[c.pre] for c in cands)
    assert all(c.similarity >= 0.9 for c in cands)
    same = labels.copy()
    same[2] = same[1]  # skill 1's pre in the same cluster as skill 0's post: already one node
    assert (1, 2) not in {(c.post, c.pre) for c in bridges.find_candidates(vectors, roles, skills, same, 3, 0.9)}


def test_offline_verifier_needs_a_shared_artifact_or_near_identity():
    ok, why = bridges.verify_offline("data processing: /data/report.csv produced", "CSV /data/report.csv present", 0.7)
    assert ok and "report.csv" in why
    ok, why = bridges.verify_offline("a git repository with a clean tree", "an nginx access log", 0.7)
    assert not ok and "no shared artifact" in why
    ok, why = bridges.verify_offline("alpha beta", "gamma delta", 0.9)
    assert ok and "nearly the same" in why
    assert bridges.texts_hash("a", "b") != bridges.texts_hash("b", "a")
