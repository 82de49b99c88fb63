"""14-gram decontamination (Nemotron): a task sharing any 14-word run with a benchmark task
is dropped.

The benchmark is a folder the user points at (e.g. a Terminal-Bench checkout): every text
file under it (instructions, task.yaml/task.toml, solutions, tests) is tokenised into
lower-case words and its 14-grams are kept as 64-bit hashes, so the index stays small.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle

N = 14
TEXT_SUFFIXES = {".md", ".txt", ".toml", ".yaml", ".yml", ".sh", ".py", ".json"}
MAX_FILE_BYTES = 2 * 1024 * 1024
_WORD = re.compile(r"[a-z0-9]+")


def ngram_hashes(text: str, n: int = N) -> dict[int, int]:
    """hash → index of the first word of the n-gram (the index helps to show the match)."""
    words = _WORD.findall(text.lower())
    out: dict[int, int] = {}
    for i in range(len(words) - n + 1):
        h = int.from_bytes(hashlib.blake2b(" ".join(words[i:i + n]).encode(), digest_size=8).digest(), "little")
        out.setdefault(h, i)
    return out


@dataclass
class BenchmarkIndex:
    root: Path
    grams: dict[int, str] = field(default_factory=dict)   # hash → file it came from
    files: int = 0

    @classmethod
    def build(cls, root: Path) -> "BenchmarkIndex":
        root = Path(root)
        if not root.is_dir():
            raise ValueError(f"benchmark folder {root} does not exist or is not a folder")
        idx = cls(root)
        for dirpath, _dirs, names in os.walk(root, followlinks=False):
            for name in names:
                p = Path(dirpath) / name
                if p.suffix.lower() not in TEXT_SUFFIXES or p.is_symlink():
                    continue
                try:
                    if p.stat().st_size > MAX_FILE_BYTES:
                        continue
                    text = p.read_text(errors="replace")
                except OSError:
                    continue
                idx.files += 1
                rel = str(p.relative_to(root))
                for h in ngram_hashes(text):
                    idx.grams.setdefault(h, rel)
        return idx

    def shared(self, text: str, limit: int = 20) -> list[tuple[str, str]]:
        """(n-gram, benchmark file) for up to `limit` n-grams `text` shares with the benchmark."""
        words = _WORD.findall(text.lower())
        out = []
        for h, i in ngram_hashes(text).items():
            if h in self.grams:
                out.append((" ".join(words[i:i + N]), self.grams[h]))
                if len(out) >= limit:
                    break
        return out


def check_decontam(bundle: TaskBundle, index: BenchmarkIndex | None) -> CheckResult:
    if index is None:
        return CheckResult(name="decontam", passed=True, reason="no benchmark folder configured; nothing to compare",
                           details={"matches": [], "benchmark": None})
    matches = []
    for path in ("instruction.md", "solution/solve.sh", "tests/test_outputs.py"):
        if path not in bundle.files:
            continue
        matches += [{"file": path, "ngram": gram, "benchmark_file": source}
                    for gram, source in index.shared(bundle.text(path), limit=20 - len(matches))]
        if len(matches) >= 20:
            break
    reason = (f"no {N}-gram shared with {index.files} benchmark files" if not matches else
              f"{len(matches)} {N}-gram(s) shared with the benchmark, e.g. {matches[0]['file']} and "
              f"{matches[0]['benchmark_file']}: {matches[0]['ngram'][:80]!r}")
    return CheckResult(name="decontam", passed=not matches, reason=reason,
                       log="\n".join(f"{m['file']} ~ {m['benchmark_file']}: {m['ngram']}" for m in matches),
                       details={"matches": matches, "benchmark": str(index.root), "benchmark_files": index.files})
