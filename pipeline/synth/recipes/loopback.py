"""networking-http family over loopback: start a small HTTP service the task ships on 127.0.0.1,
probe its status codes, page through its token-protected API, and write a health-check script
that the tests run against their own copy of the service.

Reads: its own service folder (it starts a path; the sandbox has no network, only loopback).
Leaves: records — the API's items as a JSON array, for any records family.
"""
from __future__ import annotations

import json

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, register
from .common import table_output_checks
from .seeds import PRODUCTS, money

SERVER = '''#!/usr/bin/env python3
"""A catalog API for local testing.

usage: api_server.py --port PORT [--unhealthy]
  --unhealthy  answer 503 on /health (to try out monitors)
"""
import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ITEMS = json.loads(__ITEMS__)
PAGE = __PAGE__
LEGACY = __LEGACY__
HERE = os.path.dirname(os.path.abspath(__file__))


class Handler(BaseHTTPRequestHandler):
    unhealthy = False

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/json", extra=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/health":
            return self.send(503 if self.unhealthy else 200, "down\\n" if self.unhealthy else "ok\\n", "text/plain")
        if url.path == LEGACY:
            return self.send(301, "", "text/plain", [("Location", "/v1/items?page=1")])
        if url.path == "/v1/items":
            with open(os.path.join(HERE, "token")) as fh:
                token = fh.read().strip()
            if self.headers.get("X-Api-Token") != token:
                return self.send(401, json.dumps({"error": "X-Api-Token required"}))
            page = int(parse_qs(url.query).get("page", ["1"])[0])
            chunk = ITEMS[(page - 1) * PAGE:page * PAGE]
            nxt = f"/v1/items?page={page + 1}" if page * PAGE < len(ITEMS) else None
            return self.send(200, json.dumps({"page": page, "items": chunk, "next": nxt}))
        return self.send(404, json.dumps({"error": "not found"}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--unhealthy", action="store_true")
    args = ap.parse_args()
    Handler.unhealthy = args.unhealthy
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
'''
TITLES = ["Probe the local API", "Query a service on loopback", "Talk to the local service"]
INTROS = ["`{root}` ships a small catalog API; the sandbox has no network, but loopback works.",
          "A catalog service is in `{root}`: run it locally and talk to it over 127.0.0.1.",
          "The API in `{root}` only listens on loopback; start it and query it there."]
LEGACY_PATHS = ["/catalog", "/api/v0/items", "/items.json", "/old/catalog"]
OTHER_PATHS = ["/admin", "/robots.txt", "/v2/items", "/status"]

# Test body: the script runs against the test's own copy of the service (a solution cannot have
# edited it), healthy, unhealthy and with nothing listening.
HEALTH_TEST = '''import socket, sys, time
tmp = tempfile.mkdtemp()
try:
    server = Path(tmp, "api_server.py")
    server.write_text({server!r})
    Path(tmp, "token").write_text("t\\n")
    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    def answer(flags):
        port = free_port()
        proc = subprocess.Popen([sys.executable, str(server), "--port", str(port), *flags])
        try:
            for _ in range(100):
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                    break
                time.sleep(0.05)
            return run(["bash", {script!r}, str(port)], timeout=30).returncode
        finally:
            proc.kill()
            proc.wait()
    assert answer([]) == 0, "healthy service: expected exit 0"
    assert answer(["--unhealthy"]) == 1, "service answering 503: expected exit 1"
    assert run(["bash", {script!r}, str(free_port())], timeout=30).returncode == 1, "nothing listening: expected exit 1"
finally:
    shutil.rmtree(tmp, ignore_errors=True)'''


def seed_service(ctx: StepContext) -> Artifact:
    """The service folder: the server with its catalog, its token, and the paths to probe."""
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/service", "/app/catalog-api", "/app/api"]))
    next_id = rng.randint(100, 400)
    items = []
    for _ in range(rng.randint(7, 14)):
        next_id += rng.randint(1, 9)
        items.append({"id": next_id, "sku": f"SKU-{rng.randint(10000, 99999)}",
                      "name": f"{rng.choice(PRODUCTS)} {rng.choice(['mini', 'pro', 'max', 'kit'])}",
                      "price": money(rng, 1, 300), "stock": rng.randint(0, 90)})
    rng.shuffle(items)     # the API pages in its own order, not by id
    legacy = rng.choice(LEGACY_PATHS)
    server = (SERVER.replace("__ITEMS__", repr(json.dumps(items))).replace("__PAGE__", str(rng.randint(3, 5)))
              .replace("__LEGACY__", repr(legacy)))
    probes = ["/health", legacy, "/v1/items", f"/v1/items?page={rng.randint(1, 2)}"] + rng.sample(OTHER_PATHS, 2)
    rng.shuffle(probes)
    files = (("api_server.py", server.encode()), ("token", f"{rng.getrandbits(96):024x}\n".encode()),
             ("probe_paths.txt", "".join(p + "\n" for p in probes).encode()))
    for rel, data in files:
        ctx.add_input(f"{root}/{rel}", data, executable=rel.endswith(".py"))
    cols = ("id", "sku", "name", "price", "stock")
    table = Table(cols, ("int", "str", "str", "float", "int"), tuple(tuple(it[c] for c in cols) for it in items))
    # What the service holds, for the build: its catalog (API order) and the paths to probe.
    return Artifact("tree", root, fmt="dir", files=files, flavor="loopback-api", label="catalog",
                    lines=tuple(probes), table=table)


def _status(path: str, legacy: str) -> int:
    bare = path.split("?", 1)[0]
    return 200 if bare == "/health" else 301 if bare == legacy else 401 if bare == "/v1/items" else 404


def _probe_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    root = a.path
    files = dict(a.files)
    server_src = files["api_server.py"].decode()
    legacy = next(p for p in a.lines if p in LEGACY_PATHS)
    port = rng.randint(18000, 18999)
    probe_csv = ctx.claim(f"/app/out/{rng.choice(['probe', 'status_codes', 'endpoint_status'])}.csv")
    items_path = ctx.claim(f"/app/out/{a.label}_items.json")
    script = ctx.claim(f"/app/bin/{rng.choice(['healthcheck', 'check-health', 'probe-health'])}.sh")
    probes = [[p, _status(p, legacy)] for p in a.lines]
    rows = tuple(sorted(a.table.rows))
    out = Artifact("records", items_path, fmt="json", table=Table(a.table.columns, a.table.types, rows),
                   label=f"{a.label}_items")
    checks = [
        Check(f"Run `{root}/api_server.py` on 127.0.0.1 port {port} and write `{probe_csv}` as a CSV file with the header "
              f"`path,status` and one row per line of `{root}/probe_paths.txt`, in that order, giving the status code "
              f"of a plain GET of that path (no redirect followed, no extra header).",
              [("probe", f"cols, rows = read_table({probe_csv!r})\nassert cols == ['path', 'status']\n"
                         f"check_rows(rows, cols, {probes!r})")]),
    ]
    checks += table_output_checks(out, root, "by `id` ascending", [list(r) for r in rows],
                                  f"Write `{items_path}` as a JSON array of every item the service lists under "
                                  f"`/v1/items`, fetching `page=1` first and then each `next` link until it is null, "
                                  f"with the header `X-Api-Token` set to the content of `{root}/token`.")
    checks.append(Check(f"Write `{script}`, a bash script that exits 0 when the service answers 200 on `/health` at "
                        f"127.0.0.1 on the port given as its first argument and exits 1 otherwise, nothing listening "
                        f"included.", [("health_script", HEALTH_TEST.format(server=server_src, script=script))]))
    solve = f"""mkdir -p /app/out /app/bin
python3 {root}/api_server.py --port {port} &
server=$!
base=http://127.0.0.1:{port}
for _ in $(seq 100); do    # listening yet? (ss: the socket table, no request sent)
  ss -ltnH "sport = :{port}" | grep -q LISTEN && break
  sleep 0.1
done
# curl follows no redirect unless told (-L): a 301 is reported as such
echo path,status > {probe_csv}
while read -r p; do
  [ -n "$p" ] || continue
  code=$(curl -s -o /dev/null -w '%{{http_code}}' "$base$p")
  echo "$p,$code" >> {probe_csv}
done < {root}/probe_paths.txt
python3 - <<'PY'
import http.client, json
def get(path, headers={{}}):
    conn = http.client.HTTPConnection("127.0.0.1", {port}, timeout=5)
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    return resp.status, resp.read()
token = open({root + '/token'!r}).read().strip()
items, path = [], "/v1/items?page=1"
while path:
    status, body = get(path, {{"X-Api-Token": token}})
    assert status == 200, (path, status)
    page = json.loads(body)
    items += page["items"]
    path = page["next"]
with open({items_path!r}, "w") as fh:
    json.dump(sorted(items, key=lambda it: it["id"]), fh, indent=2)
PY
kill "$server"
cat > {script} <<'SH'
#!/bin/bash
port=${{1:?usage: $0 PORT}}
[ "$(curl -s -o /dev/null --max-time 3 -w '%{{http_code}}' "http://127.0.0.1:$port/health")" = 200 ]
SH"""
    return Fragment(rng.choice(TITLES), rng.choice(INTROS).format(root=root), checks, solve, out)


register(Recipe("loopback-api-probe", "networking-http", "Run and query an HTTP service on loopback",
                lambda a: a.kind == "tree" and a.flavor == "loopback-api", seed_service, _probe_build, weight=2,
                consumes="its own service folder (starts a path)",
                kinds=("http-service", "http-response", "json-document", "shell-script")))
