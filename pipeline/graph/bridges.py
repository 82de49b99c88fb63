"""SkillSynth stage 4: link a skill's postcondition to other skills' preconditions.

Candidates are the nearest preconditions of other skills above a similarity threshold,
in another cluster. Each is then verified — by the LLM with a schema, or offline by a
deterministic check — and a verdict is reused while both scenario texts stay the same.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from pipeline.graph.knn import knn_query

OFFLINE_MODEL = "artifact-overlap-v1"
_ARTIFACT = re.compile(r"(?:~|\.{0,2})/[\w.@%+-]+(?:/[\w.@%*+-]*)*|\b[\w-]+\.[a-z]{1,5}\b|\.(?:csv|json|jsonl|ya?ml|"
                       r"txt|log|db|sqlite|tar|gz|zip|xz|zst|sql|patch|html|xml)\b")
_FORMATS = ("csv", "json", "jsonl", "yaml", "tsv", "sqlite", "sql", "log", "tar", "gzip", "zip", "patch",
            "diff", "html", "xml", "parquet", "markdown", "git repository", "commit", "branch", "cron", "systemd",
            "archive", "report", "database", "table", "key", "certificate")


class BridgeVerdict(BaseModel):
    """Can the second skill start from the state the first one leaves?"""

    valid: bool
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(min_length=3)


@dataclass(frozen=True)
class Candidate:
    post: int          # row of the postcondition scenario
    pre: int           # row of the precondition scenario
    similarity: float


def find_candidates(vectors: np.ndarray, roles: np.ndarray, skill_idx: np.ndarray, labels: np.ndarray,
                    k: int = 5, threshold: float = 0.6) -> list[Candidate]:
    """For each postcondition, its k nearest preconditions of other skills in other clusters."""
    post_rows = np.flatnonzero(roles == "post")
    pre_rows = np.flatnonzero(roles == "pre")
    if not len(post_rows) or not len(pre_rows):
        return []
    idx, sims = knn_query(vectors[pre_rows], vectors[post_rows], k, query_groups=skill_idx[post_rows],
                          index_groups=skill_idx[pre_rows])
    out = []
    for qi, post in enumerate(post_rows):
        for j, sim in zip(idx[qi], sims[qi]):
            if j < 0 or sim < threshold:
                continue
            pre = pre_rows[j]
            if labels[pre] != labels[post]:  # the same cluster is already one node
                out.append(Candidate(int(post), int(pre), float(sim)))
    return out


def texts_hash(post_text: str, pre_text: str) -> str:
    return hashlib.sha256(f"{post_text}\0{pre_text}".encode()).hexdigest()[:16]


def _artifacts(text: str) -> set[str]:
    low = text.lower()
    found = {a.strip("./") for a in _ARTIFACT.findall(low)}
    found |= {f for f in _FORMATS if re.search(rf"\b{re.escape(f)}\b", low)}
    return {f for f in found if len(f) > 2}


def verify_offline(post_text: str, pre_text: str, similarity: float, strong: float = 0.85) -> tuple[bool, str]:
    """Deterministic check: the next skill needs an artifact or format the first one leaves."""
    shared = sorted(_artifacts(post_text) & _artifacts(pre_text))
    if shared:
        return True, f"shares {', '.join(shared[:4])} (similarity {similarity:.2f})"
    if similarity >= strong:
        return True, f"states nearly the same (similarity {similarity:.2f} ≥ {strong})"
    return False, f"no shared artifact or format, similarity {similarity:.2f} < {strong}"
