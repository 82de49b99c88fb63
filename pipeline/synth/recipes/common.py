"""Pieces several recipe families share: ordering rules, table checks, solution snippets."""
from __future__ import annotations

from .base import Artifact, Check, Table
from .formats import py_loader

FMT_EXT = {"csv": "csv", "tsv": "tsv", "json": "json", "jsonl": "jsonl"}
FMT_WORDS = {"csv": "a CSV file with a header row", "tsv": "a tab-separated file with a header row",
             "json": "a JSON array of objects", "jsonl": "JSON Lines (one object per line)"}


def order_rows(rows, columns: list[str], primary: str | None = None, descending: bool = False,
               all_columns: tuple[str, ...] = ()) -> list:
    """Sort by `primary` (optionally descending), ties by the other `columns` ascending."""
    idx = {c: i for i, c in enumerate(all_columns)}
    rest = [c for c in columns if c != primary]

    def key(r):
        head = []
        if primary is not None:
            v = r[idx[primary]]
            head = [(-v if descending else v)] if isinstance(v, (int, float)) else [v]
        return tuple(head + [r[idx[c]] for c in rest])
    if primary is not None and descending and not isinstance(rows[0][idx[primary]], (int, float)):
        # Text sorted descending: sort ascending on the rest first, then stably on the primary.
        rows = sorted(rows, key=lambda r: tuple(r[idx[c]] for c in rest))
        return sorted(rows, key=lambda r: r[idx[primary]], reverse=True)
    return sorted(rows, key=key)


def tie_columns(table: Table, primary: str | None, candidates: list[str]) -> list[str]:
    """Fewest of `candidates` (in order) that make the ordering total after `primary`."""
    chosen: list[str] = []
    idx = {c: i for i, c in enumerate(table.columns)}
    keys = [primary] if primary else []
    for c in candidates:
        if c == primary:
            continue
        seen = {tuple(r[idx[k]] for k in keys + chosen) for r in table.rows}
        if len(seen) == len(table.rows):
            break
        chosen.append(c)
    return chosen


def tie_words(cols: list[str]) -> str:
    if not cols:
        return ""
    return ", breaking ties by " + ", then ".join(f"`{c}` ascending" for c in cols)


def rows_literal(table: Table, columns: list[str], rows=None) -> list[list]:
    idx = [table.columns.index(c) for c in columns]
    return [[r[i] for i in idx] for r in (rows if rows is not None else table.rows)]


def t_header(path: str, fmt: str, columns) -> str:
    return (f"cols, rows = read_table({path!r}, {fmt!r})\n"
            f"assert cols == {list(columns)!r}, f\"columns are {{cols}}\"")


def t_rows(path: str, fmt: str, columns, expected, ordered: bool, tol: float = 0.011) -> str:
    return (f"cols, rows = read_table({path!r}, {fmt!r})\n"
            f"check_rows(rows, {list(columns)!r}, {expected!r}, ordered={ordered}, tol={tol})")


def t_json_numbers(path: str, fmt: str, numeric: list[str]) -> str:
    return (f"cols, rows = read_table({path!r}, {fmt!r})\n"
            f"assert rows, 'no objects'\n"
            f"for r in rows:\n"
            f"    for c in {numeric!r}:\n"
            f"        assert isinstance(r[c], (int, float)) and not isinstance(r[c], bool), f\"{{c}}={{r[c]!r}} is not a number\"\n"
            f"    for c in [k for k in r if k not in {numeric!r}]:\n"
            f"        assert isinstance(r[c], str), f\"{{c}}={{r[c]!r}} is not a string\"")


def table_output_checks(out: Artifact, src_phrase: str, ordered_by: str, expected_sorted: list[list],
                        content_sentence: str) -> list[Check]:
    """The usual trio for a table result: content, columns, order."""
    t = out.table
    cols = list(t.columns)
    checks = [Check(content_sentence, [("rows", t_rows(out.path, out.fmt, cols, expected_sorted, False))]),
              Check(f"Use exactly the columns {', '.join(f'`{c}`' for c in cols)} in this order in `{out.path}`.",
                    [("columns", t_header(out.path, out.fmt, cols))]),
              Check(f"Order the rows of `{out.path}` {ordered_by}.",
                    [("order", t_rows(out.path, out.fmt, cols, expected_sorted, True))])]
    if out.fmt in ("json", "jsonl") and t.numeric():
        checks.append(Check(f"Write the values of {', '.join(f'`{c}`' for c in t.numeric())} in `{out.path}` as JSON "
                            f"numbers and all other values as JSON strings.",
                            [("json_types", t_json_numbers(out.path, out.fmt, t.numeric()))]))
    return checks


PY_WRITER = '''def write(path, fmt, cols, rows):
    import os
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fmt in ("csv", "tsv"):
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, delimiter="," if fmt == "csv" else "\\t", lineterminator="\\n")
            w.writerow(cols)
            w.writerows([[r[c] for c in cols] for r in rows])
    elif fmt == "json":
        with open(path, "w") as fh:
            json.dump([{c: r[c] for c in cols} for r in rows], fh, indent=2)
            fh.write("\\n")
    else:
        with open(path, "w") as fh:
            fh.writelines(json.dumps({c: r[c] for c in cols}) + "\\n" for r in rows)
'''


def py_block(src: Artifact | None, body: str) -> str:
    """A python3 heredoc with the writer and, for a table input, the schema-aware loader defined."""
    head = py_loader(src) if src is not None else "import csv, json\n"
    return f"python3 - <<'PY'\n{head}{PY_WRITER}{body.strip()}\nPY"

