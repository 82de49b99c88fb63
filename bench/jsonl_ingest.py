"""JSONL ingest throughput (issue 11 item 10: ≥ 1,000 records/s), against the previous path.

A generated export of distinct records (random words, so the near-duplicate filter sees no
template) with one malformed line in a hundred and one oversized line, ingested twice into
fresh workspaces in the same run:

- `streamed`: what ingest does now (a record's fields are its front matter, commits about
  once a second, problems committed with them);
- `baseline`: the previous path, emulated here (every record's YAML re-parsed, one commit per
  40 records).

The whole ingest is timed: read, parse, filter, near-duplicate pass and store. Peak RSS is
printed too: the oversized line must be refused in bounded reads, not held.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.ingest import run  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402


def make_export(path: Path, n: int, big_mb: int, seed: int = 0) -> int:
    """Write n lines; returns how many are good records."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))
             for _ in range(5000)]
    tools = ["jq", "awk", "sed", "tar", "sqlite3", "git", "curl", "find", "sort", "gzip"]
    good = 0
    with open(path, "w") as fh:
        for i in range(n):
            if i == n // 2 and big_mb:
                fh.write('{"name": "huge", "content": "')
                for _ in range(big_mb):
                    fh.write("x" * (1 << 20))
                fh.write('"}\n')
            elif i % 100 == 99:
                fh.write('{"name": "broken-%d", "descr\n' % i)
            else:
                good += 1
                t = rng.choice(tools)
                words = lambda k: " ".join(rng.choices(vocab, k=k))  # noqa: E731
                fh.write(json.dumps({
                    "name": f"{t}-{i}", "description": f"Use {t} to {words(12)}.", "license": "MIT",
                    "metadata": {"openclaw": {"requires": {"bins": [t]}}},
                    "content": f"# {words(4)}\n\n## Inputs\n- `/data/{i}/in.txt`\n\n## Steps\n"
                               f"1. {words(10)} with `ls -la /data/{i}`.\n2. Run `{t}` to {words(15)}.\n"
                               f"3. {words(12)} into `/data/{i}/out.txt`.\n"}) + "\n")
    return good


@contextmanager
def previous_path():
    """Re-parse every record's YAML and commit every 40 records, as ingest did before."""
    saved = (run.build_skill, run.FLUSH_S, run.MAX_CHUNK)
    run.build_skill = lambda text, front_matter=None, **kw: saved[0](text, **kw)
    run.FLUSH_S, run.MAX_CHUNK = 0.0, run.CHUNK
    try:
        yield
    finally:
        run.build_skill, run.FLUSH_S, run.MAX_CHUNK = saved


def timed_ingest(root: Path, export: Path, good: int) -> float:
    ws = Workspace.open(root)
    t0 = time.perf_counter()
    report = run.ingest(ws, [export])
    seconds = time.perf_counter() - t0
    assert len(report.new) == good, (len(report.new), good)
    assert any("over the 1 MiB limit" in p.reason for p in report.problems) or not args.big_mb
    return seconds


def main() -> None:
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--big-mb", type=int, default=50, help="size of the one oversized line (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export.jsonl"
        good = make_export(export, args.records, args.big_mb)
        streamed_s = timed_ingest(Path(tmp) / "ws-streamed", export, good)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with previous_path():
            baseline_s = timed_ingest(Path(tmp) / "ws-baseline", export, good)
    lines = args.records
    print(f"{lines} lines ({good} good, {lines - good - bool(args.big_mb)} malformed, "
          f"one of {args.big_mb} MB): streamed {streamed_s:.1f} s, baseline {baseline_s:.1f} s")
    print(f"peak RSS after the streamed ingest: {rss_mb:.0f} MB")
    print(f"RESULT records_per_s={lines / streamed_s:.0f} baseline_records_per_s={lines / baseline_s:.0f} "
          f"speedup_vs_baseline={baseline_s / streamed_s:.2f} peak_rss_mb={rss_mb:.0f}")


if __name__ == "__main__":
    main()
