"""Canonical file renderings of artifacts, and the Python snippets solutions use to read them.

Values never contain commas, quotes, tabs or newlines (the generators see to it), so the
canonical CSV needs no quoting and shell tools can split it safely.
"""
from __future__ import annotations

import json

from .base import Artifact, Table


def fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{v:.1f}"
    return str(v)


def render_table(t: Table, fmt: str) -> bytes:
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        out = [sep.join(t.columns)] + [sep.join(fmt_value(v) for v in r) for r in t.rows]
        return ("\n".join(out) + "\n").encode()
    objs = [dict(zip(t.columns, r)) for r in t.rows]
    if fmt == "json":
        return (json.dumps(objs, indent=2) + "\n").encode()
    return ("".join(json.dumps(o) + "\n" for o in objs)).encode()


def render_lines(lines) -> bytes:
    return ("\n".join(lines) + "\n").encode() if lines else b""


def table_text(a: Artifact) -> str:
    """The text an artifact's file holds when written canonically (for regex-style recipes)."""
    if a.kind == "records":
        return render_table(a.table, a.fmt).decode()
    if a.kind == "lines":
        return render_lines(a.lines).decode()
    return "\n".join(c.decode("utf-8", "replace") for _, c in a.files)


# A loader solutions embed in their Python heredocs: it types values by the known schema.
def py_loader(a: Artifact) -> str:
    t = a.table
    types = dict(zip(t.columns, t.types))
    return f'''import csv, json
TYPES = {types!r}
def conv(k, v):
    t = TYPES.get(k, "str")
    if t == "int": return int(float(v))
    if t == "float": return float(v)
    return str(v)
def load(path, fmt={a.fmt!r}):
    if fmt in ("csv", "tsv"):
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="," if fmt == "csv" else "\\t"))
    elif fmt == "json":
        rows = json.load(open(path))
    else:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    return [{{k: conv(k, v) for k, v in r.items()}} for r in rows]
'''

