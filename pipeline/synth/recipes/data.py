"""data-processing families: filter and sort a table, group and aggregate, convert formats."""
from __future__ import annotations

from collections import Counter

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import (FMT_WORDS, order_rows, py_block, rows_literal, t_header, t_rows, table_output_checks,
                     tie_columns, tie_words)
from .formats import fmt_value
from .seeds import seed_records


def _records(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and len(a.table.rows) >= 4


# --- table-filter-sort ------------------------------------------------------------------------

def _spread(t: Table) -> list[str]:
    """Numeric columns with enough distinct values to put a threshold between them."""
    return [c for c in t.numeric() if len(set(t.col(c))) >= 3]


def _filter_accepts(a: Artifact) -> bool:
    return _records(a) and bool(_spread(a.table))


OPS = {">=": "at least", ">": "greater than", "<": "less than", "<=": "at most"}


def _filter_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    num = rng.choice(_spread(t))
    vals = sorted(set(t.col(num)))
    op = rng.choice(sorted(OPS))
    thr = vals[max(1, min(len(vals) - 2, int(len(vals) * rng.uniform(0.3, 0.6))))]
    i_num = t.columns.index(num)
    test = {">=": lambda v: v >= thr, ">": lambda v: v > thr, "<": lambda v: v < thr, "<=": lambda v: v <= thr}[op]
    rows = [r for r in t.rows if test(r[i_num])]
    eq = None
    groups = [g for g in t.groupable() if t.type_of(g) == "str"]
    if groups and rng.random() < 0.5:
        g = rng.choice(groups)
        gi = t.columns.index(g)
        common = Counter(r[gi] for r in rows).most_common()
        if common and common[0][1] >= 2:
            eq = (g, common[0][0])
            rows = [r for r in rows if r[gi] == eq[1]]
    # Keep 3-4 columns in their original order; the filtered numeric column always stays.
    others = [c for c in t.columns if c != num]
    keep_set = set(rng.sample(others, min(len(others), rng.randint(2, 3)))) | {num}
    key = t.key_column()
    if key:
        keep_set.add(key)
    keep = [c for c in t.columns if c in keep_set]
    out_fmt = "csv" if a.fmt in ("csv", "tsv") else "json"
    path = ctx.claim(f"/app/out/{stem_of(a)}_filtered.{out_fmt}")
    sub = Table(tuple(keep), tuple(t.type_of(c) for c in keep), tuple(tuple(r[t.columns.index(c)] for c in keep) for r in rows))
    ties = tie_columns(sub, num, [c for c in keep if c != num])
    ordered = order_rows(list(sub.rows), [num] + ties, num, True, sub.columns)
    sub = Table(sub.columns, sub.types, tuple(ordered))
    out = Artifact("records", path, fmt=out_fmt, table=sub, label=f"{a.label}_filtered")
    cond = f"whose `{num}` is {OPS[op]} {fmt_value(thr)}" + (f" and whose `{eq[0]}` is `{eq[1]}`" if eq else "")
    content = f"Write `{path}` as {FMT_WORDS[out_fmt]} holding exactly the rows of `{a.path}` {cond}."
    checks = table_output_checks(out, a.path, f"by `{num}` from largest to smallest{tie_words(ties)}",
                                 rows_literal(sub, keep), content)

    if a.fmt in ("csv", "tsv"):
        sep = "," if a.fmt == "csv" else "\\t"
        pos = {c: i + 1 for i, c in enumerate(t.columns)}
        cond_awk = f"${pos[num]} {op} {fmt_value(thr)}" + (f' && ${pos[eq[0]]} == "{eq[1]}"' if eq else "")
        fields = ",".join(f"${pos[c]}" for c in keep)
        opos = {c: i + 1 for i, c in enumerate(keep)}
        sort_keys = f"-k{opos[num]},{opos[num]}gr " + " ".join(
            f"-k{opos[c]},{opos[c]}{'g' if sub.type_of(c) != 'str' else ''}" for c in ties)
        solve = (f"mkdir -p /app/out\n"
                 f"{{ echo '{','.join(keep)}'; tail -n +2 {a.path} | awk -F'{sep}' -v OFS=',' '{cond_awk} {{print {fields}}}' "
                 f"| sort -t',' {sort_keys.strip()}; }} > {path}")
    else:
        jcond = f".{num} {op} {fmt_value(thr)}" + (f' and .{eq[0]} == "{eq[1]}"' if eq else "")
        slurp = "-s " if a.fmt == "jsonl" else ""
        src = "." if a.fmt == "jsonl" else "."
        solve = (f"mkdir -p /app/out\n"
                 f"jq {slurp}'[{src}[] | select({jcond}) | {{{', '.join(keep)}}}] "
                 f"| sort_by([-.{num}{''.join(', .' + c for c in ties)}])' {a.path} > {path}")
    title = ctx.rng.choice(["Filter and sort the table", "Select and order rows", "Narrow the table down"])
    intro = ctx.rng.choice(["The input for this step is {d}.", "This step works on {d}.", "Start from {d}.",
                            "Only some rows of {d} matter here."]).format(d=describe(a))
    return Fragment(title, intro, checks, solve, out)


register(Recipe("table-filter-sort", "data-processing", "Filter and sort a table", _filter_accepts,
                lambda ctx: seed_records(ctx), _filter_build, weight=1, consumes="records"))


# --- group-aggregate ----------------------------------------------------------------------------

def _agg_groups(t: Table) -> list[str]:
    return [g for g in t.groupable() if g != "rows"]        # "rows" is an output column


def _agg_accepts(a: Artifact) -> bool:
    return _records(a) and bool(_agg_groups(a.table)) and any(
        n for n in a.table.numeric() if n not in a.table.groupable())


def _agg_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    g = rng.choice(_agg_groups(t))
    num = rng.choice([n for n in t.numeric() if n not in t.groupable()])
    gi, ni = t.columns.index(g), t.columns.index(num)
    groups: dict = {}
    for r in t.rows:
        groups.setdefault(r[gi], []).append(r[ni])
    variant = rng.choice(["sum", "minmax"])
    if variant == "sum":
        cols = (g, "rows", f"total_{num}", f"avg_{num}")
        types = (t.type_of(g), "int", t.type_of(num) if t.type_of(num) == "int" else "float", "float")
        rows = [(k, len(v), round(sum(v), 2), round(sum(v) / len(v), 2)) for k, v in groups.items()]
        what = (f"the number of rows as `rows`, the sum of `{num}` as `total_{num}` and the mean of `{num}` as "
                f"`avg_{num}`")
    else:
        cols = (g, "rows", f"min_{num}", f"max_{num}")
        types = (t.type_of(g), "int", t.type_of(num), t.type_of(num))
        rows = [(k, len(v), min(v), max(v)) for k, v in groups.items()]
        what = f"the number of rows as `rows` and the smallest and largest `{num}` as `min_{num}` and `max_{num}`"
    primary = cols[2] if variant == "sum" else "rows"
    rows = order_rows(rows, [primary, g], primary, True, cols)
    out_fmt = rng.choice(["csv", "json"])
    path = ctx.claim(f"/app/out/{stem_of(a)}_by_{g}.{out_fmt}")
    out = Artifact("records", path, fmt=out_fmt, table=Table(cols, types, tuple(rows)), label=f"{a.label}_by_{g}")
    content = (f"Write `{path}` as {FMT_WORDS[out_fmt]} with one row per distinct `{g}` in `{a.path}` giving "
               f"{what}, with decimals rounded to 2 places.")
    checks = table_output_checks(out, a.path, f"by `{primary}` from largest to smallest, breaking ties by `{g}` ascending",
                                 [list(r) for r in rows], content)
    agg = (f"'rows': len(v), 'total_{num}': round(sum(v), 2), 'avg_{num}': round(sum(v) / len(v), 2)"
           if variant == "sum" else f"'rows': len(v), 'min_{num}': min(v), 'max_{num}': max(v)")
    body = f'''
groups = {{}}
for r in load({a.path!r}):
    groups.setdefault(r[{g!r}], []).append(r[{num!r}])
out = [{{{g!r}: k, {agg}}} for k, v in groups.items()]
out.sort(key=lambda r: (-r[{primary!r}], r[{g!r}]))
write({path!r}, {out_fmt!r}, {list(cols)!r}, out)
'''
    title = ctx.rng.choice([f"Aggregate by {g}", f"Summarise per {g}", f"Group the rows by {g}"])
    intro = ctx.rng.choice(["Summarise {d} per `{g}`.", "One line per `{g}` of {d} is wanted.",
                            "Roll {d} up by `{g}`."]).format(d=describe(a), g=g)
    return Fragment(title, intro, checks, py_block(a, body), out)


register(Recipe("group-aggregate", "data-processing", "Group and aggregate", _agg_accepts,
                lambda ctx: seed_records(ctx), _agg_build, weight=1, consumes="records"))


# --- json-convert (jq) -----------------------------------------------------------------------------

def _convert_build(ctx: StepContext, a: Artifact) -> Fragment:
    t = a.table
    to_json = a.fmt in ("csv", "tsv")
    key = t.key_column() or t.columns[0]
    ties = tie_columns(t, key, list(t.columns))
    rows = order_rows(list(t.rows), [key] + ties, key, False, t.columns)
    out_fmt = ctx.rng.choice(["json", "jsonl"]) if to_json else "csv"
    path = ctx.claim(f"/app/out/{stem_of(a)}.{out_fmt}")
    out = Artifact("records", path, fmt=out_fmt, table=Table(t.columns, t.types, tuple(rows)), label=a.label)
    order = f"by `{key}` ascending{tie_words(ties)}"
    names = "keys" if to_json else "the header"
    content = ctx.rng.choice([
        f"Convert every row of `{a.path}` into `{path}` as {FMT_WORDS[out_fmt]}, using the column names as {names}.",
        f"Rewrite each row of `{a.path}` as {FMT_WORDS[out_fmt]} in `{path}`, with the column names as {names}.",
        f"Turn `{a.path}` into `{path}`, {FMT_WORDS[out_fmt]} holding every row, the column names serving as {names}."])
    checks = table_output_checks(out, a.path, order, [list(r) for r in rows], content)
    sortexp = "[" + ", ".join(f".{c}" for c in [key] + ties) + "]"
    if to_json:
        sep = "," if a.fmt == "csv" else "\\t"
        nums = "[" + ", ".join(f'"{c}"' for c in t.numeric()) + "]"
        emit = ".[]" if out_fmt == "jsonl" else "."
        solve = (f"mkdir -p /app/out\n"
                 f"jq -R -s {'-c ' if out_fmt == 'jsonl' else ''}--argjson num '{nums}' "
                 f"'split(\"\\n\") | map(select(length > 0) | split(\"{sep}\")) | .[0] as $h | .[1:] "
                 f"| map([$h, .] | transpose | map(.[0] as $k | {{($k): (if ($num | index([$k])) then (.[1] | tonumber) "
                 f"else .[1] end)}}) | add) | sort_by({sortexp}) | {emit}' {a.path} > {path}")
    else:
        slurp = "-s " if a.fmt == "jsonl" else ""
        cols = ", ".join(f'"{c}"' for c in t.columns)
        solve = (f"mkdir -p /app/out\n"
                 f"jq -r {slurp}'[{cols}] as $c | ($c | join(\",\")), (sort_by({sortexp})[] | [.[$c[]] | tostring] "
                 f"| join(\",\"))' {a.path} > {path}")
    title = ctx.rng.choice(["Convert the table to JSON with jq", "Turn the table into JSON", "Reshape the rows as JSON"]
                           if to_json else ["Convert the JSON records to CSV", "Flatten the JSON into CSV"])
    intro = ctx.rng.choice(["Reshape {d} into another format.", "The next consumer cannot read {d} as it is.",
                            "{D} needs another format.", ""]).format(d=describe(a), D=describe(a)[0].upper() + describe(a)[1:])
    return Fragment(title, intro, checks, solve, out)


register(Recipe("json-convert", "data-processing", "Convert between CSV and JSON",
                lambda a: a.kind == "records" and a.exact and len(a.table.rows) >= 1,
                lambda ctx: seed_records(ctx), _convert_build, weight=1, consumes="records", kinds=("json-document", "jsonl-records")))


# --- lines-tally ------------------------------------------------------------------------------------

def clean_lines(a: Artifact) -> bool:
    return (a.kind == "lines" and a.exact and len(a.lines) >= 1
            and all(x == x.strip() and x and "," not in x and '"' not in x for x in a.lines))


def tally_fragment(ctx: StepContext, a: Artifact, out_dir: str = "/app/out") -> Fragment:
    counts = Counter(a.lines)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    path = ctx.claim(f"{out_dir}/{stem_of(a)}_counts.csv")
    table = Table(("value", "count"), ("str", "int"), tuple(rows))
    out = Artifact("records", path, fmt="csv", table=table, label=f"{a.label}_counts")
    content = (f"Write `{path}` as a CSV file with the header `value,count` and one row per distinct line of "
               f"`{a.path}` with the number of times that line occurs.")
    checks = [Check(content, [("tally", t_header(path, "csv", ["value", "count"]) + "\n" +
                               f"check_rows(rows, ['value', 'count'], {[list(r) for r in rows]!r}, ordered=False)")]),
              Check(f"Order the rows of `{path}` by `count` from largest to smallest, breaking ties by `value` ascending.",
                    [("tally_order", t_rows(path, "csv", ["value", "count"], [list(r) for r in rows], True))])]
    solve = (f"mkdir -p {out_dir}\n{{ echo 'value,count'; sort {a.path} | uniq -c | sort -k1,1nr -k2 "
             f"| awk '{{n=$1; sub(/^ *[0-9]+ /, \"\"); print $0 \",\" n}}'; }} > {path}")
    intro = ctx.rng.choice(["Count how often each line of {d} occurs.", "Some lines of {d} repeat; tally them.",
                            "How often does each line of {d} appear?"]).format(d=describe(a))
    return Fragment(ctx.rng.choice(["Count distinct lines", "Tally the lines"]), intro, checks, solve, out)


def _tally_seed(ctx: StepContext) -> Artifact:
    from .logs import seed_status_lines
    return seed_status_lines(ctx)


register(Recipe("lines-tally", "data-processing", "Tally repeated lines",
                lambda a: clean_lines(a) and 3 <= len(a.lines) and len(set(a.lines)) < len(a.lines), _tally_seed,
                tally_fragment, weight=1, consumes="lines"))
