#!/usr/bin/env python3
"""Print the dominant frequencies of a uniformly sampled signal stored in a CSV column."""
import argparse
import csv

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--column", required=True)
    ap.add_argument("--rate", type=float, required=True, help="sampling rate in Hz")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--pad", type=int, default=1, help="zero-padding factor")
    ap.add_argument("--spectrum", help="write frequency,amplitude CSV here")
    a = ap.parse_args()

    with open(a.path, newline="", encoding="utf-8-sig") as fh:
        x = np.array([float(r[a.column]) for r in csv.DictReader(fh) if r[a.column].strip()])
    n = x.size
    if n < 16:
        raise SystemExit("need at least 16 samples")
    x = x - x.mean()
    win = np.hanning(n)
    nfft = int(2 ** np.ceil(np.log2(n * max(a.pad, 1))))
    spec = np.fft.rfft(x * win, n=nfft)
    freqs = np.fft.rfftfreq(nfft, d=1.0 / a.rate)
    amp = 2.0 * np.abs(spec) / win.sum()

    # local maxima, strongest first
    is_peak = np.r_[False, (amp[1:-1] > amp[:-2]) & (amp[1:-1] >= amp[2:]), False]
    idx = np.flatnonzero(is_peak)
    idx = idx[np.argsort(amp[idx])[::-1]][: a.top]

    print(f"samples={n} rate={a.rate:g} Hz resolution={a.rate / n:.4g} Hz nyquist={a.rate / 2:g} Hz")
    print("frequency_hz,amplitude")
    for i in idx:
        print(f"{freqs[i]:.4f},{amp[i]:.6g}")

    if a.spectrum:
        np.savetxt(a.spectrum, np.column_stack([freqs, amp]), delimiter=",",
                   header="frequency_hz,amplitude", comments="", fmt="%.6g")


if __name__ == "__main__":
    main()
