#!/usr/bin/env python3
"""Deep-merge YAML files left to right and print the result as YAML."""
import argparse
import sys

import yaml


def merge(base, over, null_deletes):
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            if value is None and null_deletes:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, null_deletes)
            else:
                out[key] = value
        return out
    return over


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--null-deletes", action="store_true",
                    help="a null value in a later file removes the key")
    args = ap.parse_args()
    result = {}
    for path in args.files:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
        result = merge(result, doc, args.null_deletes)
    yaml.safe_dump(result, sys.stdout, sort_keys=False, default_flow_style=False)


if __name__ == "__main__":
    main()
