"""file-operations families: sort a folder by extension, take a dated backup and rotate old ones."""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from datetime import date, timedelta

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, full_stem, register, stem_of
from .seeds import seed_any
from .trees import ext_of, seed_inbox


def _organise_accepts(a: Artifact) -> bool:
    if a.kind != "tree" or len(a.files) < 3:
        return False
    bases = [n.rsplit("/", 1)[-1] for n, _ in a.files]
    return len(set(bases)) == len(bases)


def _organise_build(ctx: StepContext, a: Artifact) -> Fragment:
    move = a.path.startswith("/app/inbox")          # a seeded inbox is sorted in place; outputs are copied
    root = ctx.claim(ctx.rng.choice(["/app/sorted", "/app/by-type", "/app/organised"]))
    placed = []
    for rel, data in a.files:
        base = rel.rsplit("/", 1)[-1]
        placed.append((f"{ext_of(rel) or 'noext'}/{base}", data, rel))
    placed.sort()
    names = [p for p, _, _ in placed]
    verb = "Move" if move else "Copy"
    checks = [Check(f"{verb} every regular file found anywhere under `{a.path}` into `{root}/<ext>/`, where `<ext>` is "
                    f"the part of the file name after its last dot in lower case or `noext` when the name has no dot, "
                    f"keeping the file name.", [("layout", f"assert files_under({root!r}) == {names!r}")])]
    if move:
        checks.append(Check(f"Leave no regular files behind anywhere under `{a.path}`.",
                            [("emptied", f"assert files_under({a.path!r}) == []")]))
        digests = {p: hashlib.sha256(d).hexdigest() for p, d, _ in placed}
        checks.append(Check("Keep the content of every file unchanged.",
                            [("content", f"root = Path({root!r})\nfor rel, digest in {digests!r}.items():\n"
                                         f"    assert sha256_of(root / rel) == digest, rel")]))
    else:
        pairs = {p: src for p, _, src in placed}
        checks.append(Check(f"Leave `{a.path}` itself as it is and keep the content of every copied file identical to "
                            f"its original.", [("content", f"src, dst = Path({a.path!r}), Path({root!r})\n"
                                                           f"for rel, orig in {pairs!r}.items():\n"
                                                           f"    assert same_files(dst / rel, src / orig), rel\n"
                                                           f"assert files_under(src) == {a.names()!r}")]))
    counts = sorted(Counter(p.split("/")[0] for p in names).items())
    index = ctx.claim(f"/app/out/{stem_of(a)}_by_extension.csv")
    checks.append(Check(f"Write `{index}` as a CSV file with the header `extension,files` and one row per folder of "
                        f"`{root}` giving how many files it holds, ordered by `extension` ascending.",
                        [("index", f"cols, rows = read_table({index!r})\nassert cols == ['extension', 'files']\n"
                                   f"check_rows(rows, cols, {[list(c) for c in counts]!r})")]))
    op = "mv" if move else "cp"
    solve = f'''mkdir -p {root} /app/out
(cd {a.path} && find . -type f -print0 | while IFS= read -r -d '' f; do
  b=$(basename "$f")
  case "$b" in *.*) e="${{b##*.}}"; e="${{e,,}}" ;; *) e=noext ;; esac
  mkdir -p "{root}/$e"
  {op} "$f" "{root}/$e/$b"
done)
{{ echo extension,files; for d in $(ls {root} | sort); do echo "$d,$(find {root}/$d -type f | wc -l)"; done; }} > {index}'''
    out = Artifact("tree", root, fmt="dir", files=tuple((p, d) for p, d, _ in placed), exact=a.exact, label="sorted")
    intro = f"{describe(a)[0].upper()}{describe(a)[1:]} mixes many kinds of files; sort them by type."
    return Fragment("Sort files by extension", intro, checks, solve, out)


register(Recipe("organise-by-extension", "file-operations", "Sort files by extension", _organise_accepts,
                seed_inbox, _organise_build, weight=1, consumes="tree", kinds=("directory-tree",)))


# --- backup-rotate -----------------------------------------------------------------------------

def _ere(s: str) -> str:
    return re.sub(r"([.\[\]()*+?^$|{}\\])", r"\\\1", s)


def _suffix(a: Artifact) -> str:
    return "" if a.kind == "tree" else a.basename[len(full_stem(a)):]


def _rotate_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    stem, suffix = full_stem(a), _suffix(a)
    keep = rng.choice([2, 3, 4])
    bdir = ctx.claim(ctx.rng.choice(["/app/backups", "/app/snapshots", "/app/backup-sets"]))
    day = date(2024, 6, 1) + timedelta(days=rng.randrange(60))
    old_days = sorted({day - timedelta(days=rng.randint(1, 90)) for _ in range(rng.randint(keep + 1, keep + 4))})
    names = [f"{stem}-{d:%Y%m%d}{suffix}" for d in old_days]
    for n, d in zip(names, old_days):
        if a.kind == "tree":
            ctx.add_input(f"{bdir}/{n}/BACKUP_INFO", f"backup of {stem} taken {d}\n")
        else:
            ctx.add_input(f"{bdir}/{n}", f"old backup of {stem} from {d}\n")
    other = f"settings-{old_days[0]:%Y%m%d}.tar.gz"
    ctx.add_input(f"{bdir}/{other}", b"not part of this rotation\n")
    ctx.add_input(f"{bdir}/README.txt", "Backups: <name>-<YYYYMMDD><ext>, newest date wins.\n")
    new = f"{stem}-{day:%Y%m%d}{suffix}"
    ctx.used.add(f"{bdir}/{new}")
    remaining = sorted(names + [new], reverse=True)[:keep]
    listing = ctx.claim(f"/app/out/{stem}_backups.txt")
    top = sorted(remaining + [other, "README.txt"])
    checks = [
        Check(f"Copy {'the folder' if a.kind == 'tree' else 'the file'} `{a.path}` to `{bdir}/{new}`.",
              [("copied", f"assert same_files({bdir + '/' + new!r}, {a.path!r})")]),
        Check(f"Then delete the older backups of `{stem}` in `{bdir}` (entries named `{stem}-<YYYYMMDD>{suffix}`) so that "
              f"only the {keep} with the newest dates remain, leaving every other entry of `{bdir}` untouched.",
              [("rotated", f"names = sorted(os.listdir({bdir!r}))\nassert names == {top!r}, names\n"
                           f"assert read_text({bdir + '/README.txt'!r}).startswith('Backups:')\n"
                           f"assert os.path.isfile({bdir + '/' + other!r})")]),
        Check(f"Write `{listing}` listing the names of the remaining `{stem}` backups, newest first, one per line.",
              [("listing", f"assert read_lines({listing!r}) == {remaining!r}")]),
    ]
    pattern = f"^{_ere(stem)}-[0-9]{{8}}{_ere(suffix)}$"
    solve = (f"mkdir -p /app/out\ncp -r {a.path} {bdir}/{new}\n"
             f"ls -1 {bdir} | grep -E '{pattern}' | sort -r | tail -n +{keep + 1} | while read -r old; do rm -rf \"{bdir}/$old\"; done\n"
             f"ls -1 {bdir} | grep -E '{pattern}' | sort -r > {listing}")
    out = a.moved(f"{bdir}/{new}")
    intro = (f"Back up {describe(a)} into `{bdir}`, which keeps dated copies named `<name>-<YYYYMMDD><ext>` "
             f"(today is {day:%Y-%m-%d}); `{bdir}/README.txt` and `{bdir}/{other}` belong to other jobs.")
    return Fragment("Back up and rotate", intro, checks, solve, out)


register(Recipe("backup-rotate", "file-operations", "Take a dated backup and rotate", lambda a: True, seed_any,
                _rotate_build, weight=1, universal=True, consumes="any", kinds=("directory-tree",)))


# --- dedupe-hardlink ---------------------------------------------------------------------------

def _dedupe_accepts(a: Artifact) -> bool:
    return a.kind == "tree" and a.exact and len(a.files) >= 2 and all(d for _, d in a.files)


def _dedupe_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    lib = ctx.claim(ctx.rng.choice(["/app/library", "/app/media", "/app/collection"]))
    name = a.basename
    stem = stem_of(a)
    seeded: list[tuple[str, bytes]] = []
    # Older copies of some of the incoming files already sit in the library under other names.
    for rel, data in rng.sample(list(a.files), min(len(a.files), rng.randint(1, 3))):
        base = rel.rsplit("/", 1)[-1]
        seeded.append((f"{rng.choice(['archive', 'shared', 'old'])}/copy-of-{base}", data))
    # ...plus duplicates among the library's own files, and some unique ones.
    for i in range(rng.randint(2, 4)):
        body = f"scan {i} {rng.getrandbits(48):012x}\n".encode() * rng.randint(1, 20)
        copies = rng.randint(1, 3)
        for c in range(copies):
            seeded.append((f"{rng.choice(['photos', 'scans', 'shared'])}/img-{i}-{c}.dat", body))
    seeded = sorted(dict(seeded).items())
    for rel, data in seeded:
        ctx.add_input(f"{lib}/{rel}", data)
    files = sorted(seeded + [(f"{name}/{rel}", d) for rel, d in a.files])
    groups: dict[bytes, list[str]] = {}
    for rel, data in files:
        groups.setdefault(data, []).append(rel)
    pairs = sorted((paths[0], p) for paths in groups.values() for p in paths[1:])
    pairs.sort(key=lambda kp: kp[1])
    report = ctx.claim(f"/app/out/{stem}_duplicates.csv")
    linked = {p: k for k, p in pairs}
    digests = {rel: hashlib.sha256(d).hexdigest() for rel, d in files}
    checks = [
        Check(f"Copy the folder `{a.path}` into `{lib}` as `{lib}/{name}`.",
              [("copied", f"for rel in {a.names()!r}:\n    assert (Path({lib!r}) / {name!r} / rel).is_file(), rel\n"
                          f"assert files_under({lib!r}) == {[r for r, _ in files]!r}")]),
        Check(f"Then, for every set of regular files under `{lib}` with identical content, keep the one whose path "
              f"relative to `{lib}` sorts first and replace each of the others by a hard link to it.",
              [("linked", f"root = Path({lib!r})\nfor dup, kept in {linked!r}.items():\n"
                          f"    assert os.stat(root / dup).st_ino == os.stat(root / kept).st_ino, dup\n"
                          f"assert len({{os.stat(root / p).st_ino for p in files_under(root)}}) == {len(groups)}")]),
        Check(f"Keep the content of every path under `{lib}` unchanged.",
              [("content", f"root = Path({lib!r})\nassert files_under(root) == {sorted(digests)!r}\n"
                           f"for rel, digest in {digests!r}.items():\n    assert sha256_of(root / rel) == digest, rel\n"
                           f"assert any(os.stat(root / p).st_nlink > 1 for p in files_under(root))")]),
        Check(f"Write `{report}` as a CSV file with the header `kept,duplicate` and one row per replaced file (paths "
              f"relative to `{lib}`), ordered by `duplicate` ascending.",
              [("report", f"cols, rows = read_table({report!r})\nassert cols == ['kept', 'duplicate']\n"
                          f"check_rows(rows, cols, {[list(p) for p in pairs]!r})")]),
    ]
    solve = f"""mkdir -p /app/out
cp -r {a.path} {lib}/{name}
python3 - <<'PY'
import csv, hashlib, os
root = {lib!r}
paths = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
first, rows = {{}}, []
for p in paths:
    digest = hashlib.sha256(open(os.path.join(root, p), "rb").read()).hexdigest()
    if digest in first:
        os.remove(os.path.join(root, p))
        os.link(os.path.join(root, first[digest]), os.path.join(root, p))
        rows.append((first[digest], p))
    else:
        first[digest] = p
with open({report!r}, "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\\n")
    w.writerow(["kept", "duplicate"])
    w.writerows(sorted(rows, key=lambda r: r[1]))
PY"""
    out = Artifact("tree", lib, fmt="dir", files=tuple(files), label="library")
    intro = (f"`{lib}` is a shared file library that wastes space on duplicate copies; add {describe(a)} to it and "
             f"deduplicate it with hard links.")
    return Fragment("Deduplicate the file library", intro, checks, solve, out)


register(Recipe("dedupe-hardlink", "file-operations", "Deduplicate files into hard links", _dedupe_accepts, seed_inbox,
                _dedupe_build, weight=2, consumes="tree", kinds=("directory-tree", "checksum-manifest")))
