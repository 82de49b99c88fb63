"""JSONL ingest throughput (issue 11 item 10: ≥ 1,000 records/s), against the previous path.

A generated export of distinct records (random words, so the near-duplicate filter sees no
template) with one malformed line in a hundred and one oversized line, ingested twice into
fresh workspaces in the same run:

- `streamed`: what ingest does now (records parsed and filtered in worker processes, a
  record's fields taken as its front matter, commits about once a second, problems
  committed with them);
- `baseline`: the previous path, emulated here (one process, every record's YAML re-parsed,
  one commit per 40 records).

The whole ingest is timed: read, parse, filter, near-duplicate pass and store; wall clock
and CPU seconds (this process and its workers), since on a shared machine the wall clock
says as much about the neighbours. Peak RSS is printed too: the oversized line must be
refused in bounded reads, not held.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.ingest import jsonl_workers, run  # noqa: E402
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
    """One process, every record's YAML re-parsed, a commit every 40 records: as before."""
    saved = (jsonl_workers.build_skill, jsonl_workers.worker_count, run.FLUSH_S, run.MAX_CHUNK)
    jsonl_workers.build_skill = lambda text, front_matter=None, **kw: saved[0](text, **kw)
    jsonl_workers.worker_count = lambda: 1
    run.FLUSH_S, run.MAX_CHUNK = 0.0, run.CHUNK
    try:
        yield
    finally:
        jsonl_workers.build_skill, jsonl_workers.worker_count, run.FLUSH_S, run.MAX_CHUNK = saved


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed_ingest(root: Path, export: Path, good: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ingest into a fresh workspace."""
    ws = Workspace.open(root)
    t0, c0 = time.perf_counter(), _cpu_s()
    report = run.ingest(ws, [export])
    seconds, cpu = time.perf_counter() - t0, _cpu_s() - c0
    assert len(report.new) == good, (len(report.new), good)
    assert any("over the 1 MiB limit" in p.reason for p in report.problems) or not args.big_mb
    return seconds, cpu


def main() -> None:
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--big-mb", type=int, default=50, help="size of the one oversized line (0: none)")
    ap.add_argument("--baseline-records", type=int, default=20_000,
                    help="lines of the same kind for the (slower) baseline; its rate is what is compared")
    ap.add_argument("--quick", action="store_true", help="smoke run: 300 lines each side, a 2 MB oversized line")
    args = ap.parse_args()
    if args.quick:
        args.records, args.baseline_records, args.big_mb = 300, 300, 2
    with tempfile.TemporaryDirectory() as tmp:
        export, base_export = Path(tmp) / "export.jsonl", Path(tmp) / "baseline.jsonl"
        good = make_export(export, args.records, args.big_mb)
        base_lines = min(args.records, args.baseline_records)
        base_good = make_export(base_export, base_lines, args.big_mb)
        streamed_s, streamed_cpu = timed_ingest(Path(tmp) / "ws-streamed", export, good)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with previous_path():
            baseline_s, baseline_cpu = timed_ingest(Path(tmp) / "ws-baseline", base_export, base_good)
    lines = args.records
    print(f"{lines} lines ({good} good, {lines - good - bool(args.big_mb)} malformed, one of {args.big_mb} MB), "
          f"{jsonl_workers.worker_count()} workers, load average {os.getloadavg()[0]:.1f}")
    print(f"streamed: {streamed_s:.1f} s wall, {streamed_cpu:.1f} CPU s; "
          f"baseline ({base_lines} lines): {baseline_s:.1f} s wall, {baseline_cpu:.1f} CPU s")
    print(f"peak RSS after the streamed ingest: {rss_mb:.0f} MB")
    rate, base_rate = lines / streamed_s, base_lines / baseline_s
    print(f"RESULT records_per_s={rate:.0f} baseline_records_per_s={base_rate:.0f} "
          f"speedup_vs_baseline={rate / base_rate:.2f} records_per_cpu_s={lines / streamed_cpu:.0f} "
          f"baseline_records_per_cpu_s={base_lines / baseline_cpu:.0f} peak_rss_mb={rss_mb:.0f}")


if __name__ == "__main__":
    main()
