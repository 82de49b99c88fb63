#!/usr/bin/env python3
"""SQL-style join of two CSV files on a key column. Output CSV goes to stdout."""
import argparse
import csv
import sys


def norm(value, strip_zeros):
    value = value.strip()
    if strip_zeros:
        value = value.lstrip("0") or "0"
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("left")
    ap.add_argument("right")
    ap.add_argument("--left-key", required=True)
    ap.add_argument("--right-key", required=True)
    ap.add_argument("--how", choices=["inner", "left", "outer"], default="inner")
    ap.add_argument("--strip-zeros", action="store_true")
    a = ap.parse_args()

    with open(a.right, newline="", encoding="utf-8-sig") as f:
        rr = csv.DictReader(f)
        right_fields = [c for c in rr.fieldnames if c != a.right_key]
        right = {norm(row[a.right_key], a.strip_zeros): row for row in rr}

    used = set()
    unmatched_left = 0
    with open(a.left, newline="", encoding="utf-8-sig") as f:
        lr = csv.DictReader(f)
        left_fields = lr.fieldnames
        renamed = {c: (c + "_right" if c in left_fields else c) for c in right_fields}
        out_fields = left_fields + [renamed[c] for c in right_fields]
        w = csv.DictWriter(sys.stdout, fieldnames=out_fields, lineterminator="\n")
        w.writeheader()
        for row in lr:
            k = norm(row[a.left_key], a.strip_zeros)
            match = right.get(k)
            if match is None:
                unmatched_left += 1
                if a.how == "inner":
                    continue
                extra = {renamed[c]: "" for c in right_fields}
            else:
                used.add(k)
                extra = {renamed[c]: match[c] for c in right_fields}
            w.writerow({**row, **extra})

        unmatched_right = [k for k in right if k not in used]
        if a.how == "outer":
            for k in unmatched_right:
                row = {c: "" for c in left_fields}
                row[a.left_key] = right[k][a.right_key]
                row.update({renamed[c]: right[k][c] for c in right_fields})
                w.writerow(row)

    print(f"unmatched left rows: {unmatched_left}, unmatched right keys: {len(unmatched_right)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
