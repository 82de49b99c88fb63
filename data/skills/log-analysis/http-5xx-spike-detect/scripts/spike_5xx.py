#!/usr/bin/env python3
"""Report minutes where the 5xx share of requests spikes above a rolling baseline."""
import argparse
import collections
import datetime
import gzip
import re
import statistics

LINE = re.compile(r'\[(?P<ts>[^\] ]+)[^\]]*\] "(?:[A-Z]+) (?P<path>[^ "]+)[^"]*" (?P<status>\d{3}) ')
IDS = re.compile(r"/\d+(?=/|$)")


def open_any(path):
    return gzip.open(path, "rt", errors="replace") if path.endswith(".gz") else open(path, errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--window", type=int, default=30, help="baseline minutes")
    ap.add_argument("--abs-threshold", type=float, default=5.0, help="min 5xx percent")
    ap.add_argument("--factor", type=float, default=3.0, help="multiple of rolling median")
    ap.add_argument("--min-requests", type=int, default=20)
    args = ap.parse_args()

    total = collections.Counter()
    errors = collections.Counter()
    paths = collections.defaultdict(collections.Counter)
    for name in args.logs:
        with open_any(name) as fh:
            for line in fh:
                m = LINE.search(line)
                if not m:
                    continue
                minute = datetime.datetime.strptime(m.group("ts")[:17], "%d/%b/%Y:%H:%M")
                total[minute] += 1
                if m.group("status").startswith("5"):
                    errors[minute] += 1
                    p = IDS.sub("/:id", m.group("path").split("?", 1)[0])
                    paths[minute][p] += 1

    history = collections.deque(maxlen=args.window)
    spikes = []
    for minute in sorted(total):
        pct = 100.0 * errors[minute] / total[minute]
        baseline = statistics.median(history) if history else 0.0
        is_spike = (total[minute] >= args.min_requests and pct >= args.abs_threshold
                    and (len(history) < args.window or pct >= args.factor * baseline))
        if is_spike:
            spikes.append(minute)
        else:
            history.append(pct)  # keep spikes out of the baseline

    # Merge consecutive spike minutes into windows.
    windows = []
    for minute in spikes:
        if windows and minute - windows[-1][-1] <= datetime.timedelta(minutes=1):
            windows[-1].append(minute)
        else:
            windows.append([minute])

    if not windows:
        print("no 5xx spikes found")
    for w in windows:
        req = sum(total[m] for m in w)
        peak = max(100.0 * errors[m] / total[m] for m in w)
        top = collections.Counter()
        for m in w:
            top.update(paths[m])
        top_s = ", ".join(f"{p} ({n})" for p, n in top.most_common(3))
        print(f"{w[0]:%Y-%m-%d %H:%M} -> {w[-1]:%Y-%m-%d %H:%M}  peak {peak:.1f}%  requests {req}  top: {top_s}")


if __name__ == "__main__":
    main()
