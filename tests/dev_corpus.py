"""Where the real public skill corpus for measurements lives (never copied into the repo).

Looked up in order: $WORKBENCH_DEV_CORPUS, <repo>/../shared/corpora/dev, /work/shared/corpora/dev.
Tests that measure on it skip with a clear message when none of these exists.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]


def dev_corpus_path() -> Path | None:
    candidates = [os.environ.get("WORKBENCH_DEV_CORPUS"), _REPO.parent / "shared" / "corpora" / "dev",
                  Path("/work/shared/corpora/dev")]
    for c in candidates:
        if c and (Path(c) / "labels.jsonl").is_file():
            return Path(c)
    return None


def require_dev_corpus() -> Path:
    path = dev_corpus_path()
    if path is None:
        pytest.skip("the dev corpus (shared/corpora/dev with labels.jsonl) is not on this machine; "
                    "set WORKBENCH_DEV_CORPUS to measure on it")
    return path


def dev_labels(root: Path) -> list[dict]:
    """The hand labels: path (relative to the corpus), label accept|reject, reason, note."""
    return [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines() if line.strip()]
