#!/usr/bin/env python3
"""Integrate y over x from a CSV file using the trapezoid and Simpson rules."""
import argparse
import csv

import numpy as np
from scipy.integrate import simpson, trapezoid


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--x", required=True, help="name of the x column")
    ap.add_argument("--y", required=True, help="name of the y column")
    a = ap.parse_args()

    xs, ys = [], []
    with open(a.path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            if row[a.x].strip() == "" or row[a.y].strip() == "":
                continue
            xs.append(float(row[a.x]))
            ys.append(float(row[a.y]))
    x = np.asarray(xs)
    y = np.asarray(ys)
    if x.size < 3:
        raise SystemExit("need at least 3 samples")
    order = np.argsort(x)
    x, y = x[order], y[order]

    t = trapezoid(y, x=x)
    s = simpson(y, x=x)
    rel = abs(t - s) / max(abs(s), 1e-300)
    print(f"samples:   {x.size}")
    print(f"x range:   {x[0]} .. {x[-1]} (max step {np.diff(x).max():g})")
    print(f"trapezoid: {t:.6g}")
    print(f"simpson:   {s:.6g}")
    print(f"rel. diff: {rel:.2e}")
    print(f"as kWh (if x is seconds and y is watts): {s / 3.6e6:.6g}")


if __name__ == "__main__":
    main()
