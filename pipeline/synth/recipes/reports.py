"""report family: a Markdown summary report computed from records (counts, totals, a per-group
table, the top N). Its tests read the numbers out of the report, not its bytes: any heading
style, bold labels or column padding an agent chooses passes when the figures are right."""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, register, stem_of
from .common import py_block
from .documents import worded
from .seeds import seed_records

# Test-side readers of a Markdown report (prepended to the report's test bodies).
MD_READERS = r'''def md_lines(path):
    # bold, italics-by-asterisk and code marks are presentation: drop them
    return [re.sub(r"[*`]", "", l).rstrip() for l in read_text(path).splitlines()]
def md_value(path, label):
    for l in md_lines(path):
        m = re.match(r"\s*(?:[-+]\s+)?" + re.escape(label) + r"\s*:\s*(-?[0-9][0-9.,]*)\s*$", l, re.I)
        if m:
            return float(m.group(1).replace(",", ""))
    raise AssertionError(f"no line '{label}: <number>' in {path}")
def md_table(path, heading):
    lines = md_lines(path)
    at = [i for i, l in enumerate(lines) if re.match(r"\s*##\s+" + re.escape(heading) + r"\s*#*\s*$", l, re.I)]
    assert at, f"no level-2 heading {heading!r} in {path}"
    rows = []
    for l in lines[at[0] + 1:]:
        s = l.strip()
        if s.startswith("#"):
            break
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
        elif rows and s:
            break
    assert rows, f"no Markdown table under the heading {heading!r} in {path}"
    return rows[0], rows[1:]
'''


def _money(v: float) -> float:
    return round(v + 1e-9, 2)


# Numbers that place a record rather than measure it: summing them means nothing.
POSITIONS = ("line", "level", "position", "index", "rank", "row")


def _shape_options(a: Artifact) -> list[tuple[str, str | None, str | None]]:
    """(group column, measure column or None: counts only, unique name column or None: no top N)."""
    t = a.table
    groups = t.groupable(2, 8)
    nums = [c for c in t.numeric() if len(set(t.col(c))) >= 2 and c.lower() not in POSITIONS]
    names = [c for c, ty in zip(t.columns, t.types) if ty == "str" and len(set(t.col(c))) == len(t.rows)]
    return [(g, v, k if v else None) for g in groups for v in (nums or [None]) for k in (names[:1] or [None])
            if g != v and g.lower() not in POSITIONS]


def _accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and 3 <= len(a.table.rows) <= 200 and bool(_shape_options(a))


def _build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    group, num, name = rng.choice(_shape_options(a))
    gi = t.columns.index(group)
    ni = t.columns.index(num) if num else None
    by: dict = {}
    for r in t.rows:
        c, s = by.get(r[gi], (0, 0))
        by[r[gi]] = (c + 1, s + (r[ni] if num else 0))
    if num:
        per_group = sorted(((g, c, _money(s)) for g, (c, s) in by.items()), key=lambda x: (-x[2], str(x[0])))
    else:
        per_group = sorted(((g, c) for g, (c, _) in by.items()), key=lambda x: (-x[1], str(x[0])))
    folder = ctx.claim(rng.choice(["/app/reports", "/app/report", "/app/summary"]))
    path = f"{folder}/{stem_of(a)}_{rng.choice(['summary', 'report', 'digest'])}.md"
    by_heading, rec_label = f"By {group}", rng.choice(["Records", "Rows"])
    # the report's own title: the period it covers (and what makes two reports on one table differ)
    what = a.label.replace("_", " ")
    title = rng.choice([f"Week {rng.randint(1, 52)} {what} summary", f"{what.capitalize()} report for "
                        f"{rng.choice(['January', 'March', 'June', 'September', 'November'])} {rng.randint(2021, 2025)}",
                        f"Quarter {rng.randint(1, 4)} review of {what}"])
    group_cols = [group, "records"] + ([f"total_{num}"] if num else [])
    sums = f" and `total_{num}` (the sum of `{num}`, rounded to two decimals)" if num else ""
    key = f"total_{num}" if num else "records"
    checks = [
        Check(f"Write `{path}` as a Markdown report about `{a.path}` that starts with the level-1 heading `{title}`.",
              [("title", f"{MD_READERS}first = [l for l in md_lines({path!r}) if l.strip()][0]\n"
                         f"assert re.match(r'#\\s+\\S', first), first\n"
                         f"assert ' '.join(first.lstrip('#').split()).lower() == {title.lower()!r}, first")]),
        Check(rng.choice([f"State the number of records of `{a.path}` in the report on its own line as "
                          f"`{rec_label}: <n>`.",
                          f"Give the record count of `{a.path}` as a line `{rec_label}: <n>` in the report."]),
              [("count", f"{MD_READERS}assert md_value({path!r}, {rec_label!r}) == {len(t.rows)}")]),
        Check(f"Under a level-2 heading `{by_heading}`, put a Markdown table with the columns `{group}`, `records` "
              f"(how many records have that `{group}`){sums} and one row per distinct `{group}`, ordered by `{key}` "
              f"descending, breaking ties by `{group}` ascending.",
              [("by_group", f"{MD_READERS}head, rows = md_table({path!r}, {by_heading!r})\n"
                            f"assert head == {group_cols!r}, head\n"
                            f"check_rows([dict(zip(head, r)) for r in rows], head, {[list(x) for x in per_group]!r})")]),
    ]
    extra = ""
    if num:
        total_label = f"Total {num}"
        checks.insert(2, Check(rng.choice([f"State the sum of `{num}` over all records on its own line as "
                                           f"`{total_label}: <value>`, rounded to two decimals.",
                                           f"Add a line `{total_label}: <value>` holding the sum of `{num}` over every "
                                           f"record, rounded to two decimals."]),
                               [("total", f"{MD_READERS}assert abs(md_value({path!r}, {total_label!r}) - "
                                          f"{_money(sum(t.col(num)))}) <= 0.011")]))
        extra += f'out.insert(3, f"{total_label}: {{sum(r[{num!r}] for r in rows):.2f}}")\n'
    if name:
        ki = t.columns.index(name)
        ranked = sorted(t.rows, key=lambda r: (-r[ni], r[ki]))
        # a top N whose last place is not shared, so "the N largest" has one answer
        n = next((k for k in rng.sample([3, 4, 5], 3) if len(ranked) > k and ranked[k - 1][ni] != ranked[k][ni]), 3)
        top_heading = f"Top {n} by {num}"
        checks.append(Check(f"Under a level-2 heading `{top_heading}`, put a Markdown table with the columns `{name}` "
                            f"and `{num}` listing the {n} records with the largest `{num}`, largest first.",
                            [("top", f"{MD_READERS}head, rows = md_table({path!r}, {top_heading!r})\n"
                                     f"assert head == {[name, num]!r}, head\n"
                                     f"check_rows([dict(zip(head, r)) for r in rows], head, "
                                     f"{[[r[ki], r[ni]] for r in ranked[:n]]!r})")]))
        extra += f"""top = sorted(rows, key=lambda r: (-r[{num!r}], r[{name!r}]))[:{n}]
out += ["", "## {top_heading}", "", "| {name} | {num} |", "|---|---:|"]
out += [f"| {{r[{name!r}]}} | {{fmt(r[{num!r}])}} |" for r in top]
"""
    measure = f"r[{num!r}]" if num else "0"
    body = f"""
rows = load({a.path!r})
groups = {{}}
for r in rows:
    c, s = groups.get(r[{group!r}], (0, 0))
    groups[r[{group!r}]] = (c + 1, s + {measure})
per = sorted(groups.items(), key=lambda kv: (-round(kv[1][{1 if num else 0}], 2), str(kv[0])))
fmt = lambda v: f"{{v:.2f}}" if isinstance(v, float) else str(v)
out = ["# {title}", "", f"{rec_label}: {{len(rows)}}", "", "## {by_heading}", "",
       "| {' | '.join(group_cols)} |", "|---|---:|{'---:|' if num else ''}"]
out += [f"| {{g}} | {{c}} |{' {s:.2f} |' if num else ''}" for g, (c, s) in per]
{extra}import os
os.makedirs({folder!r}, exist_ok=True)
open({path!r}, "w").write("\\n".join(out) + "\\n")
"""
    solve = py_block(a, body)
    report = f"# {title}\n".encode()
    out = Artifact("tree", folder, fmt="dir", files=((path[len(folder) + 1:], report),), exact=False, label="report")
    return worded(rng, "markdown-report", checks, solve, out, path=a.path)


register(Recipe("markdown-report", "data-processing", "Write a Markdown summary report", _accepts,
                lambda ctx: seed_records(ctx), _build, weight=2, consumes="records",
                kinds=("report", "markdown-doc")))
