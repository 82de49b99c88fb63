"""Schemas of data files in a container: CSV/TSV header and row count, JSON / JSONL top-level
keys and types, SQLite tables and views with their columns and row counts.

Read by one exec of the image's python3 running SCHEMA_SCRIPT (stdlib only); an image without
python3 gets the same script run on the host over bounded copies of the files, so what a
schema is stays defined once.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from workbench.sandbox.session import Session, SessionStopped

SCHEMA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".db", ".sqlite", ".sqlite3")
SQLITE_MAGIC = "SQLite format 3"
HOST_SCHEMA_MAX_BYTES = 4 * 1024 * 1024   # what is copied out for reading when the image lacks python3

# Runs as `python3 -c SCHEMA_SCRIPT paths...` inside the image (stdlib only), or on the host on
# copies when the image has no python3: one definition of what a schema is. One JSON line per path.
SCHEMA_SCRIPT = r'''
import csv, json, os, sqlite3, sys, urllib.parse
csv.field_size_limit(1 << 20)
COUNT_MAX = 64 << 20    # bigger text files: header and keys only, rows not counted (the read stays quick)
PARSE_MAX = 16 << 20    # bigger JSON documents are not parsed
def kind(v):
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number", type(None): "null"}.get(type(v), type(v).__name__)
def keys_of(d):
    return {str(k)[:64]: kind(v) for k, v in list(d.items())[:60]}
def describe(p):
    r = {"path": p}
    size = os.path.getsize(p)
    with open(p, "rb") as fh:
        magic = fh.read(16)
    low = p.lower()
    if magic.startswith(b"SQLite format 3"):
        r["format"] = "sqlite"
        con = sqlite3.connect("file:" + urllib.parse.quote(p) + "?mode=ro", uri=True)
        try:
            tables = {}
            for name, typ in con.execute("select name, type from sqlite_master where type in ('table', 'view') "
                                         "and name not like 'sqlite_%' order by name limit 40"):
                q = '"' + name.replace('"', '""') + '"'
                cols = [(c[1] + " " + c[2]).strip()[:80] for c in con.execute("pragma table_info(" + q + ")")][:60]
                rows = con.execute("select count(*) from " + q).fetchone()[0] if typ == "table" else None
                tables[name[:64]] = {"columns": cols, "rows": rows}
            r["tables"] = tables
        finally:
            con.close()
    elif low.endswith((".csv", ".tsv")):
        r["format"] = "tsv" if low.endswith(".tsv") else "csv"
        with open(p, newline="", encoding="utf-8", errors="replace") as fh:
            rd = csv.reader(fh, delimiter="\t" if low.endswith(".tsv") else ",")
            r["columns"] = [c[:64] for c in next(rd, [])][:100]
            r["rows"] = sum(1 for _ in rd) if size <= COUNT_MAX else None
    elif low.endswith((".jsonl", ".ndjson")):
        r["format"] = "jsonl"
        n, first = 0, None
        with open(p, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    n += 1
                    if first is None:
                        first = json.loads(line)
                        if size > COUNT_MAX:
                            break
        r["rows"] = n if size <= COUNT_MAX else None
        if isinstance(first, dict):
            r["keys"] = keys_of(first)
    elif low.endswith(".json"):
        r["format"] = "json"
        if size > PARSE_MAX:
            raise ValueError("over 16 MiB, not parsed")
        with open(p, encoding="utf-8", errors="replace") as fh:
            data = json.loads(fh.read())
        r["json_type"] = kind(data)
        if isinstance(data, dict):
            r["keys"] = keys_of(data)
        elif isinstance(data, list):
            r["rows"] = len(data)
            if data and isinstance(data[0], dict):
                r["keys"] = keys_of(data[0])
    return r
def main(paths):
    for p in paths:
        try:
            r = describe(p)
        except BaseException as e:
            r = {"path": p, "error": (type(e).__name__ + ": " + str(e))[:200]}
        print(json.dumps(r))
if __name__ == "__main__":
    main(sys.argv[1:])
'''


@dataclass
class FileSchema:
    path: str
    format: str                                   # csv | tsv | json | jsonl | sqlite
    columns: list[str] = field(default_factory=list)
    rows: int | None = None                       # data rows (CSV: after the header), array length, lines
    keys: dict[str, str] = field(default_factory=dict)      # JSON: key -> type (of the first element of an array)
    json_type: str = ""
    tables: dict[str, dict] = field(default_factory=dict)   # SQLite: name -> {"columns": [...], "rows": n}
    error: str = ""

    def as_line(self) -> str:
        if self.error:
            return f"{self.path} ({self.format}): unreadable: {self.error}"
        rows = "rows not counted (a big file)" if self.rows is None else f"{self.rows} data rows"
        if self.format in ("csv", "tsv"):
            return f"{self.path} ({self.format}, {rows}): columns {', '.join(self.columns)}"
        if self.format == "sqlite":
            tabs = "; ".join(f"{t}({', '.join(v.get('columns', []))}) {v.get('rows')} rows" for t, v in self.tables.items())
            return f"{self.path} (sqlite): {tabs or 'no tables'}"
        keys = ", ".join(f"{k}: {t}" for k, t in self.keys.items())
        shape = (f"array of {self.rows}" if self.json_type == "array" else
                 rows if self.format == "jsonl" else self.json_type or "json")
        return f"{self.path} ({self.format}, {shape})" + (f": {{{keys}}}" if keys else "")



def read_schemas(session: Session, paths: list[str], sizes: dict[str, int]) -> tuple[dict[str, FileSchema], list[str]]:
    """Schemas of the data files at `paths` (`sizes`: their sizes from the tree), and notes on
    how they were read. One exec of the image's python3; without one, copies read on the host."""
    schemas: dict[str, FileSchema] = {}
    notes: list[str] = []
    if not paths:
        return schemas, notes
    res = session.exec(["python3", "-c", SCHEMA_SCRIPT, *paths], 60, workdir="/")
    if res.stopped_by_limit:
        raise SessionStopped(session.stopped or res.container_gone)
    if res.exit_code in (126, 127) and not res.output.strip().startswith("{"):
        notes.append("the image has no python3: data files were copied out and read on the host")
        lines = _schemas_on_host(session, paths, sizes)
    else:
        lines = res.output.splitlines()
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or row.get("path") not in paths:
            continue
        fmt = row.get("format") or _guess_format(row["path"])
        schemas[row["path"]] = FileSchema(
            row["path"], fmt, columns=[str(c) for c in row.get("columns", [])], rows=row.get("rows"),
            keys={str(k): str(v) for k, v in (row.get("keys") or {}).items()}, json_type=str(row.get("json_type", "")),
            tables=row.get("tables") or {}, error=str(row.get("error", "")))
    return schemas, notes


def describe_local(path: str) -> dict:
    """SCHEMA_SCRIPT's `describe` of a file on this machine (raises what it raises)."""
    global _describe
    if _describe is None:
        namespace: dict = {"__name__": "workbench_schema"}
        exec(compile(SCHEMA_SCRIPT, "SCHEMA_SCRIPT", "exec"), namespace)   # our own constant text, not container input
        _describe = namespace["describe"]
    return _describe(path)


_describe = None


def _schemas_on_host(session: Session, paths: list[str], sizes: dict[str, int]) -> list[str]:
    """The same SCHEMA_SCRIPT on copies of the files (up to HOST_SCHEMA_MAX_BYTES each)."""
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wb-schema-") as tmp:
        for i, p in enumerate(paths):
            if sizes.get(p, 0) > HOST_SCHEMA_MAX_BYTES:
                out.append(json.dumps({"path": p, "error": f"over {HOST_SCHEMA_MAX_BYTES // 2**20} MiB, not copied out"}))
                continue
            data = session.read_file(p, max_bytes=HOST_SCHEMA_MAX_BYTES)
            if data is None:
                continue
            local = Path(tmp) / f"{i}{Path(p).suffix}"     # the suffix picks the format, as inside
            local.write_bytes(data)
            try:
                row = describe_local(str(local))
            except Exception as exc:
                row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            row["path"] = p
            out.append(json.dumps(row))
    return out


def _guess_format(path: str) -> str:
    low = path.lower()
    for suffix, fmt in ((".tsv", "tsv"), (".csv", "csv"), (".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json")):
        if low.endswith(suffix):
            return fmt
    return "sqlite"
