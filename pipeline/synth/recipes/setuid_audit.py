"""security-permissions family: audit an installed vendor tree for setuid/setgid files and
world-writable entries, report them, then fix them (keeping the setuid helpers an allowlist names).

Reads: its own vendor tree (it starts a path; the modes are set at image build time).
Leaves: records — the findings (path, issue), for any records family.
"""
from __future__ import annotations

import stat

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, register
from .common import table_output_checks

VENDORS = ["acme-tools", "legacy-suite", "vendor-app", "labkit", "printsrv"]
TOOLS = ["backup", "report", "sync", "mount-helper", "ping-wrap", "update", "cleanup", "export"]
TITLES = ["Audit the special permission bits", "Find and fix risky modes", "Clean up setuid and world-writable files"]
INTROS = ["`{root}` came from a vendor installer that was careless with file modes.",
          "An old package left `{root}` with setuid programs and writable files; only some are meant to be.",
          "Before `{root}` goes to production its special permission bits need an audit."]


def _plan(rng) -> tuple[dict[str, int], set[str]]:
    """{relative path: mode before} for every entry (folders end in '/'), and the allowlisted paths."""
    tools = rng.sample(TOOLS, 5)
    modes = {"bin/": 0o755, "lib/": 0o755, "share/": 0o755, "var/": 0o755, "var/cache/": 0o755,
             "lib/libcore.so": 0o644, "lib/libnet.so": 0o644, "share/README": 0o644, "share/defaults.conf": 0o644,
             "var/cache/index.db": 0o644}
    modes.update({f"bin/{t}": 0o755 for t in tools})
    suid = rng.sample(tools, 3)
    for t in suid:
        modes[f"bin/{t}"] = 0o4755
    sgid = [t for t in tools if t not in suid][0]
    modes[f"bin/{sgid}"] = 0o2755
    for rel in rng.sample(["share/defaults.conf", "var/cache/index.db", "lib/libnet.so", "share/README"], 2):
        modes[rel] = 0o666
    modes[rng.choice(["var/cache/", "var/", "share/"])] = 0o777
    allowed = {f"bin/{suid[0]}"}
    return modes, allowed


def seed_vendor_tree(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    root = ctx.claim(f"/app/opt/{rng.choice(VENDORS)}")
    modes, allowed = _plan(rng)
    files = []
    for rel in sorted(p for p in modes if not p.endswith("/")):
        body = f"#!/bin/sh\necho {rel.rsplit('/', 1)[1]}\n" if rel.startswith("bin/") else f"# {rel}\n"
        files.append((rel, body.encode()))
        ctx.add_input(f"{root}/{rel}", body)
    files.append(("ALLOWED_SETUID", "".join(p + "\n" for p in sorted(allowed)).encode()))
    ctx.add_input(f"{root}/ALLOWED_SETUID", files[-1][1])
    by_mode: dict[int, list[str]] = {}
    for rel, m in sorted(modes.items()):
        by_mode.setdefault(m, []).append(f"{root}/{rel}".rstrip("/"))
    ctx.docker_run.append(" && ".join(f"chmod {m:04o} {' '.join(ps)}" for m, ps in sorted(by_mode.items())))
    # The tree's table: each entry with its mode before, for the build (and the allowlist as lines).
    table = Table(("path", "mode"), ("str", "int"), tuple(sorted(modes.items())))
    return Artifact("tree", root, fmt="dir", files=tuple(files), flavor="vendor-modes", label=root.rsplit("/", 1)[1],
                    table=table, lines=tuple(sorted(allowed)))


def _findings(modes: dict[str, int]) -> list[tuple[str, str]]:
    out = []
    for rel, m in modes.items():
        path = rel.rstrip("/")
        if not rel.endswith("/") and m & stat.S_ISUID:
            out.append((path, "setuid"))
        if not rel.endswith("/") and m & stat.S_ISGID:
            out.append((path, "setgid"))
        if m & stat.S_IWOTH:
            out.append((path, "world-writable"))
    return sorted(out)


def _audit_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    root = a.path
    modes = dict(a.table.rows)
    allowed = set(a.lines)
    after = {}
    for rel, m in modes.items():
        keep = m & (stat.S_ISUID | stat.S_ISGID) if rel in allowed else 0
        after[rel.rstrip("/")] = (m & 0o777 & ~stat.S_IWOTH) | keep
    rows = _findings(modes)
    report = ctx.claim(f"/app/out/{a.label}_{rng.choice(['audit', 'findings', 'mode_audit'])}.csv")
    out = Artifact("records", report, fmt="csv", table=Table(("path", "issue"), ("str", "str"), tuple(rows)),
                   label=f"{a.label}_findings")
    special = {p: m & 0o7000 for p, m in after.items()}
    checks = table_output_checks(out, root, "by `path`, then `issue`, ascending", [list(r) for r in rows],
                                 f"Write `{report}` as a CSV file with a header row and one row per finding under "
                                 f"`{root}` as it was before any fix, giving the `path` relative to `{root}` and the "
                                 f"`issue`: `setuid` or `setgid` for a regular file with that bit, `world-writable` "
                                 f"for a file or folder others may write to.")
    checks += [
        Check(f"Clear the setuid and setgid bits of every file under `{root}` except the files `{root}/ALLOWED_SETUID` "
              f"lists, which keep theirs.",
              [("special_bits", f"for rel, bits in {special!r}.items():\n"
                                f"    got = os.lstat(Path({root!r}, rel)).st_mode & 0o7000\n"
                                f"    assert got == bits, (rel, oct(got), oct(bits))")]),
        Check(f"Take write permission away from others on every file and folder under `{root}`, leaving every other "
              f"permission bit as it was.",
              [("modes", f"for rel, mode in {after!r}.items():\n"
                         f"    got = stat.S_IMODE(os.lstat(Path({root!r}, rel)).st_mode)\n"
                         f"    assert got & 0o777 == mode & 0o777, (rel, oct(got), oct(mode))")]),
    ]
    solve = f"""mkdir -p /app/out
python3 - <<'PY'
import csv, os, stat
root = {root!r}
allowed = {{l.strip() for l in open(os.path.join(root, "ALLOWED_SETUID")) if l.strip()}}
entries = sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs)
found = []
for rel in entries:
    m = os.lstat(os.path.join(root, rel)).st_mode
    if stat.S_ISREG(m) and m & stat.S_ISUID:
        found.append((rel, "setuid"))
    if stat.S_ISREG(m) and m & stat.S_ISGID:
        found.append((rel, "setgid"))
    if m & stat.S_IWOTH:
        found.append((rel, "world-writable"))
with open({report!r}, "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\\n")
    w.writerow(["path", "issue"])
    w.writerows(sorted(found))
for rel in entries:
    p = os.path.join(root, rel)
    m = stat.S_IMODE(os.lstat(p).st_mode)
    if stat.S_ISREG(os.lstat(p).st_mode) and rel not in allowed:
        m &= ~(stat.S_ISUID | stat.S_ISGID)
    os.chmod(p, m & ~stat.S_IWOTH)
PY"""
    return Fragment(rng.choice(TITLES), rng.choice(INTROS).format(root=root), checks, solve, out)


register(Recipe("setuid-audit", "security-permissions", "Audit and fix setuid and world-writable modes",
                lambda a: a.kind == "tree" and a.flavor == "vendor-modes", seed_vendor_tree, _audit_build, weight=2,
                consumes="its own vendor tree (starts a path)", kinds=("file-permissions",)))
