"""Small bridging steps the composer inserts when a category's families cannot read what the
previous step produced (a table where lines are wanted, a folder where a list is wanted...).
Their requirements join the consuming step; they write under /app/work."""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, register, stem_of
from .data import clean_lines, tally_fragment
from .formats import py_loader


def _column_values_accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and len(a.table.rows) >= 1


def _column_choice(a: Artifact) -> str:
    t = a.table
    texts = [c for c, ty in zip(t.columns, t.types) if ty == "str"]
    groups = [c for c in t.groupable(2, 40) if t.type_of(c) == "str"]
    if groups:
        return groups[0]
    return t.key_column() or (texts or list(t.columns))[0]


def _column_values_build(ctx: StepContext, a: Artifact) -> Fragment:
    col = _column_choice(a)
    vals = sorted({str(v) for v in a.table.col(col)})
    path = ctx.claim(f"/app/work/{stem_of(a)}_{col}.txt")
    out = Artifact("lines", path, fmt="txt", lines=tuple(vals), label=f"{a.label}_{col}")
    checks = [Check(f"Write the distinct values of column `{col}` of `{a.path}` to `{path}`, one per line, sorted.",
                    [("values", f"assert read_lines({path!r}) == {vals!r}")])]
    solve = (f"mkdir -p /app/work\npython3 - <<'PY'\n{py_loader(a)}"
             f"vals = sorted({{str(r[{col!r}]) for r in load({a.path!r})}})\n"
             f"open({path!r}, 'w').write(''.join(v + '\\n' for v in vals))\nPY")
    return Fragment("List column values", "", checks, solve, out)


register(Recipe("column-values", "data-processing", "List a column's values", _column_values_accepts,
                lambda ctx: None, _column_values_build), adapter=True)


register(Recipe("line-tally", "data-processing", "Count distinct lines", clean_lines, lambda ctx: None,
                lambda ctx, a: tally_fragment(ctx, a, "/app/work")), adapter=True)


def _listing_build(ctx: StepContext, a: Artifact) -> Fragment:
    names = a.names()
    path = ctx.claim(f"/app/work/{stem_of(a)}_files.txt")
    out = Artifact("lines", path, fmt="txt", lines=tuple(names), label=f"{a.label}_files")
    checks = [Check(f"Write the paths of all regular files under `{a.path}`, relative to that folder, to `{path}`, one "
                    f"per line, sorted.", [("listing", f"assert read_lines({path!r}) == {names!r}")])]
    solve = f"mkdir -p /app/work\n(cd {a.path} && find . -type f | sed 's|^\\./||' | sort) > {path}"
    return Fragment("List the files", "", checks, solve, out)


register(Recipe("file-listing", "file-operations", "List files", lambda a: a.kind == "tree", lambda ctx: None,
                _listing_build), adapter=True)


def unpack_solve(a: Artifact, dest: str) -> str:
    if a.fmt == "zip":
        return f"mkdir -p {dest}\nunzip -q -o {a.path} -d {dest}"
    flag = {"tar.gz": "z", "tgz": "z", "tar.xz": "J", "tar.bz2": "j", "tar": ""}[a.fmt]
    return f"mkdir -p {dest}\ntar -x{flag}f {a.path} -C {dest}"


def _unpack_build(ctx: StepContext, a: Artifact) -> Fragment:
    dest = ctx.claim(f"/app/work/{stem_of(a)}")
    names = a.names()
    out = Artifact("tree", dest, fmt="dir", files=a.files, exact=a.exact, label=a.label)
    checks = [Check(f"Extract `{a.path}` into the folder `{dest}`.",
                    [("extracted", f"assert files_under({dest!r}) == {names!r}")])]
    return Fragment("Extract the archive", "", checks, unpack_solve(a, dest), out)


def _members_build(ctx: StepContext, a: Artifact) -> Fragment:
    names = a.names()
    path = ctx.claim(f"/app/work/{stem_of(a)}_members.txt")
    out = Artifact("lines", path, fmt="txt", lines=tuple(names), label=f"{a.label}_members")
    checks = [Check(f"Write the paths of the regular files stored in `{a.path}` to `{path}`, one per line, sorted.",
                    [("members", f"assert read_lines({path!r}) == {names!r}")])]
    lister = f"unzip -Z1 {a.path}" if a.fmt == "zip" else f"tar -tf {a.path}"
    solve = f"mkdir -p /app/work\n{lister} | grep -v '/$' | sed 's|^\\./||' | sort > {path}"
    return Fragment("List the archive", "", checks, solve, out)


register(Recipe("archive-listing", "archives-compression", "List archive members", lambda a: a.kind == "archive",
                lambda ctx: None, _members_build), adapter=True)


def _lengths_build(ctx: StepContext, a: Artifact) -> Fragment:
    rows = tuple((x, len(x)) for x in a.lines)
    path = ctx.claim(f"/app/work/{stem_of(a)}_lengths.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("line", "length"), ("str", "int"), rows),
                   label=f"{a.label}_lengths")
    checks = [Check(f"Write `{path}` as a CSV file with the header `line,length` and, in the order of `{a.path}`, one row "
                    f"per line giving the line and its length in characters.",
                    [("lengths", f"cols, rows = read_table({path!r})\nassert cols == ['line', 'length']\n"
                                 f"check_rows(rows, cols, {[list(r) for r in rows]!r})")])]
    solve = f"mkdir -p /app/work\n{{ echo 'line,length'; awk '{{print $0 \",\" length($0)}}' {a.path}; }} > {path}"
    return Fragment("Measure the lines", "", checks, solve, out)


register(Recipe("line-lengths", "text-processing", "Measure line lengths", clean_lines, lambda ctx: None,
                _lengths_build), adapter=True)


register(Recipe("archive-unpack", "archives-compression", "Extract an archive", lambda a: a.kind == "archive",
                lambda ctx: None, _unpack_build), adapter=True)
