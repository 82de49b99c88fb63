"""software-build-debug families: fix a buggy report script; finish a broken Makefile."""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import t_rows, table_output_checks
from .seeds import seed_any, seed_records

SCRIPT = '''#!/usr/bin/env python3
"""Summarise a table: one row per group with the number of rows and the sum of a column.

usage: summarize.py INPUT OUTPUT --by COLUMN --sum COLUMN
INPUT may be .csv, .tsv, .json (an array of objects) or .jsonl; OUTPUT is CSV with the
columns <by>,count,total sorted by total (largest first), ties by <by> ascending.
"""
import argparse
import csv
import json


def read_rows(path):
    if path.endswith(".json"):
        with open(path) as fh:
            return json.load(fh)
    if path.endswith(".jsonl"):
        with open(path) as fh:
            return [json.loads(line) for line in fh if line.strip()]
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\\t" if path.endswith(".tsv") else ","))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--by", required=True)
    ap.add_argument("--sum", required=True)
    args = ap.parse_args()
    rows = read_rows(args.input)
    %(rows_line)s
    totals, counts = {}, {}
    for row in rows:
        key = str(row[args.by])
        counts[key] = counts.get(key, 0) + 1
        %(total_line)s
    result = sorted(totals.items(), key=lambda kv: (%(sort_key)s, kv[0]))
    with open(args.output, "w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\\n")
        out.writerow([args.by, "count", "total"])
        for key, total in result:
            out.writerow([key, counts[key], %(emit)s])


if __name__ == "__main__":
    main()
'''
GOOD = {"rows_line": "rows = [r for r in rows if r]",
        "total_line": "totals[key] = totals.get(key, 0.0) + float(row[args.sum])",
        "sort_key": "-kv[1]", "emit": "round(total, 2)"}
BUGS = {"drops-last": ("rows_line", "rows = rows[:-1]  # skip the trailer line"),
        "truncates": ("total_line", "totals[key] = totals.get(key, 0) + int(float(row[args.sum]))"),
        "ascending": ("sort_key", "kv[1]"),
        "rounds": ("emit", "int(round(total))")}


def _fits(a: Artifact) -> bool:
    t = a.table if a.kind == "records" else None
    return bool(t) and a.exact and len(t.rows) >= 4 and any(
        g for g in t.groupable() if t.type_of(g) == "str" and g not in ("count", "total")) and bool([n for n in t.numeric() if n not in t.groupable()])


def _summ(rows, gi, ni):
    tot, cnt = {}, {}
    for r in rows:
        tot[str(r[gi])] = tot.get(str(r[gi]), 0.0) + float(r[ni])
        cnt[str(r[gi])] = cnt.get(str(r[gi]), 0) + 1
    return sorted(((k, cnt[k], round(v, 2)) for k, v in tot.items()), key=lambda r: (-r[2], r[0]))


SAMPLE = [("alpha", 2.5), ("beta", 10.25), ("alpha", 4.75), ("gamma", 1.5), ("beta", 0.5), ("gamma", 3.25),
          ("gamma", 7.5)]


def _script_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng, t = ctx.rng, a.table
    g = rng.choice([c for c in t.groupable() if t.type_of(c) == "str" and c not in ("count", "total")])
    num = rng.choice([n for n in t.numeric() if n not in t.groupable()])
    gi, ni = t.columns.index(g), t.columns.index(num)
    good = _summ(t.rows, gi, ni)
    # A bug that visibly changes this data's result (and the hidden sample's).
    bugs = [b for b in sorted(BUGS) if b != "truncates" or any(float(v) != int(float(v)) for v in t.col(num))]
    bugs = [b for b in bugs if b != "rounds" or any(r[2] != int(round(r[2])) for r in good)]
    bug = rng.choice(bugs)
    field, bad_line = BUGS[bug]
    script = ctx.add_input(ctx.claim(ctx.rng.choice(["/app/tools/summarize.py", "/app/bin/summarize.py", "/app/scripts/summarize.py"])),
                           SCRIPT % {**GOOD, field: bad_line}, executable=True)
    path = ctx.claim(f"/app/out/{stem_of(a)}_{g}_totals.csv")
    out = Artifact("records", path, fmt="csv", table=Table((g, "count", "total"), ("str", "int", "float"), tuple(good)),
                   label=f"{a.label}_{g}_totals")
    usage = f"python3 {script} {a.path} {path} --by {g} --sum {num}"
    checks = table_output_checks(out, a.path, "by `total` from largest to smallest, breaking ties by `" + g + "` ascending",
                                 [list(r) for r in good],
                                 f"Produce `{path}` by running the fixed script on `{a.path}` with the options "
                                 f"`--by {g} --sum {num}`, so that it holds one row per `{g}` with the number of rows "
                                 f"as `count` and the sum of `{num}` rounded to 2 decimals as `total`.")
    sample = "".join(f"{k},{v}\n" for k, v in SAMPLE)
    expected = _summ(SAMPLE, 0, 1)
    checks.append(Check(ctx.rng.choice([
        f"Fix `{script}` so that for any input it does what its docstring says, keeping its command-line interface.",
        f"Repair `{script}` so that its output matches its docstring for every input, with the same command line.",
        f"Make `{script}` behave as its docstring describes on any input, without changing how it is called."]),
                        [("script_fixed", f"d = tempfile.mkdtemp()\nPath(d, 'in.csv').write_text('team,hours\\n' + {sample!r})\n"
                                          f"p = run(['python3', {script!r}, d + '/in.csv', d + '/out.csv', '--by', 'team', '--sum', 'hours'])\n"
                                          f"assert p.returncode == 0, p.stderr\ncols, rows = read_table(d + '/out.csv')\n"
                                          f"check_rows(rows, ['team', 'count', 'total'], {[list(r) for r in expected]!r})")]))
    solve = (f"python3 - <<'PY'\nfrom pathlib import Path\np = Path({script!r})\n"
             f"p.write_text(p.read_text().replace({bad_line!r}, {GOOD[field]!r}))\nPY\n"
             f"mkdir -p /app/out\n{usage}")
    intro = ctx.rng.choice(["`{s}` summarises tables like {d}, but people report that its totals are wrong.",
                            "The totals that `{s}` prints for tables like {d} do not add up.",
                            "Somebody changed `{s}` and since then its summaries of {d} look off."]).format(s=script, d=describe(a))
    title = ctx.rng.choice(["Debug the summary script", "Fix the summary script", "Find the bug in the report script"])
    return Fragment(title, intro, checks, solve, out)


register(Recipe("script-debug", "software-build-debug", "Fix a buggy script", _fits, lambda ctx: seed_records(ctx),
                _script_build, weight=2, consumes="records", kinds=("source-tree",)))


# --- makefile-build -------------------------------------------------------------------------------

TOJSON = '''#!/usr/bin/env python3
"""Convert a CSV/TSV/JSON/JSON Lines table to a JSON array of objects.

usage: tojson.py [--numbers COL,COL...] INPUT OUTPUT   (listed columns become JSON numbers)
"""
import argparse
import csv
import json

ap = argparse.ArgumentParser()
ap.add_argument("--numbers", default="")
ap.add_argument("input")
ap.add_argument("output")
args = ap.parse_args()
nums = set(filter(None, args.numbers.split(",")))
if args.input.endswith(".json"):
    rows = json.load(open(args.input))
elif args.input.endswith(".jsonl"):
    rows = [json.loads(line) for line in open(args.input) if line.strip()]
else:
    rows = list(csv.DictReader(open(args.input, newline=""), delimiter="\\t" if args.input.endswith(".tsv") else ","))


def num(v):
    f = float(v)
    return int(f) if f == int(f) and "." not in str(v) else f


out = [{k: (num(v) if k in nums else str(v)) for k, v in r.items()} for r in rows]
with open(args.output, "w") as fh:
    json.dump(out, fh, indent=2)
    fh.write("\\n")
'''


def _make_build(ctx: StepContext, a: Artifact) -> Fragment:
    t = a.table
    root = ctx.claim("/app/build")
    stem = stem_of(a)
    ctx.add_input(f"{root}/tools/tojson.py", TOJSON, executable=True)
    target = f"dist/{stem}.json"
    broken = (f"# Build the JSON export of {stem} (unfinished)\nSRC = {a.path}\n\nall: {target}\n\n"
              f"{target}: $(SRC)\n    python3 tools/tojson.py $(SRC) $@\n")
    ctx.add_input(f"{root}/Makefile", broken)
    nums = t.numeric()
    built = f"{root}/{target}"
    out = a.moved(built, fmt="json")
    numbers = ", ".join(f"`{c}`" for c in nums) or "no columns"
    checks = [c for c in table_output_checks(
        out, a.path, "in the same order as the rows of the input", [list(r) for r in t.rows],
        f"Finish `{root}/Makefile` so that running `make` in `{root}` (default target `all`) builds `{built}` by "
        f"running `tools/tojson.py` on `{a.path}` with {numbers} passed as numbers.") if not c.sentence.startswith("Order the rows")]
    checks.insert(1, Check(f"Keep the objects of `{built}` in the order of the rows of `{a.path}`.",
                           [("order", t_rows(built, "json", list(t.columns), [list(r) for r in t.rows], True))]))
    tmp = (f"d = tempfile.mkdtemp()\nshutil.copytree({root!r}, d + '/b', symlinks=True)\n")
    checks += [
        Check(f"Also build `{built}.gz`, a gzip-compressed copy of `{built}`, as part of `all`.",
              [("gzip", f"import gzip\nassert gzip.decompress(Path({built + '.gz'!r}).read_bytes()) == Path({built!r}).read_bytes()")]),
        Check(f"After a build, `make -q` in `{root}` must report that everything is up to date.",
              [("uptodate", f"assert run(['make', '-q', '-C', {root!r}]).returncode == 0")]),
        Check(f"Make the outputs depend on `{a.path}` and on `tools/tojson.py`, so that a change to either triggers a rebuild.",
              [("deps", tmp + f"assert run(['make', '-q', '-C', d + '/b']).returncode == 0\n"
                              f"assert run(['make', '-q', '-C', d + '/b', '-W', {a.path!r}]).returncode != 0\n"
                              f"tool = Path(d + '/b/tools/tojson.py')\n"
                              # an hour past the newest file, not past the tool's own mtime: an image built
                              # over an hour before the run has a tool older than the outputs by more
                              f"newest = max(p.stat().st_mtime for p in Path(d + '/b').rglob('*') if p.is_file())\n"
                              f"os.utime(tool, (tool.stat().st_atime, newest + 3600))\n"
                              f"assert run(['make', '-q', '-C', d + '/b']).returncode != 0")]),
        Check("Add a `clean` target that deletes the `dist` folder, after which `make` rebuilds everything.",
              [("clean", tmp + f"assert run(['make', '-C', d + '/b', 'clean']).returncode == 0\n"
                               f"assert not os.path.exists(d + '/b/dist')\n"
                               f"assert run(['make', '-C', d + '/b']).returncode == 0\n"
                               f"assert Path(d + '/b/{target}').read_bytes() == Path({built!r}).read_bytes()")]),
    ]
    flag = f" --numbers {','.join(nums)}" if nums else ""
    mk = (f"SRC = {a.path}\\n\\n.PHONY: all clean\\n\\nall: {target} {target}.gz\\n\\n"
          f"{target}: $(SRC) tools/tojson.py\\n\\tmkdir -p dist\\n\\tpython3 tools/tojson.py{flag} $(SRC) $@\\n\\n"
          f"{target}.gz: {target}\\n\\tgzip -9 -n -c $< > $@\\n\\n"
          f"clean:\\n\\trm -rf dist\\n")
    solve = f"printf '{mk}' > {root}/Makefile\nmake -C {root}"
    intro = (f"`{root}` turns {describe(a)} into JSON with the helper `tools/tojson.py`, but its `Makefile` is unfinished "
             f"and does not run.")
    return Fragment("Fix the Makefile", intro, checks, solve, out)


register(Recipe("makefile-build", "software-build-debug", "Finish a Makefile",
                lambda a: a.kind == "records" and a.exact and len(a.table.rows) >= 1, lambda ctx: seed_records(ctx),
                _make_build, weight=2, consumes="records", kinds=("build-project",)))


# --- unittest-fix --------------------------------------------------------------------------------

COUNTER_BUGGY = '''#!/usr/bin/env python3
"""Count the entries of a data file or folder and print them as JSON.

usage: entrycount.py PATH  ->  {"path": PATH, "entries": N}

Entries are: the data rows of a .csv/.tsv file (not its header), the objects of a .json
array, the non-blank lines of any other file (.jsonl, logs, lists), and the regular files
anywhere under a folder.
"""
import json
import os
import sys


def count_entries(path):
    if os.path.isdir(path):
        return len([f for f in os.listdir(path) if os.path.isfile(os.path.join(path, f))])
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".json"):
        return len(json.loads(text))
    lines = text.split("\\n")
    if path.endswith((".csv", ".tsv")):
        return len(lines)
    return len(lines)


def main(argv):
    print(json.dumps({"path": argv[1], "entries": count_entries(argv[1])}))


if __name__ == "__main__":
    main(sys.argv)
'''

COUNTER_FIXED = '''def count_entries(path):
    if os.path.isdir(path):
        return sum(len([f for f in fs if os.path.isfile(os.path.join(d, f))]) for d, _, fs in os.walk(path))
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".json"):
        return len(json.loads(text))
    lines = [l for l in text.splitlines() if l.strip()]
    if path.endswith((".csv", ".tsv")):
        return max(len(lines) - 1, 0)
    return len(lines)
'''

COUNTER_TESTS = '''import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from entrycount import count_entries  # noqa: E402


def write(folder, name, text):
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


class CountEntriesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def test_csv_rows_exclude_the_header(self):
        self.assertEqual(count_entries(write(self.dir, "a.csv", "id,n\\nx,1\\ny,2\\n")), 2)

    def test_tsv_rows_exclude_the_header(self):
        self.assertEqual(count_entries(write(self.dir, "a.tsv", "id\\tn\\nx\\t1\\n")), 1)

    def test_json_array_objects(self):
        self.assertEqual(count_entries(write(self.dir, "a.json", json.dumps([{"a": 1}, {"a": 2}, {"a": 3}]))), 3)

    def test_text_counts_non_blank_lines(self):
        self.assertEqual(count_entries(write(self.dir, "a.log", "one\\n\\n  \\ntwo\\nthree\\n")), 3)

    def test_jsonl_with_trailing_newline(self):
        self.assertEqual(count_entries(write(self.dir, "a.jsonl", '{"a": 1}\\n{"a": 2}\\n')), 2)

    def test_folder_counts_files_recursively(self):
        for name in ["a.txt", "sub/b.txt", "sub/deeper/c.txt"]:
            write(self.dir, "tree/" + name, "x\\n")
        self.assertEqual(count_entries(os.path.join(self.dir, "tree")), 3)


if __name__ == "__main__":
    unittest.main()
'''


def _entries(a: Artifact) -> int:
    if a.kind == "records":
        return len(a.table.rows)
    if a.kind == "lines":
        return sum(1 for x in a.lines if x.strip())
    return len(a.files)


def _unittest_build(ctx: StepContext, a: Artifact) -> Fragment:
    import hashlib
    tool = ctx.claim(ctx.rng.choice(["/app/tools/entrycount", "/app/src/entrycount", "/app/opt/entrycount"]))
    ctx.add_input(f"{tool}/entrycount.py", COUNTER_BUGGY, executable=True)
    ctx.add_input(f"{tool}/tests/test_entrycount.py", COUNTER_TESTS)
    digest = hashlib.sha256(COUNTER_TESTS.encode()).hexdigest()
    report = ctx.claim(f"/app/out/{stem_of(a)}_entries.json")
    n = _entries(a)
    extra = ("tmp = tempfile.mkdtemp()\n"
             "for rel, text in [('t/a.csv', 'h\\n1\\n2\\n\\n'), ('t/x/y/z.txt', '\\nq\\n\\nr\\n'), ('t/x/w.json', '[1, 2]')]:\n"
             "    os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)\n"
             "    Path(tmp, rel).write_text(text)\n"
             f"def count(p):\n    r = run(['python3', {tool + '/entrycount.py'!r}, p])\n"
             "    assert r.returncode == 0, r.stderr\n    return json.loads(r.stdout)['entries']\n"
             "assert [count(os.path.join(tmp, p)) for p in ['t/a.csv', 't/x/y/z.txt', 't/x/w.json', 't']] == [2, 2, 2, 3]")
    checks = [
        Check(ctx.rng.choice([
            f"Fix the bugs in `{tool}/entrycount.py` so that it does what its docstring says and the unit tests in "
            f"`{tool}/tests` pass with `python3 -m unittest discover -s {tool}/tests`, without changing "
            f"`{tool}/tests/test_entrycount.py`.",
            f"Make `python3 -m unittest discover -s {tool}/tests` pass by repairing `{tool}/entrycount.py` to match its "
            f"docstring, leaving `{tool}/tests/test_entrycount.py` as it is.",
            f"Repair `{tool}/entrycount.py` until it behaves as documented and `python3 -m unittest discover -s "
            f"{tool}/tests` succeeds, with `{tool}/tests/test_entrycount.py` untouched."]),
              [("unittests", f"r = run(['python3', '-m', 'unittest', 'discover', '-s', {tool + '/tests'!r}], cwd={tool!r})\n"
                             f"assert r.returncode == 0, r.stderr[-2000:]\nassert 'Ran 6 tests' in r.stderr, r.stderr[-500:]\n"
                             f"assert sha256_of({tool + '/tests/test_entrycount.py'!r}) == {digest!r}"),
               ("behaviour", extra)]),
        Check(ctx.rng.choice([f"Write the JSON object the fixed tool prints for `{a.path}` to `{report}`.",
                              f"Run the repaired tool on `{a.path}` and save the JSON object it prints as `{report}`.",
                              f"Save what the fixed tool prints for `{a.path}` (one JSON object) in `{report}`."]),
              [("report", f"data = json.loads(read_text({report!r}))\n"
                          f"assert data == {{'path': {a.path!r}, 'entries': {n}}}, data")]),
    ]
    solve = f"""mkdir -p /app/out
python3 - <<'PY'
import re
p = {tool + '/entrycount.py'!r}
src = open(p).read()
start = src.index("def count_entries(path):")
end = src.index("def main(argv):")
open(p, "w").write(src[:start] + {COUNTER_FIXED!r} + "\\n\\n" + src[end:])
PY
(cd {tool} && python3 -m unittest discover -s tests)
python3 {tool}/entrycount.py {a.path} > {report}"""
    intro = ctx.rng.choice(["`{t}` holds a small command-line tool that reports how many entries a data file holds; its "
                            "unit tests fail. Fix it, then use it on {d}.",
                            "The entry counter in `{t}` fails its own tests; repair it and count {d} with it.",
                            "Before counting {d}, the tool in `{t}` needs its failing unit tests fixed."]).format(t=tool, d=describe(a))
    title = ctx.rng.choice(["Fix the failing unit tests", "Make the unit tests pass", "Repair the entry counter"])
    return Fragment(title, intro, checks, solve, a)


register(Recipe("unittest-fix", "software-build-debug", "Fix a tool until its unit tests pass",
                lambda a: a.kind in ("records", "lines", "tree"), seed_any, _unittest_build, weight=2,
                consumes="records, lines or a folder", kinds=("test-suite", "source-tree")))
