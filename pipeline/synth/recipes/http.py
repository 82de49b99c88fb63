"""networking-http families (all offline): merge saved API responses, compose a raw upload
request, normalise a URL list."""
from __future__ import annotations

import json
from collections import Counter
from urllib.parse import urlsplit

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import py_block, table_output_checks
from .formats import render_lines
from .seeds import PRODUCTS, money, seed_records
from .trees import place_tree

REASONS = {200: "OK", 429: "Too Many Requests", 503: "Service Unavailable"}


def _response(status: int, ctype: str, body: bytes, rid: str, lower: bool) -> bytes:
    heads = [("Date", "Tue, 05 Mar 2024 10:00:00 GMT"), ("Server", "nginx/1.24.0"), ("Content-Type", ctype),
             ("Content-Length", str(len(body))), ("X-Request-Id", rid)]
    lines = [f"HTTP/1.1 {status} {REASONS[status]}"] + [f"{k.lower() if lower else k}: {v}" for k, v in heads]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def seed_responses(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    n = rng.randint(4, 6)
    bad = rng.randrange(1, n + 1)
    next_id = rng.randint(100, 400)
    files, items_seen = [], []
    for page in range(1, n + 1):
        rid = f"{rng.getrandbits(32):08x}"
        if page == bad:
            status = rng.choice([429, 503])
            body, ctype = (b'{"error": "rate limited"}', "application/json") if status == 429 else \
                (b"<h1>503 Service Unavailable</h1>\n", "text/html")
        else:
            status, ctype = 200, rng.choice(["application/json", "application/json; charset=utf-8",
                                             "Application/JSON; charset=UTF-8"])
            items = []
            if items_seen and rng.random() < 0.5:
                items.append(rng.choice(items_seen))       # the API repeats an item across pages
            for _ in range(rng.randint(3, 6)):
                next_id += rng.randint(1, 9)
                items.append({"id": next_id, "sku": f"SKU-{rng.randint(10000, 99999)}",
                              "name": f"{rng.choice(PRODUCTS)} {rng.choice(['mini', 'pro', 'max', 'kit'])}",
                              "price": money(rng, 1, 300), "stock": rng.randint(0, 90)})
            items_seen += items
            body = (json.dumps({"page": page, "items": items}) + "\n").encode()
        files.append((f"page-{page}.http", _response(status, ctype, body, rid, rng.random() < 0.3)))
    root = ctx.claim(rng.choice(["/app/input/responses", "/app/input/api-dump", "/app/input/captured"]))
    place_tree(ctx, root, files)
    return Artifact("tree", root, fmt="dir", files=tuple(files), flavor="http-responses", label="catalog")


def parse_response(raw: bytes):
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])}
    return status, headers, body


def _merge_build(ctx: StepContext, a: Artifact) -> Fragment:
    summary, items = [], {}
    for name, raw in sorted(a.files):
        status, headers, body = parse_response(raw)
        media = headers["content-type"].split(";")[0].strip().lower()
        summary.append((name, status, media, int(headers["content-length"])))
        if status == 200 and media == "application/json":
            for it in json.loads(body)["items"]:
                items[it["id"]] = it
    rpath = ctx.claim(f"/app/out/{ctx.rng.choice(['responses', 'response_summary', 'pages'])}.csv")
    ipath = ctx.claim(f"/app/out/{a.label}_items.json")
    cols = ("id", "sku", "name", "price", "stock")
    rows = [tuple(items[k][c] for c in cols) for k in sorted(items)]
    out = Artifact("records", ipath, fmt="json", table=Table(cols, ("int", "str", "str", "float", "int"), tuple(rows)),
                   label=f"{a.label}_items")
    checks = [Check(f"Write `{rpath}` as a CSV file with the header `file,status,media_type,content_length` and one row "
                    f"per file in `{a.path}` (file name only), giving the status code, the media type from "
                    f"`Content-Type` in lower case without parameters and the `Content-Length` value, ordered by file.",
                    [("responses", f"cols, rows = read_table({rpath!r})\nassert cols == ['file', 'status', 'media_type', 'content_length']\n"
                                   f"check_rows(rows, cols, {[list(s) for s in summary]!r})")])]
    checks += table_output_checks(out, a.path, "by `id` ascending", [list(r) for r in rows],
                                  f"Write `{ipath}` as a JSON array holding every object of the `items` lists in the "
                                  f"bodies of the responses with status 200 and media type `application/json`, each "
                                  f"`id` only once.")
    checks.append(Check("Treat header names case-insensitively, as HTTP does.",
                        [("headers", f"cols, rows = read_table({rpath!r})\n"
                                     f"assert all(r['media_type'] for r in rows) and len(rows) == {len(summary)}")]))
    body = f'''
import os
summary, items = [], {{}}
root = {a.path!r}
for name in sorted(os.listdir(root)):
    raw = open(os.path.join(root, name), "rb").read()
    head, _, data = raw.partition(b"\\r\\n\\r\\n")
    lines = head.decode().split("\\r\\n")
    status = int(lines[0].split()[1])
    h = {{k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])}}
    media = h["content-type"].split(";")[0].strip().lower()
    summary.append({{"file": name, "status": status, "media_type": media, "content_length": int(h["content-length"])}})
    if status == 200 and media == "application/json":
        for it in json.loads(data)["items"]:
            items[it["id"]] = it
write({rpath!r}, "csv", ["file", "status", "media_type", "content_length"], summary)
write({ipath!r}, "json", {list(cols)!r}, [items[k] for k in sorted(items)])
'''
    intro = f"{describe(a)[0].upper()}{describe(a)[1:]} holds raw HTTP responses saved from a paginated catalog API."
    return Fragment("Merge saved API responses", intro, checks,
                    py_block(None, body), out)


register(Recipe("http-pages-merge", "networking-http", "Merge saved API responses",
                lambda a: a.kind == "tree" and a.flavor == "http-responses", seed_responses, _merge_build, weight=2,
                consumes="saved HTTP responses", kinds=("http-response",)))


# --- http-request-compose ------------------------------------------------------------------------

def _request_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    t = a.table
    token_path = ctx.add_input(ctx.claim(rng.choice(["/app/input/api_token", "/app/input/token.txt", "/app/input/ingest.token"])), f"{rng.getrandbits(128):032x}\n")
    token = ctx.env[token_path[len('/app/'):]].decode().strip()
    stem = stem_of(a)
    payload = ctx.claim(f"/app/out/{stem}_payload.json")
    req = ctx.claim(f"/app/out/{stem}_upload.http")
    host = rng.choice(["api.example.internal", "ingest.example.org"])
    target = f"/v1/import?source={stem}"
    out = a.moved(payload, fmt="json")
    checks = table_output_checks(out, a.path, "in the same order as the rows of the input", [list(r) for r in t.rows],
                                 f"Write `{payload}` as a JSON array with one object per row of `{a.path}`, using the "
                                 f"column names as keys.")
    checks = [c for c in checks if "Order the rows" not in c.sentence]
    checks.insert(1, Check(f"Keep the objects of `{payload}` in the same order as the rows of `{a.path}`.",
                           [("order", f"cols, rows = read_table({payload!r}, 'json')\n"
                                      f"check_rows(rows, {list(t.columns)!r}, {[list(r) for r in t.rows]!r})")]))
    parse = (f"raw = Path({req!r}).read_bytes()\nhead, sep, body = raw.partition(b'\\r\\n\\r\\n')\nassert sep, 'no blank CRLF line after the headers'\n"
             f"lines = head.decode().split('\\r\\n')\nh = {{k.strip().lower(): v.strip() for k, v in (x.split(':', 1) for x in lines[1:])}}")
    checks += [
        Check(f"Write `{req}` as a raw HTTP/1.1 request, with CRLF line endings in its request line and headers, that "
              f"sends `{payload}` with `POST` to `{target}` on the host `{host}`.",
              [("request_line", f"{parse}\nassert lines[0] == {f'POST {target} HTTP/1.1'!r}\nassert h.get('host') == {host!r}")]),
        Check(f"Give the request the headers `Content-Type: application/json` and `Authorization: Bearer <token>`, where "
              f"`<token>` is the content of `{token_path}` without its trailing newline.",
              [("auth", f"{parse}\nassert h.get('content-type', '').split(';')[0].strip() == 'application/json'\n"
                        f"assert h.get('authorization') == {'Bearer ' + token!r}")]),
        Check(f"Make the request body exactly the bytes of `{payload}` and give its length in `Content-Length`.",
              [("body", f"{parse}\nassert body == Path({payload!r}).read_bytes()\nassert h.get('content-length') == str(len(body))")]),
    ]
    body = f'''
rows = load({a.path!r})
write({payload!r}, "json", {list(t.columns)!r}, rows)
'''
    solve = py_block(a, body) + f"""
tok=$(tr -d '\\n' < {token_path})
len=$(wc -c < {payload})
{{ printf 'POST {target} HTTP/1.1\\r\\nHost: {host}\\r\\nAuthorization: Bearer %s\\r\\nContent-Type: application/json\\r\\nContent-Length: %s\\r\\n\\r\\n' "$tok" "$len"; cat {payload}; }} > {req}"""
    intro = (f"The import API cannot be reached from here, so prepare the upload of {describe(a)} as a request file "
             f"that can be replayed later.")
    return Fragment("Prepare the API upload request", intro, checks, solve, out)


register(Recipe("http-request-compose", "networking-http", "Compose a raw HTTP request",
                lambda a: a.kind == "records" and a.exact and len(a.table.rows) >= 1, lambda ctx: seed_records(ctx),
                _request_build, weight=2, consumes="records", kinds=("http-response",)))


# --- url-inventory -----------------------------------------------------------------------------

def seed_urls(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    hosts = rng.sample(["docs.example.com", "api.example.com", "cdn.example.net", "status.example.org",
                        "shop.example.io", "git.example.dev"], rng.randint(3, 5))
    paths = ["", "/", "/index.html", "/v2/items", "/search", "/assets/app.js", "/about"]
    lines = []
    for _ in range(rng.randint(18, 28)):
        scheme = rng.choice(["https", "https", "http", "HTTPS"])
        host = rng.choice(hosts)
        host = host.upper() if rng.random() < 0.2 else host
        default = {"https": 443, "http": 80}[scheme.lower()]
        port = rng.choice(["", "", "", f":{default}", ":8080"])
        query = rng.choice(["", "", "?page=2", "?q=lamp&sort=asc"])
        frag = rng.choice(["", "", "#top", "#section-2"])
        lines.append(f"{scheme}://{host}{port}{rng.choice(paths)}{query}{frag}")
    path = ctx.claim(f"/app/input/{rng.choice(['urls', 'links', 'bookmarks'])}.txt")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="urls", label="urls")


def normalise_url(u: str) -> str:
    s = urlsplit(u)
    scheme, host = s.scheme.lower(), (s.hostname or "").lower()
    port = s.port
    netloc = host if port is None or port == {"https": 443, "http": 80}[scheme] else f"{host}:{port}"
    return f"{scheme}://{netloc}{s.path or '/'}" + (f"?{s.query}" if s.query else "")


def _urls_build(ctx: StepContext, a: Artifact) -> Fragment:
    norm = sorted({normalise_url(u) for u in a.lines})
    counts = Counter(urlsplit(u).hostname for u in norm)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    npath = ctx.claim(f"/app/out/{stem_of(a)}_normalised.txt")
    hpath = ctx.claim(f"/app/out/{stem_of(a)}_hosts.csv")
    out = Artifact("records", hpath, fmt="csv", table=Table(("host", "urls"), ("str", "int"), tuple(rows)),
                   label=f"{a.label}_hosts")
    checks = [
        Check(f"Write `{npath}` with every URL of `{a.path}` normalised (scheme and host in lower case, the port removed "
              f"when it is the scheme's default, the fragment dropped, an empty path written as `/`, the query kept).",
              [("normalised", f"assert set(read_lines({npath!r})) == set({norm!r})")]),
        Check(f"List each normalised URL once in `{npath}`, sorted.",
              [("normalised_sorted", f"assert read_lines({npath!r}) == {norm!r}")]),
    ]
    checks += table_output_checks(out, a.path, "by `urls` from largest to smallest, breaking ties by `host` ascending",
                                  [list(r) for r in rows],
                                  f"Write `{hpath}` as a CSV file with a header row and one row per host name (without "
                                  f"port) giving the number of distinct normalised URLs on it as `urls`.")
    body = f'''
from urllib.parse import urlsplit
from collections import Counter
def norm(u):
    s = urlsplit(u.strip())
    scheme, host, port = s.scheme.lower(), s.hostname.lower(), s.port
    netloc = host if port is None or port == {{"https": 443, "http": 80}}[scheme] else f"{{host}}:{{port}}"
    return f"{{scheme}}://{{netloc}}{{s.path or '/'}}" + (f"?{{s.query}}" if s.query else "")
urls = sorted({{norm(l) for l in open({a.path!r}) if l.strip()}})
open({npath!r}, "w").write("".join(u + "\\n" for u in urls))
c = Counter(urlsplit(u).hostname for u in urls)
write({hpath!r}, "csv", ["host", "urls"], [{{"host": h, "urls": n}} for h, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))])
'''
    return Fragment("Normalise the URL list", f"{describe(a)[0].upper()}{describe(a)[1:]} was collected from many "
                    f"sources and is inconsistent.", checks, "mkdir -p /app/out\n" + py_block(None, body), out)


register(Recipe("url-inventory", "networking-http", "Normalise a URL list",
                lambda a: a.kind == "lines" and a.flavor == "urls", seed_urls, _urls_build, weight=1, consumes="urls", kinds=("text-file",)))
