#!/usr/bin/env python3
"""Per-endpoint latency percentiles from nginx logs containing rt= / urt= fields."""
import argparse
import collections
import gzip
import math
import re
import sys

REQ = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[0-9.]+"')
NUMERIC = re.compile(r"/\d+(?=/|$)")
UUID = re.compile(r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=/|$)")


def percentile(sorted_vals, p):
    """Nearest-rank percentile on an already sorted list."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def open_any(path):
    if path == "-":
        return sys.stdin
    if path.endswith(".gz"):
        return gzip.open(path, "rt", errors="replace")
    return open(path, errors="replace")


def parse_time(line, field):
    m = re.search(r"\b%s=(\S+)" % field, line)
    if not m or m.group(1) == "-":
        return None
    total = 0.0
    for part in m.group(1).replace(" ", "").split(","):
        if part in ("", "-"):
            continue
        total += float(part)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+", help="log files, .gz allowed, '-' for stdin")
    ap.add_argument("--field", default="rt", choices=["rt", "urt"])
    ap.add_argument("--min-count", type=int, default=1)
    args = ap.parse_args()

    times = collections.defaultdict(list)
    for path in args.logs:
        fh = open_any(path)
        for line in fh:
            m = REQ.search(line)
            if not m:
                continue
            t = parse_time(line, args.field)
            if t is None:
                continue
            path_only = m.group("path").split("?", 1)[0]
            path_only = UUID.sub("/:uuid", NUMERIC.sub("/:id", path_only))
            times[f"{m.group('method')} {path_only}"].append(t)
        if fh is not sys.stdin:
            fh.close()

    rows = []
    for ep, vals in times.items():
        if len(vals) < args.min_count:
            continue
        vals.sort()
        rows.append((ep, len(vals), *(percentile(vals, p) for p in (50, 90, 95, 99)), vals[-1]))
    rows.sort(key=lambda r: r[4], reverse=True)
    print("endpoint\tcount\tp50\tp90\tp95\tp99\tmax")
    for ep, n, p50, p90, p95, p99, mx in rows:
        print(f"{ep}\t{n}\t{p50:.3f}\t{p90:.3f}\t{p95:.3f}\t{p99:.3f}\t{mx:.3f}")


if __name__ == "__main__":
    main()
