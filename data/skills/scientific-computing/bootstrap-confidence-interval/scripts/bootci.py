#!/usr/bin/env python3
"""Bootstrap confidence interval for a statistic of one CSV column."""
import argparse
import csv

import numpy as np
from scipy import stats

STATS = {
    "mean": lambda x, axis=-1: np.mean(x, axis=axis),
    "median": lambda x, axis=-1: np.median(x, axis=axis),
    "trimmed": lambda x, axis=-1: stats.trim_mean(x, 0.1, axis=axis),
    "p90": lambda x, axis=-1: np.percentile(x, 90, axis=axis),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--column", required=True)
    ap.add_argument("--stat", choices=sorted(STATS), default="mean")
    ap.add_argument("--method", choices=["BCa", "percentile", "basic"], default="BCa")
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=12345)
    a = ap.parse_args()

    with open(a.path, newline="", encoding="utf-8-sig") as fh:
        x = np.array([float(r[a.column]) for r in csv.DictReader(fh) if r[a.column].strip()])
    if x.size < 10:
        raise SystemExit("need at least 10 values")

    fn = STATS[a.stat]
    res = stats.bootstrap((x,), fn, confidence_level=a.level, n_resamples=a.resamples,
                          method=a.method, random_state=np.random.default_rng(a.seed))
    ci = res.confidence_interval
    print(f"{a.stat} = {fn(x):.6g}  {a.level:.0%} {a.method} CI [{ci.low:.6g}, {ci.high:.6g}]"
          f"  (n={x.size}, resamples={a.resamples})")


if __name__ == "__main__":
    main()
