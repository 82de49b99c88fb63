"""Seeded generators for the input files a task starts from (small: a few KB each).

Every generator takes the task's `random.Random`, so the same seed always yields the same
files. Values are plain tokens or short phrases without commas, quotes or tabs.
"""
from __future__ import annotations

import random
from datetime import date, datetime, timedelta

from .base import Artifact, StepContext, Table
from .formats import render_lines, render_table

FIRST = ["ada", "alan", "grace", "linus", "margaret", "dennis", "barbara", "ken", "radia", "edsger",
         "frances", "john", "hedy", "tim", "sophie", "yukihiro", "guido", "anita", "niklaus", "donald"]
LAST = ["lovelace", "turing", "hopper", "torvalds", "hamilton", "ritchie", "liskov", "thompson",
        "perlman", "dijkstra", "allen", "backus", "lamarr", "berners", "wilson", "matsumoto",
        "rossum", "borg", "wirth", "knuth"]
DOMAINS = ["example.com", "example.org", "mail.example.net", "corp.example.io"]
REGIONS = ["north", "south", "east", "west", "central"]
PRODUCTS = ["widget", "gadget", "sprocket", "gizmo", "doohickey", "flange", "bracket", "valve"]
SITES = ["lab-a", "lab-b", "roof", "basement", "warehouse"]
DEPARTMENTS = ["engineering", "finance", "support", "sales", "research", "legal"]
WAREHOUSES = ["ams1", "fra2", "lhr1", "iad3"]
CATEGORIES = ["tools", "garden", "kitchen", "office", "outdoor"]
PIPELINES = ["api", "web", "worker", "docs", "cli"]
BRANCHES = ["main", "develop", "release"]
CARRIERS = ["dhl", "ups", "fedex", "postnl"]
CITIES = ["rotterdam", "hamburg", "lyon", "porto", "gdansk", "turin"]


def pick(rng: random.Random, seq, k: int | None = None):
    return rng.choice(seq) if k is None else rng.sample(seq, k)


def a_date(rng: random.Random, start=date(2024, 1, 1), span=180) -> str:
    return (start + timedelta(days=rng.randrange(span))).isoformat()


def email(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}@{rng.choice(DOMAINS)}"


def money(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 2)


def _ids(rng: random.Random, prefix: str, n: int, width: int = 5) -> list[str]:
    lo = 10 ** (width - 1)
    return [f"{prefix}-{x}" for x in sorted(rng.sample(range(lo, lo * 10), n))]


def gen_orders(rng, n):
    ids = _ids(rng, "ORD", n)
    regions = pick(rng, REGIONS, rng.randint(3, 5))
    rows = [(i, a_date(rng), rng.choice(regions), rng.choice(PRODUCTS), rng.randint(1, 20),
             money(rng, 2, 90), email(rng)) for i in ids]
    return "orders", Table(("order_id", "order_date", "region", "product", "quantity", "unit_price", "customer"),
                           ("str", "str", "str", "str", "int", "float", "str"), tuple(rows))


def gen_sensors(rng, n):
    sensors = [f"TMP-{i:02d}" for i in rng.sample(range(1, 20), rng.randint(3, 5))]
    site = {s: rng.choice(SITES) for s in sensors}
    base = {s: rng.uniform(12, 28) for s in sensors}
    ids = _ids(rng, "R", n, 4)
    rows = []
    for i in ids:
        s = rng.choice(sensors)
        rows.append((i, s, site[s], a_date(rng, span=30), round(base[s] + rng.gauss(0, 2.5), 2), rng.randint(20, 80)))
    return "readings", Table(("reading_id", "sensor", "site", "day", "temperature_c", "humidity_pct"),
                             ("str", "str", "str", "str", "float", "int"), tuple(rows))


def gen_employees(rng, n):
    ids = _ids(rng, "E", n, 4)
    depts = pick(rng, DEPARTMENTS, rng.randint(3, 5))
    rows = []
    for i in ids:
        f, l = rng.choice(FIRST), rng.choice(LAST)
        rows.append((i, f"{f}.{l}", rng.choice(depts), rng.randrange(42000, 140000, 500),
                     a_date(rng, date(2015, 1, 1), 3000), f"{f}.{l}@{DOMAINS[0]}"))
    return "employees", Table(("emp_id", "login", "department", "salary", "hired", "email"),
                              ("str", "str", "str", "int", "str", "str"), tuple(rows))


def gen_inventory(rng, n):
    ids = _ids(rng, "SKU", n)
    whs = pick(rng, WAREHOUSES, rng.randint(2, 4))
    rows = [(i, rng.choice(whs), rng.choice(CATEGORIES), rng.randint(0, 400), money(rng, 0.5, 60))
            for i in ids]
    return "inventory", Table(("sku", "warehouse", "category", "stock", "unit_cost"),
                              ("str", "str", "str", "int", "float"), tuple(rows))


def gen_builds(rng, n):
    ids = _ids(rng, "B", n, 4)
    pipes = pick(rng, PIPELINES, rng.randint(3, 5))
    rows = []
    for i in ids:
        failed = rng.choice([0, 0, 0, 0, 1, 2, 5])
        rows.append((i, rng.choice(pipes), rng.choice(BRANCHES), round(rng.uniform(40, 900), 2), failed,
                     "failed" if failed else "passed"))
    return "builds", Table(("build_id", "pipeline", "branch", "duration_s", "tests_failed", "status"),
                           ("str", "str", "str", "float", "int", "str"), tuple(rows))


def gen_shipments(rng, n):
    ids = _ids(rng, "TRK", n, 6)
    carriers = pick(rng, CARRIERS, rng.randint(2, 4))
    rows = [(i, rng.choice(carriers), rng.choice(CITIES), round(rng.uniform(0.2, 40), 2), rng.randint(1, 12),
             a_date(rng)) for i in ids]
    return "shipments", Table(("tracking_id", "carrier", "origin", "weight_kg", "transit_days", "shipped"),
                              ("str", "str", "str", "float", "int", "str"), tuple(rows))


TABLES = {"orders": gen_orders, "sensors": gen_sensors, "employees": gen_employees,
          "inventory": gen_inventory, "builds": gen_builds, "shipments": gen_shipments}


def seed_records(ctx: StepContext, fmt: str | None = None, dataset: str | None = None) -> Artifact:
    rng = ctx.rng
    dataset = dataset or rng.choice(sorted(TABLES))
    label, table = TABLES[dataset](rng, rng.randint(24, 40))
    fmt = fmt or rng.choice(["csv", "csv", "csv", "tsv", "json", "jsonl"])
    path = ctx.claim(f"/app/input/{label}.{fmt}")
    ctx.add_input(path, render_table(table, fmt))
    return Artifact("records", path, fmt=fmt, table=table, label=label)


# --- text lists -------------------------------------------------------------------------

TAG_WORDS = ["backend", "frontend", "database", "caching", "security", "logging", "metrics", "billing",
             "search", "auth", "queue", "storage", "gateway", "scheduler", "reports", "mobile"]


def seed_messy_list(ctx: StepContext) -> Artifact:
    """A hand-maintained list: mixed case, stray spaces, comments, blanks and duplicates."""
    rng = ctx.rng
    words = pick(rng, TAG_WORDS, rng.randint(8, 12))
    out = [f"# {rng.choice(['team', 'service', 'component'])} tags, edited by hand"]
    for w in words:
        for _ in range(rng.choice([1, 1, 2, 3])):
            v = rng.choice([w, w.upper(), w.capitalize()])
            out.append(rng.choice(["", " ", "  ", "\t"]) + v + rng.choice(["", " ", "   "]))
        if rng.random() < 0.25:
            out.append(rng.choice(["", "   ", "# TODO: review"]))
    rng.shuffle(out)
    path = ctx.claim(f"/app/input/{rng.choice(['tags', 'team-tags', 'labels', 'topics'])}.txt")
    ctx.add_input(path, render_lines(out))
    return Artifact("lines", path, fmt="txt", lines=tuple(out), flavor="messy-list", label="tags")


def seed_any(ctx: StepContext) -> Artifact:
    """For families that accept anything: a table most of the time, sometimes a folder."""
    from .trees import seed_docs_tree
    return seed_docs_tree(ctx) if ctx.rng.random() < 0.2 else seed_records(ctx)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
