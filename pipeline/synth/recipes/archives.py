"""archives-compression families: pack a result with a manifest and checksum; extract a release
archive and verify it against its SHA256SUMS; convert tar <-> ZIP; recompress gzip files with zstd
or xz (tested before the .gz goes)."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import tarfile
import zipfile

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .adapters import unpack_solve
from .seeds import FIRST, PRODUCTS, seed_any

MTIME = 1_700_000_000
FORMAT_WORDS = {"tar.gz": "a gzip-compressed tar archive", "tar.xz": "an xz-compressed tar archive",
                "tar.bz2": "a bzip2-compressed tar archive", "zip": "a ZIP archive"}


def make_archive(fmt: str, members: list[tuple[str, bytes]]) -> bytes:
    """Byte-identical for identical members: fixed mtimes, owners and compressor headers."""
    if fmt == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in members:
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
                info.external_attr = 0o644 << 16
                z.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
        return buf.getvalue()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uname, info.gname = len(data), MTIME, 0o644, "root", "root"
            t.addfile(info, io.BytesIO(data))
    data = raw.getvalue()
    if fmt == "tar.gz":
        out = io.BytesIO()
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
            gz.write(data)
        return out.getvalue()
    if fmt == "tar.xz":
        return lzma.compress(data)
    return bz2.compress(data)


def _open_check(path: str, fmt: str) -> str:
    if fmt == "zip":
        return f"assert zipfile.is_zipfile({path!r})\nnames = [n for n in zipfile.ZipFile({path!r}).namelist() if not n.endswith('/')]"
    mode = {"tar.gz": "r:gz", "tar.xz": "r:xz", "tar.bz2": "r:bz2"}[fmt]
    return f"with tarfile.open({path!r}, {mode!r}) as t:\n    names = [m.name.lstrip('./') for m in t.getmembers() if m.isfile()]"


def _read_member(path: str, fmt: str) -> str:
    """Test source defining member(name) -> bytes."""
    if fmt == "zip":
        return f"def member(n):\n    return zipfile.ZipFile({path!r}).read(n)"
    return (f"def member(n):\n    with tarfile.open({path!r}) as t:\n"
            f"        m = next(x for x in t.getmembers() if x.name.lstrip('./') == n)\n        return t.extractfile(m).read()")


def _pack_build(ctx: StepContext, a: Artifact) -> Fragment:
    fmt = ctx.pick(list(FORMAT_WORDS), {"tar.gz": {"tar", "gzip"}, "tar.xz": {"tar", "xz"}, "tar.bz2": {"tar", "bzip2"}, "zip": {"zip"}})
    stem = stem_of(a).replace("_", "-")
    path = ctx.claim(f"/app/dist/{stem}.{fmt}")
    top = f"{stem}-bundle"
    name = a.basename
    if a.kind == "tree":
        inner = list(a.files)                   # a folder's files go straight under the top folder
    else:
        inner = [(name, b"")]       # the bytes are whatever the previous step wrote: not modelled
    listing = sorted(rel for rel, _ in inner)
    manifest = ("\n".join(listing) + "\n").encode()
    members = sorted([(f"{top}/{rel}", d) for rel, d in inner] + [(f"{top}/MANIFEST.txt", manifest)])
    names = [n for n, _ in members]
    sums = ctx.claim(f"{path}.sha256")
    # member -> source path relative to a.path ("" for a single file); joined at test time
    src_map = {f"{top}/{rel}": rel for rel, _ in a.files} if a.kind == "tree" else {f"{top}/{name}": ""}
    checks = [
        Check(f"Create `{path}` as {FORMAT_WORDS[fmt]}.", [("format", _open_check(path, fmt))]),
        Check(f"Put everything in the archive under one top-level folder `{top}/` that holds "
              + (f"the files of `{a.path}` with their paths relative to it" if a.kind == "tree"
                 else f"a copy of `{a.path}` as `{top}/{name}`") + f" and a file `{top}/MANIFEST.txt`.",
              [("members", _open_check(path, fmt) + f"\nassert sorted(names) == {names!r}, sorted(names)")]),
        Check("Make every packed copy byte-identical to its source.",
              [("content", _read_member(path, fmt) + f"\nfor n, rel in {src_map!r}.items():\n"
                                                     f"    src = Path({a.path!r}) / rel if rel else Path({a.path!r})\n"
                                                     f"    assert member(n) == src.read_bytes(), n")]),
        Check(f"Make `{top}/MANIFEST.txt` list the paths of the other files in the archive relative to `{top}/`, one "
              f"per line, sorted.",
              [("manifest", _read_member(path, fmt) + f"\nlines = [l for l in member({top + '/MANIFEST.txt'!r}).decode().splitlines() if l.strip()]\n"
                                                      f"assert lines == {listing!r}")]),
        Check(f"Write `{sums}` in the format `sha256sum` prints for `{path}`, with the file name given without folders.",
              [("checksum", f"digest, name = read_text({sums!r}).split()\nassert name.lstrip('*') == {path.rsplit('/', 1)[-1]!r}\n"
                            f"assert digest == sha256_of({path!r})")]),
    ]
    flags = {"tar.gz": "czf", "tar.xz": "cJf", "tar.bz2": "cjf"}.get(fmt)
    arch = path.rsplit("/", 1)[-1]
    make = f"tar -C /tmp/pack -{flags} {path} {top}" if flags else f"(cd /tmp/pack && zip -qr {path} {top})"
    solve = f"""rm -rf /tmp/pack && mkdir -p /tmp/pack/{top} /app/dist
{f"cp -r {a.path}/. /tmp/pack/{top}/" if a.kind == "tree" else f"cp {a.path} /tmp/pack/{top}/{name}"}
(cd /tmp/pack/{top} && find . -type f | sed 's|^\\./||' | sort) > /tmp/pack/MANIFEST.txt
mv /tmp/pack/MANIFEST.txt /tmp/pack/{top}/
{make}
(cd /app/dist && sha256sum {arch} > {arch}.sha256)"""
    files = tuple((f"{top}/{rel}", d) for rel, d in inner) + ((f"{top}/MANIFEST.txt", manifest),)
    out = Artifact("archive", path, fmt=fmt, files=tuple(sorted(files)),
                   exact=a.exact and a.kind == "tree", label=a.label)
    title = ctx.rng.choice(["Pack it for shipping", "Bundle it up", "Package the result"])
    intro = ctx.rng.choice(["Package {d} for hand-over.", "{D} goes to another team as one archive.",
                            "Ship {d} as a single file."]).format(d=describe(a), D=describe(a)[0].upper() + describe(a)[1:])
    return Fragment(title, intro, checks, solve, out)


register(Recipe("archive-pack", "archives-compression", "Pack with manifest and checksum",
                lambda a: a.kind != "archive" and "MANIFEST.txt" not in a.names(), seed_any, _pack_build, weight=1,
                universal=True, consumes="any", kinds=("checksum-manifest",)))


# --- archive-extract-verify ---------------------------------------------------------------------------

def seed_release(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    ver = f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    top = f"release-{ver}"
    prod = rng.choice(PRODUCTS)
    files = {"README.md": f"# {prod} {ver}\n\nInstall with ./bin/install.sh\n",
             "bin/install.sh": f"#!/bin/sh\necho installing {prod} {ver}\n",
             "etc/config.ini": f"[main]\nname = {prod}\nworkers = {rng.randint(2, 16)}\n",
             "share/CHANGES.txt": "".join(f"- change by {rng.choice(FIRST)}\n" for _ in range(rng.randint(2, 5))),
             "lib/core.py": f"VERSION = {ver!r}\n", "lib/extra.py": "def extra():\n    return 42\n",
             "docs/manual.txt": f"{prod} manual\n" * rng.randint(2, 6)}
    names = sorted(files)
    sums = {n: hashlib.sha256(files[n].encode()).hexdigest() for n in names}
    bad = rng.sample([n for n in names if n != "README.md"], rng.randint(1, 2))
    for n in bad:
        files[n] += "# corrupted in transit\n"
    missing = "lib/legacy.py"
    sums[missing] = hashlib.sha256(b"legacy\n").hexdigest()
    sumfile = "".join(f"{sums[n]}  {n}\n" for n in sorted(sums)).encode()
    members = sorted([(f"{top}/{n}", files[n].encode()) for n in names] + [(f"{top}/SHA256SUMS", sumfile)])
    fmt = rng.choice(sorted(FORMAT_WORDS))
    path = ctx.claim(f"/app/input/{top}.{fmt}")
    ctx.add_input(path, make_archive(fmt, members))
    status = {n: ("mismatch" if n in bad else "ok") for n in names}
    status[missing] = "missing"
    return Artifact("archive", path, fmt=fmt, files=tuple(members), flavor=f"release:{top}",
                    label=f"release-{ver}", lines=tuple(f"{n}\t{status[n]}" for n in sorted(status)))


def _extract_build(ctx: StepContext, a: Artifact) -> Fragment:
    dest = ctx.claim(f"/app/{'release' if a.flavor.startswith('release:') else 'unpacked'}")
    if a.flavor.startswith("release:"):
        top = a.flavor.split(":", 1)[1]
        status = dict(x.split("\t") for x in a.lines)
        bad = {f"{top}/{n}" for n, s in status.items() if s == "mismatch"}
        kept = tuple((n, d) for n, d in a.files if n not in bad)
        digests = {n: hashlib.sha256(d).hexdigest() for n, d in kept}
        report = ctx.claim(f"/app/out/{top}_check.csv")
        rows = [[n, status[n]] for n in sorted(status)]
        checks = [
            Check(f"Extract `{a.path}` into the folder `{dest}` so that its top-level folder `{top}/` ends up inside it.",
                  [("extracted", f"root = Path({dest!r})\nfor rel, digest in {digests!r}.items():\n"
                                 f"    assert sha256_of(root / rel) == digest, rel")]),
            Check(f"Write `{report}` as a CSV file with the header `file,status` and one row per entry of "
                  f"`{top}/SHA256SUMS` (paths relative to `{top}/`), where `status` is `ok` when the extracted file's "
                  f"SHA-256 digest matches, `mismatch` when it differs and `missing` when the file is not in the archive.",
                  [("report", f"cols, rows = read_table({report!r})\nassert cols == ['file', 'status']\n"
                              f"check_rows(rows, cols, {rows!r}, ordered=False)")]),
            Check(f"Order the rows of `{report}` by `file` ascending.",
                  [("report_order", f"cols, rows = read_table({report!r})\ncheck_rows(rows, cols, {rows!r})")]),
            Check(f"Delete every file whose status is `mismatch` from `{dest}` and keep all the others.",
                  [("pruned", f"assert files_under({dest!r}) == {sorted(n for n, _ in kept)!r}")]),
        ]
        solve = unpack_solve(a, dest) + f"""
mkdir -p /app/out
python3 - <<'PY'
import csv, hashlib, os
root = os.path.join({dest!r}, {top!r})
rows = []
for line in open(os.path.join(root, "SHA256SUMS")):
    digest, name = line.split(None, 1)
    name = name.strip().lstrip("*")
    p = os.path.join(root, name)
    if not os.path.isfile(p):
        rows.append((name, "missing"))
    elif hashlib.sha256(open(p, "rb").read()).hexdigest() == digest:
        rows.append((name, "ok"))
    else:
        rows.append((name, "mismatch"))
        os.remove(p)
with open({report!r}, "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\\n")
    w.writerow(["file", "status"])
    w.writerows(sorted(rows))
PY"""
        out = Artifact("tree", dest, fmt="dir", files=kept, label=a.label)
        intro = (f"A release was delivered as {describe(a)}; its `SHA256SUMS` file lists the expected digest of each "
                 f"file, but some files were damaged in transit.")
        return Fragment("Extract and verify the release", intro, checks, solve, out)

    sums = ctx.claim(f"/app/out/{stem_of(a)}.sha256")
    names = a.names()
    checks = [
        Check(f"Extract `{a.path}` into the folder `{dest}`.",
              [("extracted", f"assert files_under({dest!r}) == {names!r}")]),
        Check(f"Write `{sums}` with one `sha256sum`-style line (digest, two spaces, path) for every extracted file, using "
              f"paths relative to `{dest}` sorted ascending.",
              [("sums", f"lines = read_lines({sums!r})\nassert [l.split(None, 1)[1].lstrip('*') for l in lines] == {names!r}\n"
                        f"for l in lines:\n    d, n = l.split(None, 1)\n    assert sha256_of(Path({dest!r}) / n.lstrip('*')) == d, n")]),
    ]
    solve = unpack_solve(a, dest) + f"\nmkdir -p /app/out\n(cd {dest} && find . -type f | sed 's|^\\./||' | sort | xargs -d '\\n' sha256sum) > {sums}"
    out = Artifact("tree", dest, fmt="dir", files=a.files, exact=a.exact, label=a.label)
    intro = ctx.rng.choice(["Unpack {d} and record digests.", "Open {d} and note a digest per file.",
                            "What is inside {d}, and what are its checksums?"]).format(d=describe(a))
    title = ctx.rng.choice(["Extract and fingerprint the archive", "Unpack and checksum", "Open the archive up"])
    return Fragment(title, intro, checks, solve, out)


register(Recipe("archive-extract-verify", "archives-compression", "Extract and verify an archive",
                lambda a: a.kind == "archive", seed_release, _extract_build, weight=2, consumes="archive", kinds=("checksum-manifest",)))


# --- archive-convert ---------------------------------------------------------------------------

def _members_src(path: str, fmt: str) -> str:
    """Test source defining members(p) -> {name: bytes} for the regular files of an archive at p."""
    if fmt == "zip":
        return ("def members(p):\n    with zipfile.ZipFile(p) as z:\n"
                "        return {n: z.read(n) for n in z.namelist() if not n.endswith('/')}")
    return ("def members(p):\n    with tarfile.open(p) as t:\n"
            "        return {m.name.lstrip('./'): t.extractfile(m).read() for m in t.getmembers() if m.isfile()}")


def _convert_build(ctx: StepContext, a: Artifact) -> Fragment:
    to_zip = a.fmt != "zip"
    fmt = "zip" if to_zip else "tar.gz"
    stem = a.basename[: -len(a.fmt) - 1]
    path = ctx.claim(f"/app/converted/{stem}.{fmt}")
    listing = ctx.claim(f"/app/out/{stem}_members.txt")
    src_members = _members_src(a.path, a.fmt).replace("def members(", "def src_members(")
    dst_members = _members_src(path, fmt)
    names = sorted(n for n, _ in a.files)
    checks = [
        Check(f"Create `{path}` as {FORMAT_WORDS[fmt]} holding the same regular files as `{a.path}`, under the same "
              f"paths (no leading `./`).",
              [("members", f"{src_members}\n{dst_members}\n"
                           f"assert sorted(members({path!r})) == sorted(src_members({a.path!r}))"
                           + (f"\nassert sorted(members({path!r})) == {names!r}" if a.exact else ""))]),
        Check(f"Keep every file in `{path}` byte-identical to the same file in `{a.path}`, and leave `{a.path}` in "
              f"place.",
              [("content", f"{src_members}\n{dst_members}\nsrc, dst = src_members({a.path!r}), members({path!r})\n"
                           f"assert dst and set(dst) == set(src)\nfor n in src:\n    assert dst[n] == src[n], n")]),
        Check(f"Write `{listing}` listing the paths of the files in `{path}`, sorted, one per line.",
              [("listing", f"{dst_members}\nassert read_lines({listing!r}) == sorted(members({path!r}))"
                           + (f"\nassert read_lines({listing!r}) == {names!r}" if a.exact else ""))]),
    ]
    if to_zip:
        solve = f"""rm -rf /tmp/convert && mkdir -p /tmp/convert /app/converted /app/out
tar -xf {a.path} -C /tmp/convert
(cd /tmp/convert && find . -type f | sed 's|^\\./||' | sort | zip -q -X {path} -@)"""
    else:
        solve = f"""rm -rf /tmp/convert && mkdir -p /tmp/convert /app/converted /app/out
unzip -q {a.path} -d /tmp/convert
(cd /tmp/convert && find . -type f | sed 's|^\\./||' | sort | tar -czf {path} -T -)"""
    solve += f"\n(cd /tmp/convert && find . -type f | sed 's|^\\./||' | sort) > {listing}"
    out = a.moved(path, fmt=fmt)
    intro = (f"The receiving side wants {FORMAT_WORDS[fmt]}; convert {describe(a)} without changing its layout.")
    return Fragment(f"Convert the archive to {'ZIP' if to_zip else 'tar.gz'}", intro, checks, solve, out)


register(Recipe("archive-convert", "archives-compression", "Convert between tar and ZIP",
                lambda a: a.kind == "archive", seed_release, _convert_build, weight=1, consumes="archive", kinds=("tar-archive", "zip-archive")))


# --- archive-recompress -------------------------------------------------------------------------
# gzip -> zstd (or xz) in place, each copy tested before its .gz goes; a damaged .gz stays.

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
RECOMPRESS = {"zst": ("zstd", "zstd -q -19", "Zstandard (`zstd`)"), "xz": ("xz", "xz -9", "xz")}


def seed_gz_folder(ctx: StepContext) -> Artifact:
    """Rotated gzip files, one of them cut short in transit (its trailer is gone)."""
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/archive", "/app/backups/rotated", "/app/cold-storage"]))
    label = rng.choice(["access", "orders", "events", "metrics"])
    ext = rng.choice(["log", "csv", "jsonl"])
    days = sorted(rng.sample(range(1, 29), rng.randint(4, 6)))
    damaged = rng.choice(days[1:])
    files = []
    for day in days:
        name = f"{label}-2024-03-{day:02d}.{ext}.gz"
        lines = [f"2024-03-{day:02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {rng.choice(PRODUCTS)} "
                 f"{rng.randint(1, 999)}" for _ in range(rng.randint(20, 60))]
        raw = ("\n".join(lines) + "\n").encode()
        out = io.BytesIO()
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
            gz.write(raw)
        data = out.getvalue()
        if day == damaged:
            data = data[: len(data) // 2]
            cut = hashlib.sha256(data).hexdigest()
        ctx.add_input(f"{root}/{name}", data)
        files.append((name, raw if day != damaged else b""))
    return Artifact("tree", root, fmt="dir", files=tuple(files), flavor="gz-folder", label=label,
                    lines=(f"{label}-2024-03-{damaged:02d}.{ext}.gz", cut))


def _recompress_build(ctx: StepContext, a: Artifact) -> Fragment:
    to = ctx.pick(list(RECOMPRESS), {k: {v[0]} for k, v in RECOMPRESS.items()})
    tool, command, words = RECOMPRESS[to]
    root, (damaged, damaged_sha) = a.path, a.lines
    good = {n[: -len(".gz")] + f".{to}": hashlib.sha256(d).hexdigest() for n, d in a.files if n != damaged}
    report = ctx.claim(f"/app/out/{a.label}_recompress.csv")
    rows = tuple(sorted((n, "corrupt" if n == damaged else "recompressed",
                         "" if n == damaged else hashlib.sha256(d).hexdigest()) for n, d in a.files))
    if to == "zst":
        content = ("def content(p):\n    data = Path(p).read_bytes()\n"
                   f"    assert data[:4] == {ZSTD_MAGIC!r}, f'{{p}} is not a zstd frame'\n"
                   "    return subprocess.run(['zstd', '-dc', str(p)], capture_output=True, check=True).stdout")
    else:
        content = "import lzma\ndef content(p):\n    return lzma.decompress(Path(p).read_bytes(), format=lzma.FORMAT_XZ)"
    checks = [
        Check(f"For every `.gz` file in `{root}` that decompresses without error, write its uncompressed content "
              f"compressed with {words} next to it, named like the `.gz` file with `.gz` replaced by `.{to}`.",
              [("recompressed", content + f"\nfor n, digest in {good!r}.items():\n"
                                          f"    assert hashlib.sha256(content(Path({root!r}) / n)).hexdigest() == digest, n")]),
        Check(f"Delete each good `.gz` file only after its `.{to}` copy passes `{tool} -t`, and leave a damaged `.gz` "
              f"file as it is with no `.{to}` copy.",
              [("originals", f"names = files_under({root!r})\nassert sorted(names) == {sorted([*good, damaged])!r}, names\n"
                             f"assert sha256_of(Path({root!r}, {damaged!r})) == {damaged_sha!r}")]),
        Check(f"Write `{report}` as a CSV file with the header `file,status,sha256` and one row per original `.gz` "
              f"file name, where `status` is `recompressed` or `corrupt` and `sha256` is the SHA-256 digest of the "
              f"uncompressed content (empty for a corrupt file), ordered by `file` ascending.",
              [("report", f"cols, rows = read_table({report!r})\nassert cols == ['file', 'status', 'sha256']\n"
                          f"check_rows(rows, cols, {[list(r) for r in rows]!r})")]),
    ]
    solve = f"""mkdir -p /app/out
echo file,status,sha256 > {report}
for f in $(ls {root}/*.gz | sort); do
  n=$(basename "$f")
  if gzip -t "$f" 2>/dev/null; then
    gzip -dc "$f" | {command} > "${{f%.gz}}.{to}"
    {tool} -q -t "${{f%.gz}}.{to}" && rm "$f"
    echo "$n,recompressed,$({tool} -dc "${{f%.gz}}.{to}" | sha256sum | cut -d' ' -f1)" >> {report}
  else
    echo "$n,corrupt," >> {report}
  fi
done"""
    out = Artifact("records", report, fmt="csv", table=Table(("file", "status", "sha256"), ("str", "str", "str"), rows),
                   label=f"{a.label}_recompress")
    title = ctx.rng.choice(["Recompress the rotated files", f"Move the archive from gzip to {tool}",
                            "Recompress with an integrity check"])
    intro = ctx.rng.choice([f"`{root}` keeps old gzip files; they should be stored as `.{to}` instead.",
                            f"Storage wants {words} rather than gzip for the files in `{root}`; one may be damaged.",
                            f"The gzip files in `{root}` are to be recompressed; nothing may be lost on the way."])
    return Fragment(title, intro, checks, solve, out)


register(Recipe("archive-recompress", "archives-compression", "Recompress gzip files with zstd or xz",
                lambda a: a.kind == "tree" and a.flavor == "gz-folder", seed_gz_folder, _recompress_build, weight=2,
                consumes="its own gzip folder (starts a path)", tools=("zstd", "xz", "gzip"),
                kinds=("compressed-file",)))
