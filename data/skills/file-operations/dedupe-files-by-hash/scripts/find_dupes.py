#!/usr/bin/env python3
"""Group duplicate files by size, then SHA-256. Prints JSON to stdout."""
import hashlib
import json
import os
import sys
from collections import defaultdict


def sha256(path, bufsize=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(bufsize):
            h.update(chunk)
    return h.hexdigest()


def main(roots):
    by_size = defaultdict(list)
    seen_inodes = set()
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not os.path.isfile(p) or os.path.islink(p) or st.st_size == 0:
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen_inodes:
                    continue
                seen_inodes.add(key)
                by_size[st.st_size].append(p)
    groups = []
    for size, paths in by_size.items():
        if len(paths) < 2:
            continue
        by_hash = defaultdict(list)
        for p in paths:
            try:
                by_hash[sha256(p)].append(p)
            except OSError as exc:
                print(f"skip {p}: {exc}", file=sys.stderr)
        for digest, same in by_hash.items():
            if len(same) > 1:
                same.sort(key=lambda q: os.stat(q).st_mtime)
                groups.append({"sha256": digest, "size": size, "paths": same})
    groups.sort(key=lambda g: g["size"] * (len(g["paths"]) - 1), reverse=True)
    json.dump(groups, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: find_dupes.py DIR [DIR ...]")
    main(sys.argv[1:])
