#!/usr/bin/env python3
"""Per-hour request and error counts from combined-format access logs."""
import argparse
import collections
import datetime
import gzip
import re
import sys

LINE = re.compile(r'\[(?P<ts>[^\]]+)\] "[^"]*" (?P<status>\d{3}) ')


def open_any(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", errors="replace")
    return open(path, "r", errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--include-4xx", action="store_true",
                    help="count 4xx responses as errors too")
    args = ap.parse_args()

    req = collections.Counter()
    c4 = collections.Counter()
    c5 = collections.Counter()
    bad = 0
    for path in args.logs:
        with open_any(path) as fh:
            for line in fh:
                m = LINE.search(line)
                if not m:
                    bad += 1
                    continue
                ts = datetime.datetime.strptime(m.group("ts").split()[0],
                                                "%d/%b/%Y:%H:%M:%S")
                hour = ts.strftime("%Y-%m-%dT%H:00")
                status = int(m.group("status"))
                req[hour] += 1
                if 400 <= status < 500:
                    c4[hour] += 1
                elif status >= 500:
                    c5[hour] += 1

    out = sys.stdout
    out.write("hour,requests,4xx,5xx,error_pct\n")
    for hour in sorted(req):
        errors = c5[hour] + (c4[hour] if args.include_4xx else 0)
        pct = 100.0 * errors / req[hour]
        out.write(f"{hour},{req[hour]},{c4[hour]},{c5[hour]},{pct:.2f}\n")
    if bad:
        print(f"warning: {bad} unparsable lines skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
