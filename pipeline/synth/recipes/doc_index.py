"""markdown-index: a Markdown index page for a folder an earlier step left (or a seeded docs
tree): one relative link per file with its size. The tests resolve the links the agent wrote
and compare them with the files really there, so it reads any tree, exact or not."""
from __future__ import annotations

import re

from .base import Artifact, Check, Fragment, Recipe, StepContext, register, stem_of
from .documents import LINK, seed_docs, worded

# Test-side reader: the relative links of a Markdown file, resolved against its folder.
INDEX_READER = rf'''def index_links(path):
    base = os.path.dirname(path)
    out = []
    for line in read_text(path).splitlines():
        for m in re.finditer({LINK.pattern!r}, line):
            out.append((line, os.path.normpath(os.path.join(base, m.group(2)))))
    return out
'''


UNLINKABLE = re.compile(r"[\s()\[\]`]")     # a name the link syntax would need escaping for


def _accepts(a: Artifact) -> bool:
    return a.kind == "tree" and 1 <= len(a.files) <= 60 and not any(UNLINKABLE.search(rel) for rel, _ in a.files)


def _build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    folder = ctx.claim(rng.choice(["/app/index", "/app/catalogue", "/app/docs-index"]))
    name = rng.choice(["INDEX.md", "README.md", "index.md", "contents.md"])
    path = f"{folder}/{name}"
    checks = [
        Check(f"Write `{path}` as a Markdown page that starts with a level-1 heading and has one list item per "
              f"regular file under `{a.path}`, each holding a relative link (from `{folder}`) to that file.",
              [("links", f"{INDEX_READER}got = sorted(p for _, p in index_links({path!r}))\n"
                         f"want = sorted(os.path.join({a.path!r}, f) for f in files_under({a.path!r}))\n"
                         f"assert got == want, sorted(set(got) ^ set(want))\n"
                         f"first = [l for l in read_lines({path!r})][0]\nassert re.match(r'#\\s+\\S', first), first\n"
                         f"assert files_under({a.path!r}) == {sorted(rel for rel, _ in a.files)!r}")]),
        Check(rng.choice(["Give each link the file's path relative to the folder as its text.",
                          f"Use the file's path relative to `{a.path}` as the link text."]),
              [("texts", f"{INDEX_READER}for line, target in index_links({path!r}):\n"
                         f"    rel = os.path.relpath(target, {a.path!r})\n"
                         f"    assert '[' + rel + '](' in line.replace('`', ''), (rel, line)\n"
                         f"assert index_links({path!r})")]),
        Check(f"End each list item with the file's size in bytes written as `(<n> bytes)`.",
              [("sizes", f"{INDEX_READER}items = index_links({path!r})\nassert items\n"
                         f"for line, target in items:\n"
                         f"    m = re.search(r'\\((\\d+) bytes\\)\\s*$', line)\n"
                         f"    assert m and int(m.group(1)) == os.path.getsize(target), line")]),
        Check(f"List the items in ascending order of the file's relative path.",
              [("order", f"{INDEX_READER}got = [p for _, p in index_links({path!r})]\n"
                         f"assert got and got == sorted(got), got")]),
    ]
    solve = f"""mkdir -p {folder}
python3 - <<'PY'
import os
root, folder = {a.path!r}, {folder!r}
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
lines = ["# Index of " + os.path.basename(root), ""]
for rel in files:
    full = os.path.join(root, rel)
    lines.append(f"- [{{rel}}]({{os.path.relpath(full, folder)}}) ({{os.path.getsize(full)}} bytes)")
open({path!r}, "w").write("\\n".join(lines) + "\\n")
PY"""
    out = Artifact("tree", folder, fmt="dir", files=((name, b"# Index\n"),), exact=False, label=f"{stem_of(a)}_index")
    return worded(rng, "markdown-index", checks, solve, out, what=f"the folder `{a.path}`")


register(Recipe("markdown-index", "file-operations", "Index a folder as a Markdown page", _accepts, seed_docs,
                _build, weight=1, consumes="tree", kinds=("markdown-doc",)))
