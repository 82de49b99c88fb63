"""SQLite databases as command-exercise inputs: `sqlite3 shop.db "SELECT …"` documented in SKILL.md runs on
a database the task builds.

Its schema is the CREATE TABLE statements SKILL.md shows (a ```sql block, a heredoc, a quoted argument),
else the recipes' generated tables (orders, employees, readings, …). Rows are drawn per task by column type
and name (keys, dates, amounts, and the string literals the documented SQL compares with, so a WHERE
clause selects something). The database is built here in memory with Python's sqlite3 (only the CREATE
TABLE statements run, each bounded) and serialized to bytes. Whether the documented SQL fits is asked of
SQLite itself with EXPLAIN (compiled, never run): a table or column the sample lacks is a misfit. Only
reading SQL is a command exercise; SQL that changes the database or touches files is refused.
"""
from __future__ import annotations

import random
import re
import sqlite3

from ..recipes.seeds import FIRST, PRODUCTS, REGIONS, TABLES

DB_EXTENSIONS = frozenset({"db", "sqlite", "sqlite3"})
_CREATE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?(\w+)[\"`\]]?\s*\(", re.I)
# Queries of the data only: a PRAGMA, VALUES or EXPLAIN answers the same whatever the task's rows are
# (`PRAGMA quick_check` prints `ok`), so a hand-written answer would pass.
_READING = re.compile(r"^\s*(SELECT|WITH)\b", re.I)
_READING_DOTS = frozenset({".schema", ".tables", ".indexes", ".indices", ".dump", ".fullschema", ".headers",
                           ".mode"})
_MAX_STEPS = 200_000     # SQLite VM steps a build or a check may take (a CHECK or DEFAULT is code too)


def statements(sql: str) -> list[str]:
    """SQL split at semicolons outside quotes."""
    out, cur, quote = [], [], ""
    for ch in sql:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ";":
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def reading_only(sql: str) -> str:
    """'' when the documented SQL (or sqlite3 dot-command) only reads the database; else why not."""
    text = sql.strip()
    if text.startswith("."):
        word = text.split()[0]
        return "" if word in _READING_DOTS else f"runs the sqlite3 shell command {word} (writes or reads files)"
    for stmt in statements(text):
        if not _READING.match(stmt):
            what = stmt.split()[0].upper()
            return (f"reads a setting, not the data ({what}: its answer does not depend on the task's rows)"
                    if what in ("PRAGMA", "VALUES", "EXPLAIN") else f"changes the database or its settings ({what})")
    return ""


def schema_of(body: str) -> list[str]:
    """The CREATE TABLE statements of a text, each whole (its parentheses balanced)."""
    out = []
    for m in _CREATE.finditer(body or ""):
        depth, i = 1, m.end()
        while i < len(body) and depth:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            i += 1
        if not depth:
            out.append(f"CREATE TABLE IF NOT EXISTS {m.group(1)} {body[m.end() - 1:i]}")
    return out


def _bounded(con: sqlite3.Connection) -> None:
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return int(steps[0] > _MAX_STEPS // 1000)
    con.set_progress_handler(tick, 1000)


def _value(rng: random.Random, name: str, typ: str, rows: int, words: list[str]):
    n, t = name.lower(), typ.upper()
    if n == "id" or n.endswith("_id") or n.endswith("id") and "INT" in t:
        return rng.randint(1, rows)
    if re.search(r"date|time|_at$|^at$|created|updated|day", n):
        d = f"2024-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}"
        return d if "date" in n or "day" in n else f"{d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"
    if "INT" in t or "BOOL" in t:
        return rng.randint(0, 1) if "BOOL" in t or n.startswith(("is_", "has_")) else rng.randint(1, 400)
    if re.search(r"REAL|FLOA|DOUB|NUM|DEC", t):
        return round(rng.uniform(1, 500), 2)
    if "BLOB" in t:
        return None
    if "email" in n:
        return f"{rng.choice(FIRST)}@example.com"
    if "name" in n or "user" in n or "author" in n:
        return rng.choice(FIRST)
    return rng.choice(words)


def build_database(rng: random.Random, schema: list[str], sql: str = "") -> bytes:
    """A database with the schema's tables (the generated datasets when `schema` is empty), rows drawn."""
    con = sqlite3.connect(":memory:")
    _bounded(con)
    if not schema:
        for make in TABLES.values():
            label, table = make(rng, rng.randint(20, 36))
            cols = ", ".join(f"{c} {'INTEGER' if t == 'int' else 'REAL' if t == 'float' else 'TEXT'}"
                             for c, t in zip(table.columns, table.types))
            con.execute(f"CREATE TABLE IF NOT EXISTS {label} ({cols})")
            con.executemany(f"INSERT INTO {label} VALUES ({', '.join('?' * len(table.columns))})", table.rows)
        con.commit()
        return con.serialize()
    for stmt in schema:
        try:
            con.execute(stmt)
        except sqlite3.Error:
            continue
    words = sorted(set(re.findall(r"'([^'\n]{1,40})'", sql))) or []
    words += [rng.choice(PRODUCTS), rng.choice(REGIONS), "open", "closed", "pending"]
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for table in tables:
        cols = [(r[1], r[2] or "", r[5]) for r in con.execute(f'PRAGMA table_info("{table}")')]
        rows = rng.randint(12, 30)
        for i in range(rows):
            vals = [i + 1 if pk and "INT" in typ.upper() else _value(rng, name, typ, rows, words)
                    for name, typ, pk in cols]
            try:
                con.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(cols))})', vals)
            except sqlite3.Error:
                continue   # a constraint the draw broke: the row is left out
    con.commit()
    return con.serialize()


def sql_misfit(db: bytes, sql: str) -> str:
    """Why the documented SQL cannot run on this database ('' when SQLite compiles it)."""
    con = sqlite3.connect(":memory:")
    _bounded(con)
    try:
        con.deserialize(db)
        if sql.strip().startswith("."):   # `.schema users`, `.indexes events`: the table must be there
            named = sql.split()[1:2]
            there = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            return f"has no table {named[0]}" if named and named[0].strip("'\"") not in there else ""
        for stmt in statements(sql):
            con.execute(f"EXPLAIN {stmt}")
    except sqlite3.Error as exc:
        return f"does not have what the SQL reads ({str(exc)[:80]})"
    return ""
