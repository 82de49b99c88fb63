"""log-analysis families: access-log statistics, application-log triage, cross-referencing keys."""
from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta

from .base import SAFE_TOKEN, Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import py_block, table_output_checks
from .formats import render_lines
from .seeds import FIRST, LAST, iso, seed_records

PATHS = ["/", "/login", "/api/items", "/api/items/42", "/api/orders", "/static/app.js", "/static/site.css",
         "/health", "/admin", "/api/search?q=lamp", "/favicon.ico"]
STATUS = [200] * 12 + [201, 204, 301, 304, 304, 404, 404, 403, 500, 502, 503]
AGENTS = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.4.0", "python-requests/2.31", "Googlebot/2.1"]
ACCESS_RE = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) HTTP/[0-9.]+" (\d{3}) (\d+|-) "[^"]*" "[^"]*"$')


def seed_access_log(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    ips = sorted({f"{rng.choice(['10.0', '192.168', '203.0'])}.{rng.randint(0, 9)}.{rng.randint(2, 250)}"
                  for _ in range(rng.randint(6, 9))})
    weights = [rng.randint(1, 9) for _ in ips]
    t = datetime(2024, 3, rng.randint(1, 28), rng.randint(0, 6), 0, 0)
    lines = []
    for _ in range(rng.randint(90, 150)):
        t += timedelta(seconds=rng.randint(20, 400))
        status = rng.choice(STATUS)
        size = "-" if status == 304 else str(rng.randint(120, 48000))
        lines.append(f'{rng.choices(ips, weights)[0]} - {rng.choice(["-", "-", "-", rng.choice(FIRST)])} '
                     f'[{t.strftime("%d/%b/%Y:%H:%M:%S")} +0000] "{rng.choice(["GET"] * 6 + ["POST", "PUT", "DELETE"])} '
                     f'{rng.choice(PATHS)} HTTP/1.1" {status} {size} "-" "{rng.choice(AGENTS)}"')
    for _ in range(2):   # log rotation noise and a truncated write: not entries
        junk = rng.choice([f"#> log rotated {iso(t)}", lines[rng.randrange(len(lines))][:40]])
        lines.insert(rng.randrange(len(lines)), junk)
    path = ctx.claim(f"/app/input/{rng.choice(['access', 'nginx-access', 'web-access', 'frontend.access'])}.log")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="access-log", label="access")


def parse_access(lines) -> list[tuple]:
    out = []
    for line in lines:
        m = ACCESS_RE.match(line)
        if m:
            ip, ts, method, path, status, size = m.groups()
            out.append((ip, datetime.strptime(ts.split()[0], "%d/%b/%Y:%H:%M:%S"), method, path, int(status),
                        0 if size == "-" else int(size)))
    return out


def _access_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    entries = parse_access(a.lines)
    variant = rng.choice(["status", "client", "hour"])
    if variant == "status":
        c = Counter(e[4] for e in entries)
        cols, types = ("status", "requests"), ("int", "int")
        rows = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
        what, order = "one row per HTTP status code with the number of requests that got it", \
            "by `requests` from largest to smallest, breaking ties by `status` ascending"
    elif variant == "client":
        agg: dict = {}
        for e in entries:
            r = agg.setdefault(e[0], [0, 0, 0])
            r[0] += 1
            r[1] += e[5]
            r[2] += e[4] >= 400
        cols, types = ("client_ip", "requests", "bytes", "errors"), ("str", "int", "int", "int")
        rows = sorted(((k, *v) for k, v in agg.items()), key=lambda r: (-r[1], r[0]))
        what = ("one row per client IP address with its number of requests, the total response bytes (a `-` size "
                "counts as 0) and the number of responses with status 400 or above")
        order = "by `requests` from largest to smallest, breaking ties by `client_ip` ascending"
    else:
        agg = {}
        for e in entries:
            r = agg.setdefault(e[1].strftime("%H"), [0, 0])
            r[0] += 1
            r[1] += e[4] >= 500
        cols, types = ("hour", "requests", "server_errors"), ("str", "int", "int")
        rows = sorted(((k, *v) for k, v in agg.items()))
        what = ("one row per hour of the day that has requests, written as two digits, with the number of requests "
                "and the number of responses with status 500 or above")
        order = "by `hour` ascending"
    path = ctx.claim(f"/app/out/requests_by_{variant}.csv")
    out = Artifact("records", path, fmt="csv", table=Table(cols, types, tuple(rows)), label=f"requests_by_{variant}")
    content = f"Write `{path}` as a CSV file with a header row containing {what}."
    checks = table_output_checks(out, a.path, order, [list(r) for r in rows], content)
    summary = ctx.claim(f"/app/out/{ctx.rng.choice(['traffic_summary', 'access_summary', 'web_traffic'])}.json")
    paths = Counter(e[3] for e in entries).most_common()
    top = paths[0][0] if len(paths) < 2 or paths[0][1] > paths[1][1] else None
    expect = {"total_requests": len(entries), "unique_clients": len({e[0] for e in entries}),
              "error_percent": round(100 * sum(e[4] >= 400 for e in entries) / len(entries), 2)}
    parts = ["`total_requests`", "`unique_clients`",
             "`error_percent` (the share of requests with status 400 or above as a percentage rounded to 2 decimals)"]
    if top:
        expect["top_path"] = top
        parts.append("`top_path` (the most requested path)")
    keys = ", ".join(parts[:-1]) + " and " + parts[-1]
    checks.append(Check(f"Write `{summary}` as a JSON object with the keys {keys}.",
                        [("summary", f"data = json.loads(read_text({summary!r}))\nexpected = {expect!r}\n"
                                     f"for k, v in expected.items():\n    assert same(data.get(k), v), f\"{{k}}: {{data.get(k)!r}} != {{v!r}}\"")]))
    checks.append(Check(f"Ignore lines of `{a.path}` that are not complete combined-log-format entries.",
                        [("entries", f"data = json.loads(read_text({summary!r}))\nassert data.get('total_requests') == {len(entries)}")]))
    aggregate = {
        "status": """rows = [{"status": k, "requests": n}
        for k, n in sorted(Counter(e[3] for e in E).items(), key=lambda kv: (-kv[1], kv[0]))]""",
        "client": """agg = {}
for e in E:
    r = agg.setdefault(e[0], {"client_ip": e[0], "requests": 0, "bytes": 0, "errors": 0})
    r["requests"] += 1
    r["bytes"] += e[4]
    r["errors"] += e[3] >= 400
rows = sorted(agg.values(), key=lambda r: (-r["requests"], r["client_ip"]))""",
        "hour": """agg = {}
for e in E:
    r = agg.setdefault(e[1].strftime("%H"), {"hour": e[1].strftime("%H"), "requests": 0, "server_errors": 0})
    r["requests"] += 1
    r["server_errors"] += e[3] >= 500
rows = [agg[k] for k in sorted(agg)]"""}[variant]
    top_line = 'summary["top_path"] = Counter(e[2] for e in E).most_common(1)[0][0]\n' if top else ""
    body = f'''
import re
from collections import Counter
from datetime import datetime
RX = re.compile({ACCESS_RE.pattern!r})
E = []   # (ip, time, path, status, bytes) of the well-formed entries
for line in open({a.path!r}):
    m = RX.match(line.rstrip("\\n"))
    if m:
        ip, ts, method, path, status, size = m.groups()
        E.append((ip, datetime.strptime(ts.split()[0], "%d/%b/%Y:%H:%M:%S"), path, int(status), 0 if size == "-" else int(size)))
{aggregate}
write({path!r}, "csv", {list(cols)!r}, rows)
summary = {{"total_requests": len(E), "unique_clients": len({{e[0] for e in E}}),
           "error_percent": round(100 * sum(e[3] >= 400 for e in E) / len(E), 2)}}
{top_line}json.dump(summary, open({summary!r}, "w"), indent=2)
'''
    return Fragment("Summarise the access log", f"The web server wrote {describe(a)}.", checks,
                    py_block(None, body), out)


register(Recipe("access-log-stats", "log-analysis", "Summarise an access log",
                lambda a: a.kind == "lines" and a.flavor == "access-log", seed_access_log, _access_build,
                weight=2, consumes="access log", kinds=("log-file",)))


# --- app-log-errors -----------------------------------------------------------------------------

COMPONENTS = ["payments", "auth", "scheduler", "mailer", "search", "storage", "gateway"]
MESSAGES = {"ERROR": ["charge failed: card declined", "connection reset by peer", "timeout after 30s",
                      "disk quota exceeded", "unexpected status 502 from upstream"],
            "WARN": ["retrying request", "slow query took 2.4s", "cache miss ratio high", "deprecated option used"],
            "INFO": ["request served", "job finished", "user logged in", "config reloaded"],
            "DEBUG": ["payload size 512", "cache lookup", "opening connection"]}


def app_log_lines(ctx: StepContext, n: int, refs: list[str] | None = None, ref_key: str = "req"):
    rng = ctx.rng
    comps = rng.sample(COMPONENTS, rng.randint(3, 5))
    t = datetime(2024, 4, rng.randint(1, 28), 8, 0, 0)
    lines, entries = [], []
    for _ in range(n):
        t += timedelta(seconds=rng.randint(5, 300))
        level = rng.choice(["INFO"] * 5 + ["DEBUG"] * 2 + ["WARN"] * 2 + ["ERROR"] * 2)
        ref = rng.choice(refs) if refs else f"{rng.getrandbits(24):06x}"
        comp = rng.choice(comps)
        lines.append(f"{iso(t)} {level} [{comp}] {rng.choice(MESSAGES[level])} ({ref_key}={ref})")
        entries.append((t, level, comp, ref))
        if level == "ERROR" and rng.random() < 0.3:
            lines += ["Traceback (most recent call last):", f'  File "/srv/{comp}/worker.py", line {rng.randint(10, 400)}, in run',
                      "RuntimeError: see above"]
    return lines, entries


def seed_app_log(ctx: StepContext) -> Artifact:
    lines, _ = app_log_lines(ctx, ctx.rng.randint(60, 110))
    path = ctx.claim(f"/app/input/{ctx.rng.choice(['service', 'app', 'worker', 'api-server'])}.log")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="app-log", label="service")


APP_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (DEBUG|INFO|WARN|ERROR) \[([a-z]+)\] (.*) \((\w+)=(\S+)\)$")


def _app_build(ctx: StepContext, a: Artifact) -> Fragment:
    entries = [APP_RE.match(x).groups() for x in a.lines if APP_RE.match(x)]
    comps = sorted({e[2] for e in entries})
    rows = [(c, sum(1 for e in entries if e[2] == c and e[1] == "ERROR"), sum(1 for e in entries if e[2] == c and e[1] == "WARN"))
            for c in comps]
    rows.sort(key=lambda r: (-r[1], -r[2], r[0]))
    path = ctx.claim(f"/app/out/{stem_of(a)}_levels.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("component", "errors", "warnings"), ("str", "int", "int"),
                                                           tuple(rows)), label=f"{a.label}_levels")
    content = (f"Write `{path}` as a CSV file with a header row and one row per component named in brackets in "
               f"`{a.path}`, counting its ERROR entries as `errors` and its WARN entries as `warnings`.")
    checks = table_output_checks(out, a.path, "by `errors` from largest to smallest, then by `warnings` from largest to "
                                 "smallest, then by `component` ascending", [list(r) for r in rows], content)
    failed = ctx.claim(f"/app/out/{stem_of(a)}_failed_refs.txt")
    refs = sorted({e[5] for e in entries if e[1] == "ERROR"})
    key = entries[0][4] if entries else "req"
    checks.append(Check(f"Write `{failed}` listing each distinct `{key}=` value of the ERROR entries in `{a.path}` once "
                        f"per line (the value only), sorted.",
                        [("failed_refs", f"assert read_lines({failed!r}) == {refs!r}")]))
    checks.append(Check("Lines that do not start with a timestamp continue the entry above them and are not entries of "
                        "their own.", [("continuations", t_total(path, len(entries), rows))]))
    solve = (f"mkdir -p /app/out\n"
             f"{{ echo 'component,errors,warnings'; grep -E '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T' {a.path} "
             f"| sed -E 's/^[^ ]+ ([A-Z]+) \\[([a-z]+)\\].*/\\2 \\1/' "
             f"| awk '{{c[$1]+=0; w[$1]+=0; if ($2==\"ERROR\") c[$1]++; if ($2==\"WARN\") w[$1]++}} "
             f"END {{for (k in c) print k \",\" c[k] \",\" w[k]}}' | sort -t, -k2,2nr -k3,3nr -k1,1; }} > {path}\n"
             f"grep -E '^[0-9]{{4}}-[0-9-]+T[0-9:]+Z ERROR ' {a.path} | sed -E 's/.*\\({key}=([^)]*)\\)$/\\1/' "
             f"| sort -u > {failed}")
    return Fragment("Triage the application log", f"The service wrote {describe(a)}; entries look like "
                    f"`<UTC timestamp> <LEVEL> [<component>] <message> (<key>=<value>)`.", checks, solve, out)


def t_total(path: str, n: int, rows) -> str:
    # Every entry has a level; ERROR+WARN totals pin down that tracebacks were not counted.
    return (f"cols, rows = read_table({path!r}, 'csv')\n"
            f"assert sum(int(r['errors']) for r in rows) == {sum(r[1] for r in rows)}\n"
            f"assert sum(int(r['warnings']) for r in rows) == {sum(r[2] for r in rows)}")


register(Recipe("app-log-errors", "log-analysis", "Triage an application log",
                lambda a: a.kind == "lines" and a.flavor == "app-log", seed_app_log, _app_build, weight=2,
                consumes="application log", kinds=("log-file",)))


# --- log-correlate: any keys x a service log ------------------------------------------------------

def keys_of(a: Artifact) -> tuple[str, list[str]] | None:
    """A set of plain tokens an artifact offers, and how the instruction says where they come from."""
    if not a.exact:
        return None
    if a.kind == "records":
        t = a.table
        cands = ([t.key_column()] if t.key_column() else []) + [c for c in t.groupable(2, 40) if t.type_of(c) == "str"]
        for c in cands + [c for c in t.columns if c not in cands]:
            vals = sorted({str(v) for v in t.col(c)})
            if len(vals) >= 1 and all(SAFE_TOKEN.match(v) for v in vals):
                return f"the distinct values of column `{c}` in `{a.path}`", vals
        return None
    if a.kind == "lines":
        vals = sorted(set(a.lines))
        if 2 <= len(vals) <= 60 and all(SAFE_TOKEN.match(v) for v in vals):
            return f"the lines of `{a.path}`", vals
        firsts = sorted({first_word(x) for x in a.lines if x.strip() and not x.lstrip().startswith("#")})
        if 2 <= len(firsts) <= 60 and all(SAFE_TOKEN.match(v) for v in firsts):
            return (f"the first words of the lines of `{a.path}` (the text before the first space, `=` or `:`, "
                    f"skipping blank lines and lines starting with `#`)"), firsts
        return None
    names = sorted({n.rsplit("/", 1)[-1] for n, _ in a.files})
    if len(names) >= 2 and all(SAFE_TOKEN.match(v) for v in names):
        where = "under" if a.kind == "tree" else "in the archive"
        return f"the file names (without folders) of the files {where} `{a.path}`", names
    return None


def _correlate_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    phrase, keys = keys_of(a)
    mentioned = rng.sample(keys, max(1, int(len(keys) * rng.uniform(0.5, 0.8))))
    decoys = [f"{rng.choice(FIRST)}-{rng.randint(100, 999)}" for _ in range(3)]
    decoys = [d for d in decoys if d not in keys]
    ref = rng.choice(["ref", "item", "subject"])
    lines, entries = app_log_lines(ctx, rng.randint(50, 90), mentioned + decoys, ref)
    log = ctx.claim(f"/app/input/audit_{stem_of(a)}.log")
    ctx.add_input(log, render_lines(lines))
    rows = []
    for k in keys:
        hits = [e for e in entries if e[3] == k]
        rows.append((k, len(hits), sum(1 for e in hits if e[1] == "ERROR")))
    rows.sort(key=lambda r: (-r[1], r[0]))
    path = ctx.claim(f"/app/out/{stem_of(a)}_mentions.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("key", "entries", "errors"), ("str", "int", "int"), tuple(rows)),
                   label=f"{a.label}_mentions")
    content = (f"Write `{path}` as a CSV file with a header row and one row for each of {phrase} (as `key`), with the number of "
               f"entries in `{log}` that mention it as `entries` and how many of those are ERROR entries as `errors`.")
    checks = table_output_checks(out, a.path, "by `entries` from largest to smallest, breaking ties by `key` ascending",
                                 [list(r) for r in rows], content)
    checks.append(Check(f"An entry mentions a key when it ends with `({ref}=<key>)`, and keys never mentioned get a row "
                        f"with zeros.", [("zeros", f"cols, rows = read_table({path!r}, 'csv')\n"
                                                   f"zero = sorted(r['key'] for r in rows if int(r['entries']) == 0)\n"
                                                   f"assert zero == {sorted(r[0] for r in rows if r[1] == 0)!r}")]))
    derive = _derive_keys_py(a)
    body = f'''
import re
{derive}
RX = re.compile(r"^\\S+Z (DEBUG|INFO|WARN|ERROR) \\[\\w+\\] .* \\({ref}=(\\S+)\\)$")
stats = {{k: [0, 0] for k in KEYS}}
for line in open({log!r}):
    m = RX.match(line.rstrip("\\n"))
    if m and m.group(2) in stats:
        stats[m.group(2)][0] += 1
        stats[m.group(2)][1] += m.group(1) == "ERROR"
rows = [{{"key": k, "entries": v[0], "errors": v[1]}} for k, v in stats.items()]
rows.sort(key=lambda r: (-r["entries"], r["key"]))
write({path!r}, "csv", ["key", "entries", "errors"], rows)
'''
    src = a if a.kind == "records" else None
    return Fragment("Cross-reference the audit log", f"An audit log of the service is in `{log}`; every entry ends with "
                    f"a `({ref}=<key>)` marker.", checks, py_block(src, body), out)


def first_word(line: str) -> str:
    return re.split(r"[ =:]", line.strip(), maxsplit=1)[0]


def _derive_keys_py(a: Artifact) -> str:
    if a.kind == "records":
        col = keys_of(a)[0].split("`")[1]   # the phrase names the column between backticks
        return f"KEYS = sorted({{str(r[{col!r}]) for r in load({a.path!r})}})"
    if a.kind == "lines" and keys_of(a)[0].startswith("the lines"):
        return f"KEYS = sorted({{l.strip() for l in open({a.path!r}) if l.strip()}})"
    if a.kind == "lines":
        return (f"KEYS = sorted({{re.split(r'[ =:]', l.strip(), maxsplit=1)[0] for l in open({a.path!r})"
                f" if l.strip() and not l.lstrip().startswith('#')}})")
    if a.kind == "tree":
        return f"import os\nKEYS = sorted({{f for _, _, fs in os.walk({a.path!r}) for f in fs}})"
    return (f"import tarfile, zipfile\np = {a.path!r}\n"
            f"names = zipfile.ZipFile(p).namelist() if p.endswith('.zip') else [m.name for m in tarfile.open(p) if m.isfile()]\n"
            f"KEYS = sorted({{n.rstrip('/').rsplit('/', 1)[-1] for n in names if not n.endswith('/')}})")


register(Recipe("log-correlate", "log-analysis", "Cross-reference a log", lambda a: keys_of(a) is not None,
                lambda ctx: seed_records(ctx), _correlate_build, weight=2, consumes="any artifact with keys", kinds=("log-file",)))


def seed_status_lines(ctx: StepContext) -> Artifact:
    """Usernames from failed logins, one per line (repeats are the point)."""
    rng = ctx.rng
    users = [f"{rng.choice(FIRST)}{rng.choice(LAST)[:3]}" for _ in range(rng.randint(5, 8))] + ["root", "admin"]
    users = sorted(set(users))
    weights = [rng.randint(1, 8) for _ in users]
    lines = [rng.choices(users, weights)[0] for _ in range(rng.randint(30, 60))]
    path = ctx.claim(f"/app/input/{rng.choice(['failed_logins', 'auth_failures', 'ssh_failed'])}.txt")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="users", label="failed_logins")
