"""html-page families: pull a data table out of an HTML page into records, and publish records
as an HTML table with proper escaping. Both parse HTML with python3's html.parser; the tests
parse what the agent wrote the same way, so any markup that means the same passes."""
from __future__ import annotations

import html

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, register, stem_of
from .documents import worded
from .common import FMT_EXT, FMT_WORDS, py_block, rows_literal, t_header, t_json_numbers, t_rows
from .formats import fmt_value
from .seeds import TABLES, seed_records

# Test-side reader: every table of a page as rows of (tag, attributes, text) cells, and the first <h1>'s text.
HTML_READERS = r'''from html.parser import HTMLParser
class Page(HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.h1, self.tables, self._cell, self._in_h1, self._foot = None, [], None, False, 0
        self.feed(text)
    def handle_starttag(self, tag, attrs):
        if tag == "h1" and self.h1 is None:
            self._in_h1, self.h1 = True, ""
        elif tag == "table":
            self.tables.append({"attrs": dict(attrs), "rows": []})
        elif tag == "tfoot":
            self._foot += 1
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append({"foot": self._foot > 0, "cells": []})
        elif tag in ("td", "th") and self.tables and self.tables[-1]["rows"]:
            self._cell = [tag, dict(attrs), ""]
            self.tables[-1]["rows"][-1]["cells"].append(self._cell)
    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False
        elif tag in ("td", "th"):
            self._cell = None
        elif tag == "tfoot":
            self._foot -= 1
    def handle_data(self, data):
        if self._in_h1:
            self.h1 += data
        if self._cell is not None:
            self._cell[2] += data
def page(path):
    return Page(read_text(path))
def text_of(cell):
    return " ".join(cell[2].split())
'''

# The solution's reader of one table (by id) in document order, footer rows left out.
PY_TABLE = r'''from html.parser import HTMLParser
class Grab(HTMLParser):
    def __init__(self, want):
        super().__init__(convert_charrefs=True)
        self.want, self.depth, self.rows, self.cell, self.foot = want, 0, [], None, False
    def handle_starttag(self, tag, attrs):
        if tag == "table":
            if self.depth or dict(attrs).get("id") == self.want:
                self.depth += 1
        elif self.depth == 1 and tag == "tfoot":
            self.foot = True
        elif self.depth == 1 and tag == "tr" and not self.foot:
            self.rows.append([])
        elif self.depth == 1 and tag in ("td", "th") and not self.foot:
            self.cell = []
    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif tag == "tfoot":
            self.foot = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
'''


def _cell_html(rng, v, col: str) -> str:
    """How a page's author wrote one value: entities, wrapping tags and stray whitespace."""
    text = html.escape(fmt_value(v), quote=False)
    if "@" in text and rng.random() < 0.7:
        text = text.replace("@", "&#64;")
    roll = rng.random()
    if roll < 0.2:
        return f"<span class=\"v\">{text}</span>"
    if roll < 0.3 and col.endswith("id"):
        return f"<a href=\"#{text}\">{text}</a>"
    if roll < 0.45:
        return f"\n      {text}\n    "
    return text


def seed_table_page(ctx: StepContext) -> Artifact:
    """An exported HTML report: a layout table and a data table (with a totals footer) in one page."""
    rng = ctx.rng
    dataset = rng.choice(sorted(TABLES))
    label, table = TABLES[dataset](rng, rng.randint(8, 16))
    tid = rng.choice([label, f"{label}-table", f"tbl-{label}", "data"])
    head = "".join(f"<th scope=\"col\">{c}</th>" for c in table.columns)
    body = "\n".join("    <tr>" + "".join(f"<td>{_cell_html(rng, v, c)}</td>" for v, c in zip(r, table.columns))
                     + "</tr>" for r in table.rows)
    nums = table.numeric()
    foot = "".join(f"<td>{fmt_value(round(sum(table.col(c)), 2)) if c in nums else ('Total' if i == 0 else '')}</td>"
                   for i, c in enumerate(table.columns))
    page = f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{label.capitalize()} &amp; totals</title></head>
<body>
<table class="layout"><tr><td><a href="index.html">Home</a></td><td>Exported {rng.choice(['Monday', 'Friday'])}</td></tr></table>
<h1>{label.capitalize()}</h1>
<!-- <table id="{tid}"><tr><td>an old draft</td></tr></table> -->
<table id="{tid}" class="report">
  <thead><tr>{head}</tr></thead>
  <tbody>
{body}
  </tbody>
  <tfoot><tr>{foot}</tr></tfoot>
</table>
<p>Questions: <a href="mailto:reports&#64;example.com">reports&#64;example.com</a></p>
</body>
</html>
"""
    path = ctx.claim(f"/app/input/{rng.choice(['export', 'site', 'pages'])}/{label}.html")
    ctx.add_input(path, page)
    return Artifact("lines", path, fmt="html", lines=(), table=table, flavor="html-table", exact=False,
                    label=label + "|" + tid)


def _extract_accepts(a: Artifact) -> bool:
    return a.kind == "lines" and a.flavor == "html-table" and a.table is not None


def _extract_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    label, _, tid = a.label.partition("|")
    fmt = rng.choice(["csv", "csv", "json", "jsonl"])
    path = ctx.claim(f"/app/out/{label}.{FMT_EXT[fmt]}")
    cols = list(t.columns)
    expected = rows_literal(t, cols)
    checks = [
        Check(f"Write `{path}` as {FMT_WORDS[fmt]} holding the body rows of the table whose `id` is `{tid}` in "
              f"`{a.path}`, one record per row, keyed by the table's header cells.",
              [("rows", t_rows(path, fmt, cols, expected, False))]),
        Check(rng.choice([f"Leave out the table's footer rows (inside `<tfoot>`) and every other table of the page.",
                          f"Take only the body of that table: no `<tfoot>` totals and nothing from other tables."]),
              [("no_footer", f"cols, rows = read_table({path!r}, {fmt!r})\nassert len(rows) == {len(expected)}, len(rows)\n"
                             f"assert not any(str(v).strip().lower() in ('total', 'home') for r in rows for v in r.values())")]),
        Check(f"Write each value as the cell's text with HTML entities decoded and runs of whitespace collapsed to "
              f"one space, without surrounding spaces.",
              [("decoded", f"cols, rows = read_table({path!r}, {fmt!r})\n"
                           f"assert not any('&#' in str(v) or '&amp;' in str(v) or str(v) != str(v).strip() for r in rows for v in r.values())\n"
                           f"check_rows(rows, {cols!r}, {expected!r}, ordered=False)")]),
        Check(f"Keep the table's row order and its column order in `{path}`.",
              [("order", f"{t_header(path, fmt, cols)}\ncheck_rows(rows, {cols!r}, {expected!r}, ordered=True)")]),
    ]
    if fmt in ("json", "jsonl") and t.numeric():
        checks.append(Check(f"Write the values of {', '.join(f'`{c}`' for c in t.numeric())} in `{path}` as JSON "
                            f"numbers and all other values as JSON strings.",
                            [("json_types", t_json_numbers(path, fmt, t.numeric()))]))
    body = f"""{PY_TABLE}
g = Grab({tid!r})
g.feed(open({a.path!r}, encoding="utf-8").read())
cols, data = g.rows[0], g.rows[1:]
rows = [{{c: conv(c, v) for c, v in zip(cols, r)}} for r in data]
write({path!r}, {fmt!r}, cols, rows)
"""
    typed = Artifact("records", a.path, fmt="csv", table=t)      # only for the loader's typing rule
    solve = "mkdir -p /app/out\n" + py_block(typed, body)
    out = Artifact("records", path, fmt=fmt, table=t, label=label)
    return worded(rng, "html-table-extract", checks, solve, out, path=a.path, label=label)


register(Recipe("html-table-extract", "data-processing", "Extract an HTML table into records", _extract_accepts,
                seed_table_page, _extract_build, weight=2, consumes="HTML page", kinds=("html-page",)))


# ---------------------------------------------------------------- records-html-table
def _publish_accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and 1 <= len(a.table.rows) <= 80


def _publish_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    # A heading with markup characters: written raw, they are read back as tags (in <title> they would not be).
    title = f"{a.label.replace('_', ' ').capitalize()} {rng.choice(['<draft>', '<v2> & co', 'R&D <v2>', '<Q3> & <Q4>'])}"
    folder = ctx.claim(rng.choice(["/app/site", "/app/public", "/app/www"]))
    path = f"{folder}/{stem_of(a)}.html"
    cols, nums = list(t.columns), t.numeric()
    expected = rows_literal(t, cols)
    klass = rng.choice(["num", "number", "numeric"])
    checks = [
        Check(f"Write `{path}` as an HTML document whose first `<h1>` heading reads exactly `{title}` in a browser "
              f"(escape the characters HTML gives a meaning to).",
              [("heading", f"{HTML_READERS}h1 = page({path!r}).h1\nassert h1 is not None, 'no <h1>'\n"
                           f"assert ' '.join(h1.split()) == {title!r}, h1")]),
        Check(f"Put one `<table>` in it whose first row holds the column names of `{a.path}` in order as `<th>` cells.",
              [("header", f"{HTML_READERS}p = page({path!r})\nassert len(p.tables) == 1, len(p.tables)\n"
                          f"head = p.tables[0]['rows'][0]['cells']\n"
                          f"assert [c[0] for c in head] == ['th'] * {len(cols)} and [text_of(c) for c in head] == {cols!r}")]),
        Check(rng.choice([f"Add one row of `<td>` cells per record of `{a.path}`, in the file's order, each cell "
                          f"holding the value as text.",
                          f"Follow the header with a row of `<td>` cells for every record of `{a.path}`, keeping "
                          f"the records' order."]),
              [("rows", f"{HTML_READERS}body = page({path!r}).tables[0]['rows'][1:]\n"
                        f"got = [dict(zip({cols!r}, [text_of(c) for c in r['cells']])) for r in body]\n"
                        f"check_rows(got, {cols!r}, {expected!r}, ordered=True)")]),
    ]
    if nums:
        idx = [cols.index(c) for c in nums]
        checks.append(Check(f"Give every `<td>` cell of the columns {', '.join(f'`{c}`' for c in nums)} the class "
                            f"`{klass}`, and no other cell.",
                            [("classes", f"{HTML_READERS}body = page({path!r}).tables[0]['rows'][1:]\nassert body\n"
                                         f"for r in body:\n"
                                         f"    marked = [i for i, c in enumerate(r['cells']) if {klass!r} in c[1].get('class', '').split()]\n"
                                         f"    assert marked == {idx!r}, marked")]))
    body = f"""import html, os
rows = load({a.path!r})
cols = {cols!r}
nums = {nums!r}
out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'><title>" + html.escape({title!r}) + "</title></head>", "<body>",
       "<h1>" + html.escape({title!r}) + "</h1>",
       "<table>", "<tr>" + "".join("<th>" + html.escape(c) + "</th>" for c in cols) + "</tr>"]
fmt = lambda v: (f"{{v:.2f}}".rstrip("0").rstrip(".") if v != int(v) else f"{{v:.1f}}") if isinstance(v, float) else str(v)
for r in rows:
    out.append("<tr>" + "".join(("<td class='{klass}'>" if c in nums else "<td>") + html.escape(fmt(r[c])) + "</td>"
                                for c in cols) + "</tr>")
out += ["</table>", "</body></html>"]
os.makedirs({folder!r}, exist_ok=True)
open({path!r}, "w").write("\\n".join(out) + "\\n")
"""
    solve = py_block(a, body)
    out = Artifact("tree", folder, fmt="dir", files=((path[len(folder) + 1:], b"<!DOCTYPE html>\n"),), exact=False,
                   label="site")
    return worded(rng, "records-html-table", checks, solve, out, what=describe(a))


register(Recipe("records-html-table", "data-processing", "Render records as an HTML table", _publish_accepts,
                lambda ctx: seed_records(ctx), _publish_build, weight=1, consumes="records", kinds=("html-page",)))
