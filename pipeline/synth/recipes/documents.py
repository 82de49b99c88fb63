"""Markdown-document families: check a docs tree's relative links, outline its headings, and
write a summary report from records. They work offline with python3's standard library.

The synthesizer models a Markdown file the way the requirement sentences define it (ATX
headings and inline links outside fenced code blocks and code spans; anchors as GitHub
makes them), so expected values come from the same rules the agent is told.
"""
from __future__ import annotations

import hashlib
import posixpath
import re

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import t_header, t_rows
from .seeds import FIRST, PRODUCTS, email

# Step titles and intros per family, several wordings each; an intro names its input by
# {what} (its description), {path} or {label}.
WORDINGS = {
    "markdown-link-check": (["Check the Markdown links", "Find broken links in the docs", "Audit relative links"],
        ["{what} holds Markdown pages that link to each other; some links have rotted.",
         "Before the handbook in {what} is published, find the relative links that lead nowhere.",
         "Readers of {what} report dead links; list every one of them."]),
    "markdown-outline": (["Outline the Markdown headings", "Build a table of contents", "Index the headings"],
        ["Build a table of contents for {what}.",
         "The pages in {what} need a single outline with link anchors for the site's sidebar.",
         "List the structure of the Markdown pages in {what}, heading by heading."]),
    "html-table-extract": (["Extract the HTML table", "Scrape the report page", "Turn the HTML table into records"],
        ["`{path}` is an HTML export of the {label} report; get its data back into a machine-readable file.",
         "The only copy of the {label} data is the web page `{path}`.",
         "Scrape the {label} table out of the saved page `{path}`."]),
    "records-html-table": (["Publish as an HTML table", "Render the records as HTML", "Build the status page"],
        ["Publish {what} on the intranet as a static HTML page.",
         "The team wants {what} as a web page they can open in a browser.",
         "Render {what} as an HTML table for the status site."]),
    "markdown-index": (["Index the folder in Markdown", "Write a contents page", "Catalogue the files"],
        ["Readers need one Markdown page that links to every file in {what}.",
         "Make {what} browsable: a Markdown contents page with a link per file.",
         "Catalogue {what} as a Markdown index page."]),
    "markdown-report": (["Write a summary report", "Report the key figures", "Summarise as Markdown"],
        ["Management wants a one-page Markdown summary of `{path}`.",
         "Turn `{path}` into a short written report with its key figures.",
         "Summarise `{path}` for the weekly status mail as Markdown."]),
}


def worded(rng, family: str, checks: list[Check], solve: str, out: Artifact, **names: str) -> Fragment:
    """A step whose title and intro are one of the family's wordings (drawn by the task's rng)."""
    titles, intros = WORDINGS[family]
    intro = rng.choice(intros).format(**names)
    return Fragment(rng.choice(titles), intro[0].upper() + intro[1:], checks, solve, out)


# ---------------------------------------------------------------- the Markdown model
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)       # https:, mailto:, ftp:
UNSAFE_VALUE = re.compile(r"[,\"\t]")                      # what a record value may not hold


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def anchor_of(heading: str) -> str:
    """GitHub's rule: lower case, keep letters, digits, spaces, hyphens and underscores, spaces -> '-'."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def headings(text: str) -> list[tuple[int, int, str, str]]:
    """(line, level, text, anchor); a repeated anchor gets -1, -2, ... as on GitHub."""
    out, seen = [], {}
    for n, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        title = m.group(2).replace("`", "").strip()
        base = anchor_of(title)
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.append((n, len(m.group(1)), title, base if k == 0 else f"{base}-{k}"))
    return out


def links(text: str) -> list[tuple[int, str]]:
    return [(n, m.group(2)) for n, line in prose_lines(text) for m in LINK.finditer(CODE_SPAN.sub("", line))]


def markdown_files(a: Artifact) -> dict[str, str]:
    return {rel: data.decode("utf-8", "replace") for rel, data in a.files if rel.lower().endswith(".md")}


def broken_links(a: Artifact) -> tuple[int, list[tuple[str, int, str, str]]]:
    """(relative links checked, [(file, line, target, problem)]) for a tree's Markdown files."""
    docs = markdown_files(a)
    anchors = {rel: {h[3] for h in headings(t)} for rel, t in docs.items()}
    files = {rel for rel, _ in a.files}
    checked, bad = 0, []
    for rel, text in sorted(docs.items()):
        for n, target in links(text):
            if EXTERNAL.match(target):
                continue
            checked += 1
            path, _, frag = target.partition("#")
            dest = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path)) if path else rel
            if dest not in files:
                bad.append((rel, n, target, "missing-file"))
            elif frag and frag not in anchors.get(dest, set()):
                bad.append((rel, n, target, "missing-anchor"))
    return checked, sorted(bad)


# ---------------------------------------------------------------- a docs tree to start from
SECTIONS = ["Overview", "Prerequisites", "Step 1: Prepare the `host`", "Step 2: Run the job", "Rollback",
            "Troubleshooting (v2.x)", "Known issues", "See also", "Notes", "Limits & quotas", "FAQ"]
TOPICS = ["install", "upgrade", "backup", "restore", "monitoring", "tuning", "security", "onboarding"]


def seed_docs(ctx: StepContext) -> Artifact:
    """A small Markdown handbook whose pages link to each other: some links are broken (a
    misspelt page, an anchor no heading makes), some are external, some sit in code."""
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/input/handbook", "/app/input/docs", "/app/input/wiki", "/app/input/runbooks"]))
    pages = sorted(f"{rng.choice(['guide', 'ops', 'reference', ''])}/{t}.md".lstrip("/")
                   for t in rng.sample(TOPICS, rng.randint(3, 5)))
    plans = {p: rng.sample(SECTIONS, rng.randint(3, 5)) + (["Notes"] if rng.random() < 0.4 else []) for p in pages}
    anchors = {p: [anchor_of(s) for s in secs if s != "Notes"] for p, secs in plans.items()}

    def rel_to(src: str, dst: str) -> str:
        return posixpath.relpath(dst, posixpath.dirname(src) or ".")

    def good_link(src: str) -> str:
        dst = rng.choice(pages)
        frag = rng.choice(anchors[dst] + [""])
        if dst == src:
            return f"#{frag}" if frag else rel_to(src, dst)
        return rel_to(src, dst) + (f"#{frag}" if frag else "")

    broken_kinds = ["file", "anchor"] + [rng.choice(["file", "anchor", "self"]) for _ in range(rng.randint(0, 2))]
    owners = {p: [] for p in pages}
    for kind in broken_kinds:
        owners[rng.choice(pages)].append(kind)
    files = []
    for p in pages:
        topic = p.rsplit("/", 1)[-1][:-3]
        body = [f"# {topic.capitalize()} guide", "", f"Maintained by {email(rng)}. Start with [the index]({rel_to(p, 'README.md')}).", ""]
        extra = list(owners[p])
        for sec in plans[p]:
            body += [f"## {sec}", "", f"Read [{rng.choice(['this', 'the details', 'more'])}]({good_link(p)}) first."]
            if extra and rng.random() < 0.6:
                kind = extra.pop()
                other = rng.choice(pages)
                target = {"file": rel_to(p, other.replace(".md", rng.choice(["-old.md", "s.md", ".markdown"]))),
                          "anchor": rel_to(p, other) + f"#{rng.choice(['step-3-clean-up', 'appendix', 'faq-1'])}",
                          "self": f"#{rng.choice(['usage', 'set-up', 'configuration'])}"}[kind]
                body.append(f"The [{rng.choice(['old notes', 'runbook', 'checklist'])}]({target}) covers the "
                            f"{rng.choice(PRODUCTS)} case.")
            if rng.random() < 0.3:
                body.append(f"Vendor docs: [upstream](https://docs.example.org/{topic}) or "
                            f"[mail us](mailto:{rng.choice(FIRST)}@example.com).")
            if rng.random() < 0.3:
                body += ["", "```bash", "# not a heading: a shell comment", f"cat [draft](missing-{topic}.md)", "```"]
            body.append("")
        for kind in extra:       # the ones no section took
            body.append(f"See the [appendix]({rel_to(p, 'appendix.md') if kind == 'file' else '#appendix'}).")
        body.append(f"Inline code like `[x](nowhere.md)` is not a link.")
        files.append((p, ("\n".join(body) + "\n").encode()))
    index = ["# Handbook", ""] + [f"- [{p[:-3]}]({p})" for p in pages] + [""]
    files.append(("README.md", "\n".join(index).encode()))
    files.sort()
    for rel, data in files:
        ctx.add_input(f"{root}/{rel}", data)
    return Artifact("tree", root, fmt="dir", files=tuple(files), label="docs")


def _csv_out(path: str, cols) -> str:
    """The end of a solution heredoc: `rows` written sorted as CSV with the header `cols`."""
    return (f'with open({path!r}, "w", newline="") as fh:\n    w = csv.writer(fh, lineterminator="\\n")\n'
            f'    w.writerow({list(cols)!r})\n    w.writerows(sorted(rows))\nPY')


def _untouched(a: Artifact, result: str) -> Check:
    """The docs stay as they are (a solution may not 'fix' the input to match an empty result);
    it needs the result file too, so that it cannot pass before anything was done."""
    digests = {rel: hashlib.sha256(d).hexdigest() for rel, d in a.files}
    return Check(f"Leave every file under `{a.path}` unchanged.",
                 [("docs_kept", f"root = Path({a.path!r})\nassert files_under(root) == {sorted(digests)!r}\n"
                                f"for rel, digest in {digests!r}.items():\n    assert sha256_of(root / rel) == digest, rel\n"
                                f"assert Path({result!r}).is_file()")])


# ---------------------------------------------------------------- markdown-link-check
def _links_accepts(a: Artifact) -> bool:
    if a.kind != "tree" or not a.exact or len(markdown_files(a)) < 2:
        return False
    checked, bad = broken_links(a)
    return checked >= 3 and bool(bad) and not any(UNSAFE_VALUE.search(t) for _, _, t, _ in bad)


LINK_RULES = [
    "A link is an inline `[text](target)` outside fenced code blocks and code spans; links whose target starts "
    "with a scheme such as `https:` or `mailto:` are not checked.",
    "Check only relative links: inline `[text](target)` links outside fenced code blocks and code spans, leaving "
    "out targets with a scheme (`https:`, `mailto:` and the like).",
]
ANCHOR_RULE = ("A heading's anchor is its text in lower case without backticks, with every character other than "
               "letters, digits, spaces, hyphens and underscores removed and each space replaced by a hyphen; a "
               "repeated anchor in one file gets `-1`, `-2` and so on appended.")


def _links_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    _, bad = broken_links(a)
    path = ctx.claim(f"/app/out/{stem_of(a)}_{rng.choice(['broken_links', 'dead_links', 'link_report'])}.csv")
    cols = ("file", "line", "target", "problem")
    table = Table(cols, ("str", "int", "str", "str"), tuple(bad))
    expected = [list(r) for r in bad]
    checks = [
        Check(f"Write `{path}` as a CSV file with the header `file,line,target,problem` and one row per broken "
              f"relative link in the Markdown (`.md`) files under `{a.path}`: `file` is the file's path relative to "
              f"`{a.path}`, `line` the 1-based line number and `target` the link target as written.",
              [("rows", t_rows(path, "csv", list(cols), expected, False))]),
        Check(rng.choice(LINK_RULES),
              [("scope", f"{t_header(path, 'csv', cols)}\ngot = {{r['target'] for r in rows}}\n"
                         f"assert got and got <= set({sorted({t for _, _, t, _ in bad})!r}), sorted(got)")]),
        Check(f"Set `problem` to `missing-file` when the target's path (relative to the linking file's folder, or the "
              f"linking file itself when the target is only `#anchor`) names no file under `{a.path}` and to "
              f"`missing-anchor` when the file exists but none of its headings has the target's `#anchor`.",
              [("problems", f"cols, rows = read_table({path!r})\n"
                            f"assert sorted((r['file'], int(r['line']), r['problem']) for r in rows) == "
                            f"{sorted((f, n, p) for f, n, _, p in bad)!r}")]),
        Check(ANCHOR_RULE, [("anchors", f"cols, rows = read_table({path!r})\n"
                                        f"got = {{r['target'] for r in rows if r['problem'] == 'missing-anchor'}}\n"
                                        f"assert got == set({sorted({t for _, _, t, p in bad if p == 'missing-anchor'})!r}), sorted(got)")]),
        Check(f"Order the rows of `{path}` by `file` ascending, then by `line` ascending, then by `target` ascending.",
              [("order", t_rows(path, "csv", list(cols), expected, True))]),
        _untouched(a, path),
    ]
    solve = f"""mkdir -p /app/out
python3 - <<'PY'
import csv, os, posixpath, re
root = {a.path!r}
def prose(text):
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\\s*(```|~~~)", line):
            fenced = not fenced
        elif not fenced:
            yield n, line
def anchors(text):
    out, seen = set(), {{}}
    for _, line in prose(text):
        m = re.match(r"^(#{{1,6}})\\s+(.+?)\\s*#*\\s*$", line)
        if m:
            base = re.sub(r"[^a-z0-9 _-]", "", m.group(2).replace("`", "").strip().lower()).replace(" ", "-")
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{{base}}-{{k}}")
    return out
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
docs = {{f: open(os.path.join(root, f), encoding="utf-8").read() for f in files if f.lower().endswith(".md")}}
rows = []
for f, text in docs.items():
    for n, line in prose(text):
        for m in re.finditer(r"(?<!!)\\[([^\\]]+)\\]\\(([^)\\s]+)\\)", re.sub(r"`[^`]*`", "", line)):
            target = m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            path, _, frag = target.partition("#")
            dest = posixpath.normpath(posixpath.join(posixpath.dirname(f), path)) if path else f
            if dest not in files:
                rows.append((f, n, target, "missing-file"))
            elif frag and frag not in anchors(docs.get(dest, "")):
                rows.append((f, n, target, "missing-anchor"))
{_csv_out(path, cols)}"""
    out = Artifact("records", path, fmt="csv", table=table, label="broken_links")
    return worded(rng, "markdown-link-check", checks, solve, out, what=describe(a))


register(Recipe("markdown-link-check", "text-processing", "Find broken relative links in Markdown", _links_accepts,
                seed_docs, _links_build, weight=2, consumes="tree of Markdown files", kinds=("markdown-doc",)))


# ---------------------------------------------------------------- markdown-outline
def _outline(a: Artifact) -> list[tuple[str, int, int, str, str]]:
    return sorted((rel, n, lvl, title, anc) for rel, text in markdown_files(a).items()
                  for n, lvl, title, anc in headings(text))


def _outline_accepts(a: Artifact) -> bool:
    if a.kind != "tree" or not a.exact or len(markdown_files(a)) < 2:
        return False
    rows = _outline(a)
    return len(rows) >= 4 and not any(UNSAFE_VALUE.search(t) or t != t.strip() for _, _, _, t, _ in rows)


def _outline_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    rows = _outline(a)
    max_level = rng.choice([2, 3, 6]) if any(r[2] > 2 for r in rows) else 6
    rows = [r for r in rows if r[2] <= max_level]
    path = ctx.claim(f"/app/out/{stem_of(a)}_{rng.choice(['outline', 'toc', 'headings'])}.csv")
    cols = ("file", "line", "level", "heading", "anchor")
    table = Table(cols, ("str", "int", "int", "str", "str"), tuple(rows))
    expected = [list(r) for r in rows]
    depth = "every ATX heading (`#` to `######`)" if max_level == 6 else \
        f"every ATX heading of level 1 to {max_level} (`#` to `{'#' * max_level}`)"
    checks = [
        Check(f"Write `{path}` as a CSV file with the header `file,line,level,heading,anchor` and one row for {depth} "
              f"outside fenced code blocks in the Markdown (`.md`) files under `{a.path}`.",
              [("rows", t_rows(path, "csv", ["file", "line", "level"], [r[:3] for r in expected], False))]),
        Check(f"In `{path}`, `file` is the path relative to `{a.path}`, `line` the 1-based line number, `level` the "
              f"number of `#` characters and `heading` the heading text without the `#` marks, surrounding spaces "
              f"and backticks.", [("text", t_rows(path, "csv", ["file", "line", "heading"],
                                                  [[r[0], r[1], r[3]] for r in expected], False))]),
        Check(ANCHOR_RULE, [("anchors", t_rows(path, "csv", ["file", "heading", "anchor"],
                                               [[r[0], r[3], r[4]] for r in expected], False))]),
        Check(f"Order the rows of `{path}` by `file` ascending, then by `line` ascending.",
              [("order", t_rows(path, "csv", list(cols), expected, True))]),
        _untouched(a, path),
    ]
    solve = f"""mkdir -p /app/out
python3 - <<'PY'
import csv, os, re
root, rows = {a.path!r}, []
for d, _, fs in os.walk(root):
    for name in fs:
        if not name.lower().endswith(".md"):
            continue
        rel = os.path.relpath(os.path.join(d, name), root)
        fenced, seen = False, {{}}
        for n, line in enumerate(open(os.path.join(d, name), encoding="utf-8").read().splitlines(), 1):
            if re.match(r"^\\s*(```|~~~)", line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"^(#{{1,6}})\\s+(.+?)\\s*#*\\s*$", line)
            if m and len(m.group(1)) <= {max_level}:
                title = m.group(2).replace("`", "").strip()
                base = re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")
                k = seen.get(base, 0)
                seen[base] = k + 1
                rows.append((rel, n, len(m.group(1)), title, base if k == 0 else f"{{base}}-{{k}}"))
{_csv_out(path, cols)}"""
    out = Artifact("records", path, fmt="csv", table=table, label="outline")
    return worded(rng, "markdown-outline", checks, solve, out, what=describe(a))


register(Recipe("markdown-outline", "text-processing", "Outline Markdown headings with anchors", _outline_accepts,
                seed_docs, _outline_build, weight=1, consumes="tree of Markdown files", kinds=("markdown-doc",)))
