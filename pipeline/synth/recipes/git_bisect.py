"""git family: find the commit that broke a project's check with `git bisect`, tag it, and
tabulate the check at every commit.

Reads: its own repository (it starts a path; built from a fast-import stream at image build time).
Leaves: records — one row per commit of `main` (seq, subject, pass/fail), a table any
records family can take on.
"""
from __future__ import annotations

from .base import Check, Fragment, Recipe, StepContext, Table, Artifact, register
from .common import table_output_checks
from .git import fast_import
from .seeds import FIRST, LAST

PROJECTS = ["pricing", "ledger", "invoice-tool", "calc-lib", "tally", "billing-core"]
GOOD = "def total(values):\n    return sum(values)\n"
BUGS = ["def total(values):\n    return sum(values[1:])\n",
        "def total(values):\n    return sum(values) - min(values)\n",
        "def total(values):\n    return sum(v for v in values if v > 3)\n",
        "def total(values):\n    return max(values) * len(values)\n"]
CHECK = ("#!/bin/sh\n# exits 0 when total() adds up, 1 when it does not\ncd \"$(dirname \"$0\")\"\n"
         "exec python3 -c 'import sys; sys.path.insert(0, \"src\"); from calc import total; "
         "sys.exit(0 if total([2, 3, 4, 5]) == 14 else 1)'\n")
TOUCHES = [("docs/usage.md", "Describe {n} in the usage notes"), ("README.md", "Mention {n} in the README"),
           ("src/cli.py", "Add the {n} option to the CLI"), ("src/format.py", "Format {n} output"),
           ("tests/notes.txt", "Note the {n} case")]
BAD_PREFIX = "Simplify total() for"
TOPICS = ["rounding", "currencies", "empty input", "large totals", "negative values", "csv export", "locales",
          "batch mode", "verbose output", "config files", "timeouts", "unicode names"]


TITLES = ["Bisect the regression", "Find the breaking commit", "Hunt down the regression"]
INTROS = ["`{repo}` is a small project whose `check.sh` passed when it started and fails today.",
          "Somewhere in the history of `{repo}` its `check.sh` started failing.",
          "The check script of the project in `{repo}` used to pass; find out since when it fails."]


def _history(ctx: StepContext) -> tuple[list[tuple[str, dict[str, str]]], int]:
    """(plan, index of the first bad commit): a good start, harmless work, one breaking change to
    `src/calc.py` in the middle, more work after it (also on calc.py, keeping the bug)."""
    rng = ctx.rng
    n = rng.randint(9, len(TOPICS))
    bad = rng.randint(2, n - 3)
    topics = rng.sample(TOPICS, n)
    files = {"src/calc.py": GOOD, "check.sh": CHECK, "README.md": "# Project\n", ".gitignore": "__pycache__/\n"}
    plan = [("Initial commit", dict(files))]
    bug = rng.choice(BUGS)
    for k in range(1, n):
        if k == bad:
            files["src/calc.py"] = bug
            plan.append((f"{BAD_PREFIX} {topics[k]}", {"src/calc.py": bug}))
            continue
        if k > bad and rng.random() < 0.3:
            files["src/calc.py"] += f"# {topics[k]} reviewed\n"
            plan.append((f"Review calc.py for {topics[k]}", {"src/calc.py": files["src/calc.py"]}))
            continue
        path, subject = rng.choice(TOUCHES)
        files[path] = files.get(path, "") + f"- {topics[k]}\n"
        plan.append((subject.format(n=topics[k]), {path: files[path]}))
    return plan, bad


def seed_bisect_repo(ctx: StepContext) -> Artifact:
    """The repository, built from a fast-import stream at image build time: a tree artifact whose
    `lines` are the subjects of `main`, oldest first."""
    rng = ctx.rng
    repo = ctx.claim(f"/app/{rng.choice(PROJECTS)}")
    plan, _ = _history(ctx)
    f, l = rng.choice(FIRST), rng.choice(LAST)
    t0 = 1_700_000_000 + rng.randrange(10_000_000)
    stream = fast_import(plan, f"{f.capitalize()} {l.capitalize()} <{f}@example.com>",
                         [t0 + 3600 * (k + 1) for k in range(len(plan))], frozenset({"check.sh"}))
    fi = ctx.add_input(ctx.claim(f"{repo}-history.fi"), stream)
    ctx.docker_run.append(f"git init -q -b main {repo} && git -C {repo} fast-import --quiet --done < {fi} "
                          f"&& git -C {repo} reset -q --hard main && rm {fi}")
    head: dict[str, str] = {}
    for _, changes in plan:
        head.update(changes)
    return Artifact("tree", repo, fmt="dir", files=tuple((p, b.encode()) for p, b in sorted(head.items())),
                    lines=tuple(s for s, _ in plan), flavor="git-bisect", label=repo.rsplit("/", 1)[1])


def _bisect_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    repo = a.path
    subjects = list(a.lines)
    bad = next(i for i, s in enumerate(subjects) if s.startswith(BAD_PREFIX))
    bad_subject = subjects[bad]
    tag = rng.choice(["first-bad", "regression", "broke-total", "bisect-found"])
    hash_file = ctx.claim(f"/app/out/{a.label}_first_bad.txt")
    report = ctx.claim(f"/app/out/{a.label}_check_history.csv")
    rows = tuple((i + 1, s, "pass" if i < bad else "fail") for i, s in enumerate(subjects))
    out = Artifact("records", report, fmt="csv", table=Table(("seq", "subject", "status"), ("int", "str", "str"), rows),
                   label="check_history")
    g = f"['git', '-C', {repo!r}"
    find_bad = (f"log = run({g}, 'log', '--format=%H%x09%s', 'main']).stdout.splitlines()\n"
                f"bad = [h for h, s in (x.split('\\t', 1) for x in log) if s == {bad_subject!r}]\n"
                f"assert len(bad) == 1, log\n")
    checks = [
        Check(f"Tag the first commit of `main` in `{repo}` at which `{repo}/check.sh` fails with the tag `{tag}`.",
              [("tag", find_bad + f"assert run({g}, 'rev-parse', {tag + '^{commit}'!r}]).stdout.strip() == bad[0]")]),
        Check(f"Write the full 40-character hash of that commit to `{hash_file}` as its only line.",
              [("hash", find_bad + f"assert read_lines({hash_file!r}) == [bad[0]]")]),
        Check(f"After the hunt leave `main` checked out in `{repo}`, with its history exactly as it was, no bisect "
              f"session open and a clean working tree.",
              [("state", f"assert run({g}, 'rev-parse', '--verify', '-q', {tag!r}]).returncode == 0, 'no tag {tag} yet'\n"
                         f"assert run({g}, 'symbolic-ref', 'HEAD']).stdout.strip() == 'refs/heads/main'\n"
                         f"assert not Path({repo!r}, '.git', 'BISECT_START').exists()\n"
                         f"st = run({g}, 'status', '--porcelain'])\nassert st.returncode == 0 and st.stdout == ''\n"
                         f"assert run({g}, 'log', '--reverse', '--format=%s', 'main']).stdout.splitlines() == "
                         f"{subjects!r}")]),
    ]
    checks += table_output_checks(out, repo, "by `seq` ascending", [list(r) for r in rows],
                                  f"Write `{report}` as a CSV file with a header row and one row per commit of `main`, "
                                  f"oldest first, giving its position counted from 1 as `seq`, its subject as `subject` "
                                  f"and `pass` or `fail` as `status` by the exit code of `check.sh` at that commit.")
    solve = f"""mkdir -p /app/out
cd {repo}
git bisect start main "$(git rev-list --max-parents=0 main)"
git bisect run ./check.sh
bad=$(git rev-parse refs/bisect/bad)
git bisect reset >/dev/null
git tag {tag} "$bad"
echo "$bad" > {hash_file}
{{
  echo seq,subject,status
  i=0
  for c in $(git rev-list --reverse main); do
    i=$((i + 1))
    git checkout -q "$c"
    if ./check.sh; then s=pass; else s=fail; fi
    printf '%s,%s,%s\\n' "$i" "$(git log -1 --format=%s "$c")" "$s"
  done
}} > {report}
git checkout -q main"""
    return Fragment(rng.choice(TITLES), rng.choice(INTROS).format(repo=repo), checks, solve, out)


register(Recipe("git-bisect-regression", "git", "Find the breaking commit with git bisect",
                lambda a: a.kind == "tree" and a.flavor == "git-bisect", seed_bisect_repo, _bisect_build, weight=2,
                consumes="its own repository (starts a path)",
                kinds=("git-repository", "git-history", "shell-script", "csv-table")))
