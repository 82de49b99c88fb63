#!/usr/bin/env python3
"""Per-column profile of a CSV file, printed as JSON on stdout."""
import argparse
import csv
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--delimiter", default=",")
    ap.add_argument("--max-distinct", type=int, default=1_000_000,
                    help="stop tracking distinct values past this many per column")
    args = ap.parse_args()

    with open(args.path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh, delimiter=args.delimiter)
        header = next(reader)
        n = len(header)
        count = [0] * n
        empty = [0] * n
        distinct = [set() for _ in range(n)]
        capped = [False] * n
        numeric = [True] * n
        total = [0.0] * n
        lo = [None] * n
        hi = [None] * n

        for row in reader:
            for i in range(n):
                cell = row[i].strip() if i < len(row) else ""
                count[i] += 1
                if cell == "":
                    empty[i] += 1
                    continue
                if not capped[i]:
                    distinct[i].add(cell)
                    if len(distinct[i]) >= args.max_distinct:
                        capped[i] = True
                if numeric[i]:
                    try:
                        v = float(cell)
                    except ValueError:
                        numeric[i] = False
                        continue
                    total[i] += v
                    lo[i] = v if lo[i] is None else min(lo[i], v)
                    hi[i] = v if hi[i] is None else max(hi[i], v)

    out = []
    for i, name in enumerate(header):
        col = {
            "column": name,
            "count": count[i],
            "empty": empty[i],
            "distinct": len(distinct[i]),
            "distinct_capped": capped[i],
        }
        filled = count[i] - empty[i]
        if numeric[i] and filled:
            col.update(min=lo[i], max=hi[i], mean=total[i] / filled)
        out.append(col)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
