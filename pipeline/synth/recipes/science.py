"""scientific-computing families: descriptive statistics per group, a least-squares line fit."""
from __future__ import annotations

import statistics

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import order_rows, py_block, table_output_checks, tie_columns, tie_words
from .formats import render_table
from .seeds import _ids, seed_records


def _stats_columns(a: Artifact) -> list[str]:
    t = a.table
    return [c for c in t.numeric() if len(set(t.col(c))) >= 2]


def _stats_accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and len(a.table.rows) >= 3 and bool(_stats_columns(a))


def _stats_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    num = rng.choice(_stats_columns(a))
    vals = t.col(num)
    groups = []
    for g in t.groupable():
        if g in (num, "n", "mean", "median", "stdev"):       # the output's own column names
            continue
        by: dict = {}
        for r in t.rows:
            by.setdefault(r[t.columns.index(g)], []).append(r[t.columns.index(num)])
        if sum(len(v) >= 2 for v in by.values()) >= 2:
            groups.append((g, by))
    summary = ctx.claim(f"/app/out/{stem_of(a)}_{num}_summary.json")
    mean, sd = statistics.fmean(vals), statistics.stdev(vals)
    expect = {"count": len(vals), "mean": round(mean, 2), "median": round(statistics.median(vals), 2),
              "stdev": round(sd, 2), "min": min(vals), "max": max(vals)}
    checks = [Check(f"Write `{summary}` as a JSON object with the keys `count`, `mean`, `median`, `stdev` (the sample "
                    f"standard deviation), `min` and `max` of the `{num}` values in `{a.path}`, rounded to 2 decimals.",
                    [("summary", f"data = json.loads(read_text({summary!r}))\nfor k, v in {expect!r}.items():\n"
                                 f"    assert same(data.get(k), v), (k, data.get(k), v)")])]
    # Outliers only when no value sits close to the 2-sigma boundary (an unstated rounding rule would decide it).
    key = t.key_column()
    z = [abs(v - mean) / sd if sd else 0 for v in vals]
    outliers = None
    if key and sd and all(abs(x - 2) > 0.02 for x in z):
        outliers = sorted(str(r[t.columns.index(key)]) for r, x in zip(t.rows, z) if x > 2)
        opath = ctx.claim(f"/app/out/{stem_of(a)}_{num}_outliers.txt")
        checks.append(Check(f"Write `{opath}` listing, sorted and one per line, the `{key}` of every row whose `{num}` is "
                            f"more than 2 sample standard deviations away from the mean (the file may be empty).",
                            [("outliers", f"assert read_lines({opath!r}) == {outliers!r}")]))
    out = None
    if groups:
        g, by = rng.choice(groups)
        rows = sorted((k, len(v), round(statistics.fmean(v), 2), round(statistics.median(v), 2), round(statistics.stdev(v), 2))
                      for k, v in by.items() if len(v) >= 2)
        path = ctx.claim(f"/app/out/{stem_of(a)}_{num}_by_{g}.csv")
        cols = (g, "n", "mean", "median", "stdev")
        out = Artifact("records", path, fmt="csv", table=Table(cols, (t.type_of(g), "int", "float", "float", "float"),
                                                               tuple(rows)), label=f"{a.label}_{num}_stats")
        checks += table_output_checks(out, a.path, f"by `{g}` ascending", [list(r) for r in rows],
                                      f"Write `{path}` as a CSV file with a header row and one row per `{g}` that has at "
                                      f"least two rows, giving their number `n` and the `mean`, `median` and sample "
                                      f"standard deviation `stdev` of `{num}`, rounded to 2 decimals.")
    body = f'''
import statistics
rows = load({a.path!r})
vals = [r[{num!r}] for r in rows]
mean, sd = statistics.fmean(vals), statistics.stdev(vals)
json.dump({{"count": len(vals), "mean": round(mean, 2), "median": round(statistics.median(vals), 2),
           "stdev": round(sd, 2), "min": min(vals), "max": max(vals)}}, open({summary!r}, "w"), indent=2)
'''
    if outliers is not None:
        body += (f"out = sorted(str(r[{key!r}]) for r in rows if abs(r[{num!r}] - mean) > 2 * sd)\n"
                 f"open({opath!r}, 'w').write(''.join(x + '\\n' for x in out))\n")
    if out is not None:
        body += f'''
by = {{}}
for r in rows:
    by.setdefault(r[{g!r}], []).append(r[{num!r}])
res = [{{{g!r}: k, "n": len(v), "mean": round(statistics.fmean(v), 2), "median": round(statistics.median(v), 2),
        "stdev": round(statistics.stdev(v), 2)}} for k, v in sorted(by.items()) if len(v) >= 2]
write({path!r}, "csv", {list(cols)!r}, res)
'''
    else:   # keep a table flowing to the next step: the summary as a one-row CSV
        path = ctx.claim(f"/app/out/{stem_of(a)}_{num}_summary.csv")
        cols = tuple(expect)
        out = Artifact("records", path, fmt="csv", table=Table(cols, ("int",) + ("float",) * 5, (tuple(expect.values()),)),
                       label=f"{a.label}_{num}_summary")
        checks.append(Check(f"Also write the same six values to `{path}` as a CSV file with the header "
                            f"`{','.join(cols)}` and one data row.",
                            [("summary_csv", f"cols, rows = read_table({path!r})\nassert cols == {list(cols)!r}\n"
                                             f"check_rows(rows, cols, {[list(expect.values())]!r})")]))
        body += f"write({path!r}, 'csv', {list(cols)!r}, [json.load(open({summary!r}))])\n"
    solve = "mkdir -p /app/out\n" + py_block(a, body)
    return Fragment(f"Describe the distribution of {num}", f"Compute descriptive statistics over {describe(a)}.",
                    checks, solve, out)


register(Recipe("column-statistics", "scientific-computing", "Descriptive statistics", _stats_accepts,
                lambda ctx: seed_records(ctx), _stats_build, weight=2, consumes="records with numbers"))


# --- linear-fit --------------------------------------------------------------------------------------

def _pairs(a: Artifact) -> list[tuple[str, str]]:
    t = a.table
    nums = [c for c in t.numeric() if len(set(t.col(c))) >= 3 and c not in ("predicted", "residual")]
    return [(x, y) for x in nums for y in nums if x != y]


def seed_calibration(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    slope, icpt = rng.uniform(0.5, 3), rng.uniform(-20, 20)
    ids = _ids(rng, "CAL", rng.randint(12, 20), 4)
    rows = []
    for i in ids:
        x = round(rng.uniform(0, 100), 2)
        rows.append((i, x, round(slope * x + icpt + rng.gauss(0, 3), 2)))
    table = Table(("sample_id", "raw_reading", "reference_value"), ("str", "float", "float"), tuple(rows))
    path = ctx.claim(f"/app/input/{rng.choice(['calibration', 'sensor_calibration', 'probe_calibration'])}.csv")
    ctx.add_input(path, render_table(table, "csv"))
    return Artifact("records", path, fmt="csv", table=table, label="calibration")


def _fit_build(ctx: StepContext, a: Artifact) -> Fragment:
    t = a.table
    pairs = _pairs(a)
    x, y = ("raw_reading", "reference_value") if ("raw_reading", "reference_value") in pairs else ctx.rng.choice(pairs)
    xs, ys = [float(v) for v in t.col(x)], [float(v) for v in t.col(y)]
    slope, icpt = statistics.linear_regression(xs, ys)
    r2 = statistics.correlation(xs, ys) ** 2
    fit = ctx.claim(f"/app/out/{stem_of(a)}_fit.json")
    expect = {"slope": round(slope, 4), "intercept": round(icpt, 4), "r_squared": round(r2, 4), "n": len(xs)}
    key = t.key_column()
    cols = ((key,) if key else ()) + (x, y, "predicted", "residual")
    rows = []
    for r, xv, yv in zip(t.rows, xs, ys):
        pred = slope * xv + icpt
        rows.append(((r[t.columns.index(key)],) if key else ()) + (r[t.columns.index(x)], r[t.columns.index(y)],
                                                                  round(pred, 2), round(yv - pred, 2)))
    path = ctx.claim(f"/app/out/{stem_of(a)}_residuals.csv")
    out = Artifact("records", path, fmt="csv", table=Table(cols, ((t.type_of(key),) if key else ()) +
                                                           (t.type_of(x), t.type_of(y), "float", "float"), tuple(rows)),
                   label=f"{a.label}_residuals")
    checks = [Check(f"Fit `{y}` as a straight line of `{x}` by ordinary least squares over all rows of `{a.path}` and "
                    f"write `{fit}` as a JSON object with the keys `slope`, `intercept`, `r_squared` (the coefficient "
                    f"of determination) and `n` (the number of points), rounded to 4 decimals.",
                    [("fit", f"data = json.loads(read_text({fit!r}))\nfor k, v in {expect!r}.items():\n"
                             f"    assert same(data.get(k), v, 0.002), (k, data.get(k), v)")])]
    checks += table_output_checks(out, a.path, f"in the same order as the rows of `{a.path}`", [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per input row giving "
                                  f"{'its `' + key + '`, ' if key else ''}`{x}`, `{y}`, the fitted value as `predicted` "
                                  f"and `{y}` minus the fitted value as `residual`, both rounded to 2 decimals.")
    checks = [c for c in checks if not c.sentence.startswith(f"Order the rows of `{path}`")] + [
        Check(f"Keep the rows of `{path}` in the same order as in `{a.path}`.",
              [("order", f"cols, rows = read_table({path!r})\ncheck_rows(rows, {list(cols)!r}, {[list(r) for r in rows]!r})")])]
    keep = ([key] if key else []) + [x, y]
    body = f'''
import statistics
rows = load({a.path!r})
xs, ys = [float(r[{x!r}]) for r in rows], [float(r[{y!r}]) for r in rows]
slope, icpt = statistics.linear_regression(xs, ys)
r2 = statistics.correlation(xs, ys) ** 2
json.dump({{"slope": round(slope, 4), "intercept": round(icpt, 4), "r_squared": round(r2, 4), "n": len(xs)}},
          open({fit!r}, "w"), indent=2)
out = []
for r, xv, yv in zip(rows, xs, ys):
    o = {{c: r[c] for c in {keep!r}}}
    o["predicted"] = round(slope * xv + icpt, 2)
    o["residual"] = round(yv - (slope * xv + icpt), 2)
    out.append(o)
write({path!r}, "csv", {list(cols)!r}, out)
'''
    return Fragment("Fit a calibration line", f"Model the relationship between two numeric columns of {describe(a)}.",
                    checks, "mkdir -p /app/out\n" + py_block(a, body), out)


register(Recipe("linear-fit", "scientific-computing", "Least-squares line fit",
                lambda a: a.kind == "records" and a.exact and len(a.table.rows) >= 5 and bool(_pairs(a)),
                seed_calibration, _fit_build, weight=2, consumes="records with two numeric columns"))


# --- pareto-share ---------------------------------------------------------------------------------

def _pareto_cols(a: Artifact) -> list[str]:
    t = a.table
    return [c for c in t.numeric() if all(v >= 0 for v in t.col(c)) and sum(t.col(c)) > 0
            and c not in ("share_pct", "cumulative_pct")]


def _pareto_build(ctx: StepContext, a: Artifact) -> Fragment:
    t = a.table
    num = ctx.rng.choice(_pareto_cols(a))
    key = t.key_column() or next((c for c, ty in zip(t.columns, t.types) if ty == "str"), None)
    ties = tie_columns(t, num, [c for c in t.columns if c != num])
    rows = order_rows(list(t.rows), [num] + ties, num, True, t.columns)
    keep = ([key] if key and key != num else []) + [num]
    total, run = sum(t.col(num)), 0.0
    out_rows = []
    for r in rows:
        v = r[t.columns.index(num)]
        run += v
        out_rows.append(tuple(r[t.columns.index(c)] for c in keep) + (round(100 * v / total, 2), round(100 * run / total, 2)))
    cols = tuple(keep) + ("share_pct", "cumulative_pct")
    path = ctx.claim(f"/app/out/{stem_of(a)}_{num}_pareto.csv")
    out = Artifact("records", path, fmt="csv", table=Table(cols, tuple(t.type_of(c) for c in keep) + ("float", "float"),
                                                           tuple(out_rows)), label=f"{a.label}_pareto")
    checks = table_output_checks(out, a.path, f"by `{num}` from largest to smallest{tie_words(ties)}",
                                 [list(r) for r in out_rows],
                                 f"Write `{path}` as a CSV file with a header row and one row per row of `{a.path}` "
                                 f"giving {'`' + key + '`, ' if len(keep) > 1 else ''}`{num}`, its percentage of the "
                                 f"column total as `share_pct` and the running total of those percentages in the "
                                 f"output order as `cumulative_pct`, both computed from unrounded values and rounded "
                                 f"to 2 decimals.")
    last = Check(f"Make the last `cumulative_pct` of `{path}` equal 100.",
                 [("closes", f"cols, rows = read_table({path!r})\nassert rows and abs(float(rows[-1]['cumulative_pct']) - 100) < 0.011")])
    sort_key = "(-r[" + repr(num) + "]" + "".join(f", r[{c!r}]" for c in ties) + ")"
    body = f'''
rows = load({a.path!r})
rows.sort(key=lambda r: {sort_key})
total = sum(r[{num!r}] for r in rows)
run, out = 0.0, []
for r in rows:
    run += r[{num!r}]
    o = {{c: r[c] for c in {keep!r}}}
    o["share_pct"] = round(100 * r[{num!r}] / total, 2)
    o["cumulative_pct"] = round(100 * run / total, 2)
    out.append(o)
write({path!r}, "csv", {list(cols)!r}, out)
'''
    return Fragment(f"Pareto analysis of {num}", f"Find which rows of {describe(a)} carry most of the `{num}` total.",
                    checks + [last], "mkdir -p /app/out\n" + py_block(a, body), out)


register(Recipe("pareto-share", "scientific-computing", "Pareto shares of a total",
                lambda a: a.kind == "records" and a.exact and len(a.table.rows) >= 1 and bool(_pareto_cols(a)),
                lambda ctx: seed_records(ctx), _pareto_build, weight=1, consumes="records with numbers"))
