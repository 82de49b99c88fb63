"""dependency-management families: pin a dependency closure from a lock-like file; resolve
version constraints against an index; vendor a data dependency with a hash lock."""
from __future__ import annotations

import json
import re

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register
from .common import py_block, table_output_checks
from .formats import render_lines
from .seeds import seed_any

GRAPH = {
    "requests": ["urllib3", "idna", "charset-normalizer", "certifi"],
    "flask": ["werkzeug", "jinja2", "itsdangerous", "click", "blinker"],
    "jinja2": ["markupsafe"], "werkzeug": ["markupsafe"],
    "pandas": ["numpy", "python-dateutil", "pytz", "tzdata"], "python-dateutil": ["six"],
    "sqlalchemy": ["greenlet", "typing-extensions"],
    "pydantic": ["pydantic-core", "typing-extensions", "annotated-types"], "pydantic-core": ["typing-extensions"],
    "rich": ["markdown-it-py", "pygments"], "markdown-it-py": ["mdurl"],
    "httpx": ["anyio", "certifi", "httpcore", "idna", "sniffio"], "httpcore": ["certifi", "h11"],
    "anyio": ["idna", "sniffio"], "pyyaml": [], "attrs": [],
}
SPELLINGS = {"jinja2": "Jinja2", "markupsafe": "MarkupSafe", "pyyaml": "PyYAML", "typing-extensions": "typing_extensions",
             "charset-normalizer": "charset_normalizer", "python-dateutil": "python_dateutil", "sqlalchemy": "SQLAlchemy",
             "pygments": "Pygments", "markdown-it-py": "markdown_it.py", "pydantic-core": "pydantic_core"}


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def seed_lock(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    roots = rng.sample(["requests", "flask", "pandas", "sqlalchemy", "pydantic", "rich", "httpx", "pyyaml", "attrs"],
                       rng.randint(3, 4))
    names = sorted({d for r in roots for d in _closure([r])} | {"attrs", "pyyaml", "rich"})
    spell = lambda n: SPELLINGS.get(n, n) if rng.random() < 0.7 else n.upper()  # noqa: E731
    lock = {spell(n): {"version": f"{rng.randint(0, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
                       "requires": [spell(d) for d in GRAPH.get(n, [])]} for n in names}
    req_in = ["# direct dependencies of the service"]
    for r in roots:
        shown = rng.choice([r, SPELLINGS.get(r, r), r.upper()])
        extra = rng.choice(["", "", "[socks]" if r == "requests" else "", ">=1.0", " ~= 2.0"])
        req_in.append(shown + extra)
        if rng.random() < 0.3:
            req_in.append("")
    req_in.append(rng.choice(roots).capitalize() + "  # listed twice on purpose")
    root = ctx.claim(rng.choice(["/app/input/deps", "/app/input/project", "/app/input/app-src"]))
    ctx.add_input(f"{root}/requirements.in", render_lines(req_in))
    ctx.add_input(f"{root}/resolved.json", json.dumps({"packages": lock}, indent=2) + "\n")
    files = (("requirements.in", render_lines(req_in)), ("resolved.json", (json.dumps({"packages": lock}, indent=2) + "\n").encode()))
    return Artifact("tree", root, fmt="dir", files=files, flavor="lock", label="deps")


def _closure(roots: list[str]) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += GRAPH.get(n, [])
    return seen


def _pin_build(ctx: StepContext, a: Artifact) -> Fragment:
    files = dict(a.files)
    lock = {canon(k): v for k, v in json.loads(files["resolved.json"])["packages"].items()}
    direct = set()
    for line in files["requirements.in"].decode().splitlines():
        line = line.split("#")[0].strip()
        if line:
            direct.add(canon(re.match(r"[A-Za-z0-9._-]+", line).group(0)))
    depth = {d: 0 for d in direct}
    frontier = sorted(direct)
    while frontier:
        nxt = []
        for n in frontier:
            for d in lock[n]["requires"]:
                d = canon(d)
                if d not in depth:
                    depth[d] = depth[n] + 1
                    nxt.append(d)
        frontier = nxt
    needed = sorted(depth)
    required_by = {n: sum(1 for m in needed if n in {canon(x) for x in lock[m]["requires"]}) for n in needed}
    pins = [f"{n}=={lock[n]['version']}" for n in needed]
    req = ctx.claim("/app/out/requirements.txt")
    path = ctx.claim(f"/app/out/{ctx.rng.choice(['dependencies', 'deps_report', 'packages'])}.csv")
    rows = [(n, lock[n]["version"], depth[n], required_by[n]) for n in needed]
    out = Artifact("records", path, fmt="csv", table=Table(("name", "version", "depth", "required_by"),
                                                           ("str", "str", "int", "int"), tuple(rows)), label="dependencies")
    checks = [
        Check(f"Write `{req}` pinning every package the direct requirements in `{a.path}/requirements.in` need, "
              f"directly or through the `requires` lists in `{a.path}/resolved.json`, as one `name==version` line each.",
              [("pins", f"assert set(read_lines({req!r})) == set({pins!r})")]),
        Check(f"Write the names in `{req}` normalised (lower case, every run of `-`, `_` and `.` replaced by one `-`), "
              f"without extras, specifiers or comments, sorted by name.",
              [("pins_sorted", f"assert read_lines({req!r}) == {pins!r}")]),
    ]
    checks += table_output_checks(out, a.path, "by `name` ascending", [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per pinned package giving "
                                  f"its normalised `name`, its `version`, its `depth` (0 for a direct requirement, "
                                  f"otherwise the fewest `requires` links from one) and `required_by`, the number of "
                                  f"pinned packages whose `requires` list names it.")
    body = f'''
import re
canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()
lock = {{canon(k): v for k, v in json.load(open({a.path + "/resolved.json"!r}))["packages"].items()}}
direct = set()
for line in open({a.path + "/requirements.in"!r}):
    line = line.split("#")[0].strip()
    if line:
        direct.add(canon(re.match(r"[A-Za-z0-9._-]+", line).group(0)))
depth, frontier = {{d: 0 for d in direct}}, sorted(direct)
while frontier:
    nxt = []
    for n in frontier:
        for d in map(canon, lock[n]["requires"]):
            if d not in depth:
                depth[d] = depth[n] + 1
                nxt.append(d)
    frontier = nxt
names = sorted(depth)
open({req!r}, "w").write("".join(f"{{n}}=={{lock[n]['version']}}\\n" for n in names))
rows = [{{"name": n, "version": lock[n]["version"], "depth": depth[n],
         "required_by": sum(1 for m in names if n in map(canon, lock[m]["requires"]))}} for n in names]
write({path!r}, "csv", ["name", "version", "depth", "required_by"], rows)
'''
    intro = (f"`{a.path}` holds a project's direct requirements (`requirements.in`) and a resolver's output "
             f"(`resolved.json`: each package's version and the packages it requires), spelled inconsistently.")
    return Fragment("Pin the dependency closure", intro, checks,
                    "mkdir -p /app/out\n" + py_block(None, body),
                    out)


register(Recipe("requirements-pin", "dependency-management", "Pin a dependency closure",
                lambda a: a.kind == "tree" and a.flavor == "lock", seed_lock, _pin_build, weight=2,
                consumes="requirements + lock", kinds=("dependency-manifest", "python-environment")))


# --- version-resolve ---------------------------------------------------------------------------------

def vkey(v: str) -> tuple:
    return tuple(int(x) for x in v.split("."))


def satisfies(v: str, spec: str) -> bool:
    for part in spec.split(","):
        op, ver = re.match(r"\s*(~=|==|!=|>=|<=|>|<)\s*([0-9.]+)", part).groups()
        a, b = vkey(v) + (0,) * 3, vkey(ver) + (0,) * 3
        a, b = a[:3], b[:3]
        if op == "~=":
            parts = vkey(ver)
            upper = (parts[0] + 1, 0, 0) if len(parts) == 2 else (parts[0], parts[1] + 1, 0)
            ok = b <= a < upper
        else:
            ok = {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


def seed_constraints(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    names = rng.sample(sorted(GRAPH), rng.randint(5, 7))
    index, lines = {}, ["# version constraints agreed with the platform team"]
    for i, n in enumerate(names):
        major = rng.randint(0, 3)
        vs = sorted({f"{major + rng.randint(0, 2)}.{rng.randint(0, 6)}.{rng.randint(0, 5)}" for _ in range(rng.randint(5, 9))},
                    key=vkey)
        index[n] = vs
        lo, hi = vs[rng.randrange(len(vs) // 2)], vs[-1]
        spec = rng.choice([f">={lo},<{int(hi.split('.')[0])}.0", f"~={lo.rsplit('.', 1)[0]}", f">={lo},!={hi}",
                           f"=={rng.choice(vs)}", f"<={vs[len(vs) // 2]}"])
        if i == 0:
            spec = f">={int(vs[-1].split('.')[0]) + 1}.0"      # nothing in the index satisfies this one
        lines.append(f"{n}{spec}")
    root = ctx.claim(rng.choice(["/app/input/resolve", "/app/input/constraints", "/app/input/index"]))
    files = (("constraints.txt", render_lines(lines)), ("index.json", (json.dumps(index, indent=2) + "\n").encode()))
    for rel, data in files:
        ctx.add_input(f"{root}/{rel}", data)
    return Artifact("tree", root, fmt="dir", files=files, flavor="constraints", label="resolve")


def _resolve_build(ctx: StepContext, a: Artifact) -> Fragment:
    files = dict(a.files)
    index = json.loads(files["index.json"])
    rows, unsat = [], []
    for line in files["constraints.txt"].decode().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, spec = re.match(r"([a-z0-9-]+)(.*)", line).groups()
        ok = [v for v in index[name] if satisfies(v, spec)]
        if ok:
            rows.append((name, max(ok, key=vkey), len(ok)))
        else:
            unsat.append(name)
    rows.sort()
    res = ctx.claim(f"/app/out/{ctx.rng.choice(['resolved', 'pins', 'chosen_versions'])}.txt")
    bad = ctx.claim("/app/out/unsatisfiable.txt")
    path = ctx.claim(f"/app/out/{ctx.rng.choice(['resolution', 'resolution_report', 'versions'])}.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("package", "version", "candidates"), ("str", "str", "int"),
                                                           tuple(rows)), label="resolution")
    checks = [
        Check(f"For each line of `{a.path}/constraints.txt`, choose the highest version listed for that package in "
              f"`{a.path}/index.json` that satisfies all of the line's comma-separated specifiers (with the usual meaning "
              f"of `==`, `!=`, `<`, `<=`, `>`, `>=` and `~=`, comparing versions number by number) and write `{res}` "
              f"with one `name==version` line per package that has one, sorted by name.",
              [("resolved", f"assert read_lines({res!r}) == {[f'{n}=={v}' for n, v, _ in rows]!r}")]),
        Check(f"Write `{bad}` listing, sorted, the packages for which no listed version satisfies the constraints.",
              [("unsat", f"assert read_lines({bad!r}) == {sorted(unsat)!r}")]),
    ]
    checks += table_output_checks(out, a.path, "by `package` ascending", [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per resolved package "
                                  f"giving `package`, the chosen `version` and as `candidates` how many listed versions "
                                  f"satisfy its constraints.")
    body = f'''
import re
def vkey(v): return tuple(int(x) for x in v.split("."))
def ok(v, spec):
    for part in spec.split(","):
        op, ver = re.match(r"\\s*(~=|==|!=|>=|<=|>|<)\\s*([0-9.]+)", part).groups()
        a, b = (vkey(v) + (0, 0, 0))[:3], (vkey(ver) + (0, 0, 0))[:3]
        if op == "~=":
            p = vkey(ver)
            up = (p[0] + 1, 0, 0) if len(p) == 2 else (p[0], p[1] + 1, 0)
            good = b <= a < up
        else:
            good = {{"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}}[op]
        if not good:
            return False
    return True
index = json.load(open({a.path + "/index.json"!r}))
rows, bad = [], []
for line in open({a.path + "/constraints.txt"!r}):
    if not line.strip() or line.startswith("#"):
        continue
    name, spec = re.match(r"([a-z0-9-]+)(.*)", line.strip()).groups()
    vs = [v for v in index[name] if ok(v, spec)]
    if vs:
        rows.append({{"package": name, "version": max(vs, key=vkey), "candidates": len(vs)}})
    else:
        bad.append(name)
rows.sort(key=lambda r: r["package"])
open({res!r}, "w").write("".join(f"{{r['package']}}=={{r['version']}}\\n" for r in rows))
open({bad!r}, "w").write("".join(n + "\\n" for n in sorted(bad)))
write({path!r}, "csv", ["package", "version", "candidates"], rows)
'''
    intro = f"`{a.path}` holds version constraints (`constraints.txt`) and the versions a package index offers (`index.json`)."
    return Fragment("Resolve version constraints", intro, checks,
                    "mkdir -p /app/out\n" + py_block(None, body),
                    out)


register(Recipe("version-resolve", "dependency-management", "Resolve version constraints",
                lambda a: a.kind == "tree" and a.flavor == "constraints", seed_constraints, _resolve_build, weight=2,
                consumes="constraints + index", kinds=("dependency-manifest",)))


# --- vendor-lock ------------------------------------------------------------------------------------

def _vendor_build(ctx: StepContext, a: Artifact) -> Fragment:
    vdir = ctx.claim(ctx.rng.choice(["/app/vendor", "/app/third_party", "/app/wheelhouse"]))
    dest = f"{vdir}/{a.basename}"
    lock = f"{vdir}/vendor.lock"
    ctx.used.update({dest, lock})
    rels = [f"{a.basename}/{n}" for n in a.names()] if a.kind == "tree" else [a.basename]
    checks = [
        Check(f"Vendor the data dependency by copying `{a.path}` to `{dest}`.",
              [("copied", f"assert same_files({dest!r}, {a.path!r})")]),
        Check(f"Write `{lock}` as a JSON object with `\"version\": 1` and a `files` array holding, for every file under "
              f"`{vdir}` except the lock itself, an object with its `path` relative to `{vdir}`, its `sha256` digest and "
              f"its size in `bytes`, sorted by `path`.",
              [("lock", f"data = json.loads(read_text({lock!r}))\nassert data.get('version') == 1\n"
                        f"paths = [f['path'] for f in data['files']]\nassert paths == {rels!r}, paths\n"
                        f"for f in data['files']:\n    p = Path({vdir!r}) / f['path']\n"
                        f"    assert f['sha256'] == sha256_of(p) and f['bytes'] == p.stat().st_size, f")]),
    ]
    solve = f"""mkdir -p {vdir}
cp -r {a.path} {dest}
python3 - <<'PY'
import hashlib, json, os
root = {vdir!r}
files = []
for d, _, fs in os.walk(root):
    for f in fs:
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        if rel != "vendor.lock":
            data = open(p, "rb").read()
            files.append({{"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}})
json.dump({{"version": 1, "files": sorted(files, key=lambda f: f["path"])}}, open({lock!r}, "w"), indent=2)
PY"""
    intro = f"Pin {describe(a)} as a vendored data dependency so later changes are detected."
    return Fragment("Vendor and lock the data", intro, checks, solve, a.moved(dest))


register(Recipe("vendor-lock", "dependency-management", "Vendor with a hash lock", lambda a: True, seed_any,
                _vendor_build, weight=1, universal=True, consumes="any", kinds=("dependency-manifest", "checksum-manifest")))
