"""text-processing families: normalise a hand-kept list, extract tokens with a pattern."""
from __future__ import annotations

import re

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, register, stem_of
from .formats import render_lines, table_text
from .seeds import DOMAINS, FIRST, LAST, a_date, email, seed_messy_list


def _normalise_accepts(a: Artifact) -> bool:
    return a.kind == "lines" and a.exact and len(a.lines) >= 1 and '"' not in "".join(a.lines)


def _normalise_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    lower = any(x != x.lower() for x in a.lines) or rng.random() < 0.5
    spaces = any(" " in x.strip() for x in a.lines)
    items = []
    for x in a.lines:
        x = x.strip()
        if not x or x.startswith("#"):
            continue
        if lower:
            x = x.lower()
        if spaces:
            x = re.sub(r"\s+", "_", x)
        items.append(x)
    expected = sorted(set(items))
    path = ctx.claim(f"/app/out/{stem_of(a)}_clean.txt")
    how = "trimming surrounding whitespace" + (", converting to lower case" if lower else "") + \
          (" and replacing each run of inner whitespace with a single underscore" if spaces else "")
    checks = [
        Check(f"Write `{path}` with one entry per line built from the lines of `{a.path}` by {how}.",
              [("entries", f"got = read_lines({path!r})\nassert set(got) == set({expected!r}), sorted(set(got) ^ set({expected!r}))")]),
        Check(f"Leave blank lines and lines whose first non-blank character is `#` out of `{path}`.",
              [("no_comments", f"raw = read_text({path!r}).splitlines()\nassert raw and not any(l.strip().startswith('#') or not l.strip() for l in raw)")]),
        Check(f"List every entry only once in `{path}`.",
              [("unique", f"got = read_lines({path!r})\nassert got and len(got) == len(set(got))")]),
        Check(f"Sort the entries of `{path}` in ascending order.",
              [("sorted", f"assert read_lines({path!r}) == {expected!r}")]),
    ]
    pipe = [f"grep -v '^[[:space:]]*#' {a.path}", "sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//'", "grep -v '^$'"]
    if lower:
        pipe.append("tr '[:upper:]' '[:lower:]'")
    if spaces:
        pipe.append("sed -E 's/[[:space:]]+/_/g'")
    pipe.append("sort -u")
    solve = f"mkdir -p /app/out\n{' | '.join(pipe)} > {path}"
    out = Artifact("lines", path, fmt="txt", lines=tuple(expected), label=f"{a.label}_clean")
    return Fragment("Normalise the list", f"{describe(a)[0].upper()}{describe(a)[1:]} was edited by hand and is messy.",
                    checks, solve, out)


register(Recipe("text-normalise", "text-processing", "Normalise a text list", _normalise_accepts, seed_messy_list,
                _normalise_build, weight=1, consumes="lines"))


# --- regex-extract -------------------------------------------------------------------------------

PATTERNS = {
    "emails": (r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", "e-mail address", True),
    "ipv4": (r"\b[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\b", "IPv4 address", False),
    "dates": (r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b", "calendar date written as YYYY-MM-DD", False),
    "ids": (r"\b[A-Z]{1,4}-[0-9]{3,6}\b", "identifier made of 1 to 4 capital letters, a hyphen and 3 to 6 digits", False),
}


def _matches(a: Artifact) -> dict[str, list[str]]:
    if not a.exact or a.kind == "archive":
        return {}
    text = table_text(a)
    out = {}
    for key, (rx, _, lower) in PATTERNS.items():
        if key == "dates" and re.search(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T0-9]", text):
            continue     # timestamps make "a date" ambiguous
        if key == "ids" and re.search(r"[A-Z]{5}-[0-9]|[A-Z]-[0-9]{7}", text):
            continue
        found = re.findall(rx, text)
        if lower:
            found = [f.lower() for f in found]
        if len(set(found)) >= 3:
            out[key] = found
    return out


def _extract_build(ctx: StepContext, a: Artifact) -> Fragment:
    found = _matches(a)
    key = ctx.rng.choice(sorted(found))
    rx, noun, lower = PATTERNS[key]
    values = sorted(set(found[key]))
    where = f"any file under `{a.path}`" if a.kind == "tree" else f"`{a.path}`"
    path = ctx.claim(f"/app/out/{stem_of(a)}_{key}.txt")
    count = ctx.claim(f"/app/out/{stem_of(a)}_{key}_count.txt")
    case = ", converted to lower case" if lower else ""
    checks = [
        Check(f"Write `{path}` listing every distinct {noun} that occurs in {where}{case}, one per line.",
              [("found", f"got = read_lines({path!r})\nassert set(got) == set({values!r}), sorted(set(got) ^ set({values!r}))")]),
        Check(f"Sort the lines of `{path}` in ascending order without repeats.",
              [("sorted", f"assert read_lines({path!r}) == {values!r}")]),
        Check(f"Write the total number of occurrences of such values in {where}, counting repeats, as a single "
              f"integer to `{count}`.", [("count", f"assert read_text({count!r}).strip() == '{len(found[key])}'")]),
    ]
    grep = f"grep -rhoE '{rx}' {a.path}"
    low = " | tr '[:upper:]' '[:lower:]'" if lower else ""
    solve = f"mkdir -p /app/out\n{grep}{low} | sort -u > {path}\n{grep} | wc -l > {count}"
    out = Artifact("lines", path, fmt="txt", lines=tuple(values), label=f"{a.label}_{key}")
    return Fragment(f"Extract every {noun.split(' made')[0].split(' written')[0]}",
                    f"Pull structured tokens out of {describe(a)}.", checks, solve, out)


def seed_tickets(ctx: StepContext) -> Artifact:
    """A plain-text support-ticket digest with addresses, ticket ids, dates and hosts."""
    rng = ctx.rng
    lines = []
    for _ in range(rng.randint(10, 16)):
        who = email(rng) if rng.random() < 0.8 else f"{rng.choice(FIRST).capitalize()}.{rng.choice(LAST).capitalize()}@{rng.choice(DOMAINS)}"
        host = f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        lines.append(f"TCK-{rng.randint(1000, 9999)} opened {a_date(rng)} by <{who}> about host {host}: "
                     f"{rng.choice(['login fails', 'disk full', 'slow reports', 'cannot print', 'vpn drops'])}")
        if rng.random() < 0.4:
            lines.append(f"  reply from {email(rng)} on {a_date(rng)} (see TCK-{rng.randint(1000, 9999)})")
    path = ctx.claim(f"/app/input/{rng.choice(['tickets', 'support-tickets', 'helpdesk', 'queue-export'])}.txt")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="text", label="tickets")


register(Recipe("regex-extract", "text-processing", "Extract tokens by pattern", lambda a: bool(_matches(a)),
                seed_tickets, _extract_build, weight=1, consumes="any text"))


# --- line-diff ------------------------------------------------------------------------------------

def _diff_accepts(a: Artifact) -> bool:
    distinct = {x.strip() for x in a.lines if x.strip()}
    return a.kind == "lines" and len(distinct) >= 4


def _diff_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    current = list(a.lines)
    distinct = sorted({x.strip() for x in current if x.strip()})
    # The previous version: a few of today's lines did not exist yet, and a few old ones were dropped since.
    # (content lines, not comments, so the change summary has something for later steps to work on)
    content = [x for x in distinct if not x.startswith("#")]
    content = content if len(content) >= 3 else distinct
    gone = set(rng.sample(content, rng.randint(1, min(3, len(content) - 2))))
    old = [x for x in current if x.strip() not in gone]
    retired = [f"{w}-{rng.randint(10, 99)}" for w in rng.sample(["legacy", "obsolete", "retired", "old", "stale"], rng.randint(1, 3))]
    for r in retired:
        old.insert(rng.randint(0, len(old)), r)
    stem = stem_of(a)
    old_path = ctx.claim(f"/app/previous/{a.basename}")
    ctx.add_input(old_path, render_lines(old))
    patch = ctx.claim(f"/app/out/{stem}.patch")
    added_p = ctx.claim(f"/app/out/{stem}_added.txt")
    removed_p = ctx.claim(f"/app/out/{stem}_removed.txt")
    old_set = {x.strip() for x in old if x.strip()}
    added = sorted({x.strip() for x in current if x.strip()} - old_set)
    removed = sorted(old_set - {x.strip() for x in current if x.strip()})
    checks = [
        Check(f"Write `{patch}` as a unified diff that turns `{old_path}` into `{a.path}`, so that applying it with "
              f"`patch` to a copy of `{old_path}` gives a file identical to `{a.path}`.",
              [("patch", f"tmp = tempfile.mkdtemp()\ncopy = os.path.join(tmp, 'old.txt')\nshutil.copy({old_path!r}, copy)\n"
                         f"text = read_text({patch!r})\nassert '@@' in text\n"
                         f"r = run(['patch', '-s', copy, {patch!r}])\nassert r.returncode == 0, r.stdout + r.stderr\n"
                         f"assert Path(copy).read_bytes() == Path({a.path!r}).read_bytes()")]),
        Check(f"Leave `{old_path}` unchanged.",
              [("old_kept", f"assert read_lines({old_path!r}) == {[x.rstrip() for x in old if x.strip()]!r}\n"
                            f"assert Path({patch!r}).is_file()")]),
        Check(f"Write `{added_p}` listing the distinct lines (ignoring blank lines and surrounding spaces) that are in "
              f"`{a.path}` but not in `{old_path}`, sorted, one per line.",
              [("added", f"assert read_lines({added_p!r}) == {added!r}")]),
        Check(f"Write `{removed_p}` listing the distinct lines (ignoring blank lines and surrounding spaces) that are in "
              f"`{old_path}` but not in `{a.path}`, sorted, one per line.",
              [("removed", f"assert read_lines({removed_p!r}) == {removed!r}")]),
    ]
    solve = f"""mkdir -p /app/out
diff -u {old_path} {a.path} > {patch} || [ $? -eq 1 ]
norm() {{ sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$1" | grep -v '^$' | sort -u; }}
comm -13 <(norm {old_path}) <(norm {a.path}) > {added_p}
comm -23 <(norm {old_path}) <(norm {a.path}) > {removed_p}"""
    out = Artifact("lines", added_p, fmt="txt", lines=tuple(added), flavor="text", label=f"{a.label}_added")
    intro = (f"`{old_path}` is the version of {describe(a)} from the last release; "
             f"produce a patch and a summary of what changed since.")
    return Fragment("Diff against the last release", intro, checks, solve, out)


register(Recipe("line-diff", "text-processing", "Diff two versions of a text file", _diff_accepts, seed_messy_list,
                _diff_build, weight=1, consumes="lines", kinds=("patch-file",)))
