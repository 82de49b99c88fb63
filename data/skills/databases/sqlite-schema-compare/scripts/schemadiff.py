#!/usr/bin/env python3
"""Print structural schema differences between two SQLite databases."""
import argparse
import re
import sqlite3
import sys


def load(path, ignore):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    objs = {}
    for typ, name, tbl, sql in con.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_schema "
            "WHERE name NOT LIKE 'sqlite_%' ORDER BY name"):
        if tbl in ignore:
            continue
        norm = re.sub(r"\s+", " ", sql or "").strip()
        objs[(typ, name)] = norm
    cols = {}
    for (typ, name) in list(objs):
        if typ != "table":
            continue
        for cid, cname, ctype, notnull, dflt, pk, hidden in con.execute(
                f'PRAGMA table_xinfo("{name}")'):
            cols[(name, cname)] = (ctype.upper(), notnull, dflt, pk)
    con.close()
    return objs, cols


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--ignore-table", action="append", default=[])
    args = ap.parse_args()
    oa, ca = load(args.a, set(args.ignore_table))
    ob, cb = load(args.b, set(args.ignore_table))
    diffs = []
    for key in sorted(set(oa) | set(ob)):
        typ, name = key
        if key not in oa:
            diffs.append(f"{typ} {name}: missing in {args.a}")
        elif key not in ob:
            diffs.append(f"{typ} {name}: missing in {args.b}")
        elif typ != "table" and oa[key] != ob[key]:
            diffs.append(f"{typ} {name}: sql differs")
    for key in sorted(set(ca) | set(cb)):
        t, c = key
        if (("table", t) not in oa) or (("table", t) not in ob):
            continue
        if key not in ca:
            diffs.append(f"column {t}.{c}: missing in {args.a}")
        elif key not in cb:
            diffs.append(f"column {t}.{c}: missing in {args.b}")
        elif ca[key] != cb[key]:
            diffs.append(f"column {t}.{c}: {ca[key]} != {cb[key]} (type, notnull, default, pk)")
    for line in diffs:
        print(line)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
