#!/usr/bin/env python3
"""Write packages.csv and summary.txt for the installed Debian packages.

Usage: pkg_audit.py OUTDIR
"""
import csv
import os
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    fmt = "${Package}\t${Version}\t${Architecture}\t${Status}\n"
    rows = [line.split("\t") for line in run(["dpkg-query", "-W", "-f", fmt]).splitlines() if line]
    with open(os.path.join(outdir, "packages.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["package", "version", "arch", "status"])
        w.writerows(rows)
    broken = [r[0] for r in rows if r[3] != "install ok installed" and not r[3].startswith("deinstall")]
    residual = [r[0] for r in rows if r[3].startswith("deinstall ok config-files")]
    try:
        manual = run(["apt-mark", "showmanual"]).split()
    except (OSError, subprocess.CalledProcessError):
        manual = []
    with open(os.path.join(outdir, "summary.txt"), "w") as fh:
        fh.write(f"installed: {len(rows) - len(residual)}\n")
        fh.write(f"manually installed: {len(manual)}\n")
        fh.write(f"config-files only: {len(residual)}\n")
        fh.write(f"broken or half-installed: {len(broken)}\n")
        for name in broken:
            fh.write(f"  BROKEN {name}\n")
    print(f"wrote {len(rows)} rows to {outdir}")


if __name__ == "__main__":
    main()
