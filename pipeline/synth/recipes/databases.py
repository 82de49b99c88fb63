"""databases families: load a table into SQLite and report with GROUP BY; join against a lookup
table shipped as an SQL dump."""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, slug, stem_of
from .common import order_rows, table_output_checks, tie_columns, tie_words
from .formats import py_loader
from .seeds import FIRST, LAST, seed_records

SQL_TYPES = {"int": "INTEGER", "float": "REAL", "str": "TEXT"}


JOIN_OUTPUT = ("owner", "total", "target", "status")


def _join_groups(t: Table) -> list[str]:
    return [g for g in t.groupable() if t.type_of(g) == "str" and g not in JOIN_OUTPUT]


def _fits(a: Artifact) -> bool:
    if a.kind != "records" or not a.exact or len(a.table.rows) < 4:
        return False
    t = a.table
    return bool(_join_groups(t)) and bool([n for n in t.numeric() if n not in t.groupable()])


def _pick(ctx: StepContext, t: Table) -> tuple[str, str]:
    g = ctx.rng.choice(_join_groups(t))
    num = ctx.rng.choice([n for n in t.numeric() if n not in t.groupable()])
    return g, num


def load_solve(a: Artifact, db: str, table: str) -> str:
    """Shell that creates `table` with typed columns in `db` and loads every row of `a`."""
    t = a.table
    ddl = f"CREATE TABLE {table} (" + ", ".join(f"{c} {SQL_TYPES[ty]}" for c, ty in zip(t.columns, t.types)) + ");"
    if a.fmt == "csv":
        return f'sqlite3 {db} "{ddl}"\nsqlite3 {db} ".import --csv --skip 1 {a.path} {table}"'
    marks = ", ".join("?" for _ in t.columns)
    return (f"sqlite3 {db} \"{ddl}\"\npython3 - <<'PY'\n{py_loader(a)}import sqlite3\n"
            f"con = sqlite3.connect({db!r})\n"
            f"con.executemany('INSERT INTO {table} VALUES ({marks})', [tuple(r[c] for c in {list(t.columns)!r}) for r in load({a.path!r})])\n"
            f"con.commit()\nPY")


def _schema_check(db: str, table: str, t: Table) -> Check:
    cols = [[c, SQL_TYPES[ty]] for c, ty in zip(t.columns, t.types)]
    by_type = {s: [c for c, s2 in cols if s2 == s] for s in ("INTEGER", "REAL", "TEXT")}
    named = [f"{' and '.join(f'`{c}`' for c in cs)} as {s}" for s, cs in by_type.items() if cs and s != "TEXT"]
    types = ", ".join(named + (["every other column as TEXT"] if by_type["TEXT"] and named else
                               ["every column as TEXT"] if by_type["TEXT"] else []))
    return Check(f"Create the table `{table}` in `{db}` with the input's column names in the same order, declaring "
                 f"{types}.",
                 [("schema", f"con = sqlite3.connect({db!r})\n"
                             f"cols = [[r[1], r[2].upper()] for r in con.execute('PRAGMA table_info({table})')]\n"
                             f"assert cols == {cols!r}, cols")])


def _loaded_check(db: str, table: str, a: Artifact, num: str) -> Check:
    t = a.table
    total = round(sum(t.col(num)), 2)
    return Check(f"Load every row of `{a.path}` into `{table}`, storing numbers as numbers.",
                 [("loaded", f"con = sqlite3.connect({db!r})\n"
                             f"n, s, ty = con.execute('SELECT COUNT(*), SUM({num}), typeof(MAX({num})) FROM {table}').fetchone()\n"
                             f"assert n == {len(t.rows)}\nassert abs(s - {total!r}) < 0.05\nassert ty in ('integer', 'real')")])


def _report_accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and len(a.table.rows) >= 1 and bool(a.table.numeric())


def _report_build(ctx: StepContext, a: Artifact) -> Fragment:
    t = a.table
    table = slug(a.label)
    db = ctx.claim(f"/app/out/{stem_of(a)}.db")
    # Grouping is natural on a text column (region, carrier...); a table of counts is ranked instead.
    gs = [g for g in t.groupable() if t.type_of(g) == "str" and g != "row_count"
          and any(n for n in t.numeric() if n != g)]
    if gs:
        g = ctx.rng.choice(gs)
        num = ctx.rng.choice([n for n in t.numeric() if n != g])
        checks, solve, out = _grouped(ctx, a, db, table, g, num)
        idx_col = g
    else:
        num = ctx.rng.choice(t.numeric())
        checks, solve, out = _ranked(ctx, a, db, table, num)
        idx_col = num
    idx = f"idx_{table}_{idx_col}"
    checks[2:2] = [Check(f"Create an index named `{idx}` on `{table}({idx_col})`.",
                         [("index", f"con = sqlite3.connect({db!r})\n"
                                    f"assert [r[2] for r in con.execute('PRAGMA index_info({idx})')] == [{idx_col!r}]")])]
    solve = (f"mkdir -p /app/out\nrm -f {db}\n{load_solve(a, db, table)}\n"
             f"sqlite3 {db} \"CREATE INDEX {idx} ON {table}({idx_col});\"\n{solve}")
    return Fragment("Load into SQLite and report", f"Load {describe(a)} into a SQLite database and query it.", checks,
                    solve, out)


def _grouped(ctx: StepContext, a: Artifact, db: str, table: str, g: str, num: str):
    t = a.table
    groups: dict = {}
    for r in t.rows:
        groups.setdefault(r[t.columns.index(g)], []).append(r[t.columns.index(num)])
    sizes = sorted({len(v) for v in groups.values()})
    k = sizes[1] if len(sizes) > 1 and ctx.rng.random() < 0.7 else 1
    rows = [(key, len(v), round(sum(v), 2), max(v)) for key, v in groups.items() if len(v) >= k]
    rows.sort(key=lambda r: (-r[2], r[0]))
    path = ctx.claim(f"/app/out/{stem_of(a)}_{g}_report.csv")
    cols = (g, "row_count", f"total_{num}", f"max_{num}")
    out = Artifact("records", path, fmt="csv", table=Table(cols, (t.type_of(g), "int", "float", t.type_of(num)),
                                                           tuple(rows)), label=f"{a.label}_{g}_report")
    having = f" that has at least {k} rows in `{table}`" if k > 1 else ""
    checks = [_schema_check(db, table, t), _loaded_check(db, table, a, num)]
    checks += table_output_checks(out, db, f"by `total_{num}` from largest to smallest, breaking ties by `{g}` ascending",
                                  [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per `{g}`{having}, giving "
                                  f"the number of rows as `row_count`, the sum of `{num}` rounded to 2 decimals as "
                                  f"`total_{num}` and the largest `{num}` as `max_{num}`.")
    query = (f"SELECT {g}, COUNT(*) AS row_count, ROUND(SUM({num}), 2) AS total_{num}, MAX({num}) AS max_{num} "
             f"FROM {table} GROUP BY {g} HAVING COUNT(*) >= {k} ORDER BY total_{num} DESC, {g} ASC;")
    return checks, f"sqlite3 -header -csv {db} \"{query}\" | tr -d '\\r' > {path}", out


def _ranked(ctx: StepContext, a: Artifact, db: str, table: str, num: str):
    t = a.table
    ties = tie_columns(t, num, [c for c in t.columns if c != num])
    full = order_rows(list(t.rows), [num] + ties, num, True, t.columns)
    i = t.columns.index(num)
    # A cut between two different values, so "the n largest" needs no tie-break to be defined.
    cuts = [k for k in range(2, min(len(full), 11)) if full[k - 1][i] != full[k][i]] or [len(full)]
    n = ctx.rng.choice(cuts)
    ranked = full[:n]
    path = ctx.claim(f"/app/out/{stem_of(a)}_top_{num}.csv")
    out = Artifact("records", path, fmt="csv", table=Table(t.columns, t.types, tuple(ranked)), label=f"{a.label}_top")
    checks = [_schema_check(db, table, t), _loaded_check(db, table, a, num)]
    checks += table_output_checks(out, db, f"by `{num}` from largest to smallest{tie_words(ties)}",
                                  [list(r) for r in ranked],
                                  f"Write `{path}` as a CSV file with a header row holding the {n} rows of `{table}` "
                                  f"with the largest `{num}` (all columns).")
    order = ", ".join([f"{num} DESC"] + [f"{c} ASC" for c in ties])
    query = f"SELECT * FROM {table} ORDER BY {order} LIMIT {n};"
    return checks, f"sqlite3 -header -csv {db} \"{query}\" | tr -d '\\r' > {path}", out


register(Recipe("sqlite-load-report", "databases", "Load into SQLite and report", _report_accepts, lambda ctx: seed_records(ctx),
                _report_build, weight=2, consumes="records", kinds=("sqlite-database",)))


# --- sqlite-join-targets --------------------------------------------------------------------------

def _join_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    g, num = _pick(ctx, t)
    table = slug(a.label)
    groups: dict = {}
    for r in t.rows:
        groups.setdefault(r[t.columns.index(g)], []).append(r[t.columns.index(num)])
    keys = sorted(groups)
    dropped = rng.choice(keys) if len(keys) > 2 else None
    extra = f"{rng.choice(['legacy', 'pilot', 'archive'])}_{g}"
    targets = {}
    for key in keys:
        if key == dropped:
            continue
        total = sum(groups[key])
        targets[key] = round(total * rng.choice([rng.uniform(0.6, 0.85), rng.uniform(1.15, 1.4)]), 2)
    targets[extra] = 1000.0
    owners = {key: f"{rng.choice(FIRST)}.{rng.choice(LAST)}" for key in targets}
    sql_path = ctx.claim(f"/app/input/{g}_targets.sql")
    sql = [f"-- targets per {g}, exported from the planning system", "BEGIN TRANSACTION;",
           f"CREATE TABLE targets ({g} TEXT PRIMARY KEY, owner TEXT NOT NULL, target REAL NOT NULL);"]
    sql += [f"INSERT INTO targets VALUES ('{k}', '{owners[k]}', {targets[k]});" for k in sorted(targets)]
    sql.append("COMMIT;")
    ctx.add_input(sql_path, "\n".join(sql) + "\n")
    db = ctx.claim(f"/app/out/{stem_of(a)}_targets.db")
    rows = []
    for key in keys:
        if key in targets:
            total = round(sum(groups[key]), 2)
            rows.append((key, owners[key], total, targets[key], "met" if total >= targets[key] else "below"))
    path = ctx.claim(f"/app/out/{stem_of(a)}_vs_target.csv")
    cols = (g, "owner", "total", "target", "status")
    out = Artifact("records", path, fmt="csv", table=Table(cols, ("str", "str", "float", "float", "str"), tuple(rows)),
                   label=f"{a.label}_vs_target")
    checks = [
        Check(f"Create `{db}` holding the `targets` table defined by running `{sql_path}` unchanged.",
              [("targets", f"con = sqlite3.connect({db!r})\nassert con.execute('SELECT COUNT(*) FROM targets').fetchone()[0] == {len(targets)}")]),
        _schema_check(db, table, t), _loaded_check(db, table, a, num)]
    checks += table_output_checks(out, db, f"by `{g}` ascending", [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per `{g}` that appears in "
                                  f"both `{table}` and `targets`, giving its `owner`, the sum of `{num}` rounded to 2 "
                                  f"decimals as `total`, its `target` and `status`, which is `met` when `total` is at "
                                  f"least `target` and `below` otherwise.")
    query = (f"SELECT d.{g} AS {g}, t.owner AS owner, ROUND(SUM(d.{num}), 2) AS total, t.target AS target, "
             f"CASE WHEN ROUND(SUM(d.{num}), 2) >= t.target THEN 'met' ELSE 'below' END AS status "
             f"FROM {table} d JOIN targets t ON t.{g} = d.{g} GROUP BY d.{g} ORDER BY d.{g};")
    solve = (f"mkdir -p /app/out\nrm -f {db}\nsqlite3 {db} < {sql_path}\n{load_solve(a, db, table)}\n"
             f"sqlite3 -header -csv {db} \"{query}\" | tr -d '\\r' > {path}")
    intro = f"Compare {describe(a)} with the targets in the SQL dump `{sql_path}`."
    return Fragment("Join against targets in SQLite", intro, checks, solve, out)


register(Recipe("sqlite-join-targets", "databases", "Join against a lookup table", _fits, lambda ctx: seed_records(ctx),
                _join_build, weight=2, consumes="records", kinds=("sqlite-database",)))


# --- sqlite-migrate ------------------------------------------------------------------------------

def _migrate_accepts(a: Artifact) -> bool:
    if a.kind != "records" or not a.exact or len(a.table.rows) < 4 or len(a.table.columns) < 3:
        return False
    key = a.table.key_column()
    return key is not None and all(c.isidentifier() for c in a.table.columns)


def _sql_value(v) -> str:
    return str(v) if isinstance(v, (int, float)) else "'" + str(v).replace("'", "''") + "'"


def _migrate_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    t = a.table
    key = t.key_column()
    new = rng.choice([c for c in t.columns if c != key])
    indexed = rng.choice([c for c in (t.groupable() or t.columns) if c not in (key, new)] or [key])
    tbl = slug(a.label)
    db = ctx.claim(f"/app/db/{tbl}.db")
    mig = ctx.claim("/app/db/migrations")
    old_cols = [c for c in t.columns if c != new]
    cols_all = old_cols + [new]
    idx = {c: i for i, c in enumerate(t.columns)}
    existing = sorted(rng.sample(list(t.rows), max(2, len(t.rows) // 2)), key=lambda r: r[idx[key]])
    init = [f"CREATE TABLE {tbl} (" + ", ".join(f"{c} {SQL_TYPES[t.type_of(c)]}" for c in old_cols) + ");"]
    init += [f"INSERT INTO {tbl} VALUES (" + ", ".join(_sql_value(r[idx[c]]) for c in old_cols) + ");" for r in existing]
    init += ["PRAGMA user_version = 1;"]
    init_sql = "\n".join(init) + "\n"
    ctx.add_input(f"{mig}/001_init.sql", init_sql)
    ctx.docker_run.append(f"sqlite3 {db} < {mig}/001_init.sql")
    step = f"{mig}/002_add_{new}.sql"
    index = f"idx_{tbl}_{indexed}"
    schema = [[c, SQL_TYPES[t.type_of(c)]] for c in cols_all]
    expected = [[r[idx[c]] for c in cols_all] for r in sorted(t.rows, key=lambda r: r[idx[key]])]
    probe = (f"cols = [[r[1], r[2].upper()] for r in con.execute('PRAGMA table_info({tbl})')]\n"
             f"assert cols == {schema!r}, cols\n"
             f"assert con.execute('PRAGMA user_version').fetchone()[0] == 2\n"
             f"ix = [r[2] for r in con.execute(\"PRAGMA index_info('{index}')\")]\nassert ix == [{indexed!r}], ix")
    out_path = ctx.claim(f"/app/out/{tbl}_v2.csv")
    out = Artifact("records", out_path, fmt="csv", table=Table(tuple(cols_all), tuple(t.type_of(c) for c in cols_all),
                                                               tuple(tuple(r) for r in expected)), label=f"{a.label}_v2")
    checks = [
        Check(f"Write the migration `{step}` that adds the column `{new}` ({SQL_TYPES[t.type_of(new)]}) to `{tbl}`, "
              f"creates the index `{index}` on `{indexed}` and sets `PRAGMA user_version` to 2, so that running "
              f"`001_init.sql` and then it on an empty database gives the new schema.",
              [("migration", f"tmp = os.path.join(tempfile.mkdtemp(), 'fresh.db')\ncon = sqlite3.connect(tmp)\n"
                             # the shipped 001_init.sql as synthesized, not as the agent may have left it
                             f"con.executescript({init_sql!r})\n"
                             f"con.executescript(read_text({step!r}))\n{probe}")]),
        Check(f"Apply the migration to `{db}`.",
              [("applied", f"con = sqlite3.connect({db!r})\n{probe}")]),
        Check(f"Then make `{tbl}` in `{db}` hold exactly the rows of `{a.path}`: fill in `{new}` for the rows already "
              f"there (matched by `{key}`) and insert the missing rows.",
              [("rows", f"con = sqlite3.connect({db!r})\n"
                        f"rows = [dict(zip({cols_all!r}, r)) for r in con.execute('SELECT {', '.join(cols_all)} FROM {tbl}')]\n"
                        f"check_rows(rows, {cols_all!r}, {expected!r}, ordered=False)")]),
    ]
    checks += table_output_checks(out, db, f"by `{key}` ascending", expected,
                                  f"Export the migrated table to `{out_path}` as a CSV file with a header row holding "
                                  f"all of its rows.")
    marks = ", ".join("?" for _ in cols_all)
    solve = f"""mkdir -p /app/out
cat > {step} <<'SQL'
ALTER TABLE {tbl} ADD COLUMN {new} {SQL_TYPES[t.type_of(new)]};
CREATE INDEX {index} ON {tbl} ({indexed});
PRAGMA user_version = 2;
SQL
sqlite3 {db} < {step}
python3 - <<'PY'
{py_loader(a)}import sqlite3
con = sqlite3.connect({db!r})
for r in load({a.path!r}):
    if con.execute('SELECT 1 FROM {tbl} WHERE {key} = ?', (r[{key!r}],)).fetchone():
        con.execute('UPDATE {tbl} SET {new} = ? WHERE {key} = ?', (r[{new!r}], r[{key!r}]))
    else:
        con.execute('INSERT INTO {tbl} ({', '.join(cols_all)}) VALUES ({marks})', tuple(r[c] for c in {cols_all!r}))
con.commit()
PY
sqlite3 -header -csv {db} "SELECT {', '.join(cols_all)} FROM {tbl} ORDER BY {key}" > {out_path}"""
    intro = (f"`{db}` was created by `{mig}/001_init.sql` and holds part of {describe(a)}, without the column "
             f"`{new}`; migrate it to schema version 2 and bring it up to date.")
    return Fragment("Migrate the SQLite schema", intro, checks, solve, out)


register(Recipe("sqlite-migrate", "databases", "Migrate a SQLite schema and backfill", _migrate_accepts,
                lambda ctx: seed_records(ctx), _migrate_build, weight=2, consumes="table with an id column", kinds=("sqlite-database",)))
