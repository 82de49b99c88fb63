"""git families: publish a result in a fresh tagged repository; add it to a project with history
and report who committed what."""
from __future__ import annotations

from collections import Counter

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import table_output_checks
from .seeds import FIRST, LAST, seed_any

BOT = ("Data Bot", "databot@example.com")


def _blob_check(repo: str, rev: str, rel: str, a: Artifact) -> str:
    """Test body: the committed copy of `a` at `rel` equals the file(s) on disk."""
    if a.kind == "tree":
        return (f"names = run(['git', '-C', {repo!r}, 'ls-tree', '-r', '--name-only', {rev!r}, '--', {rel!r}]).stdout.split()\n"
                f"assert names == [{rel!r} + '/' + n for n in {a.names()!r}], names\n"
                f"for n in {a.names()!r}:\n"
                f"    blob = subprocess.run(['git', '-C', {repo!r}, 'show', {rev!r} + ':' + {rel!r} + '/' + n], capture_output=True).stdout\n"
                f"    assert blob == (Path({a.path!r}) / n).read_bytes(), n")
    return (f"blob = subprocess.run(['git', '-C', {repo!r}, 'show', {rev!r} + ':' + {rel!r}], capture_output=True)\n"
            f"assert blob.returncode == 0, blob.stderr\nassert blob.stdout == Path({a.path!r}).read_bytes()")


def _publish_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    repo = ctx.claim(f"/app/publish/{stem_of(a).replace('_', '-')}")
    name = a.basename
    rel = f"data/{name}"
    heading = f"# {stem_of(a).replace('_', ' ').capitalize()}"
    tag = f"v{rng.randint(0, 3)}.{rng.randint(0, 9)}.0"
    who = f"{BOT[0]} <{BOT[1]}>"
    g = f"['git', '-C', {repo!r}"
    checks = [
        Check(f"Create a Git repository at `{repo}` whose branch `main` is checked out and has exactly two commits.",
              [("repo", f"assert run({g}, 'symbolic-ref', 'HEAD']).stdout.strip() == 'refs/heads/main'\n"
                        f"assert run({g}, 'rev-list', '--count', 'main']).stdout.strip() == '2'")]),
        Check(f"The first commit adds only a `README.md` whose first line is `{heading}`, with the message `Add README`.",
              [("first", f"assert run({g}, 'log', '-1', '--format=%s', 'main~1']).stdout.strip() == 'Add README'\n"
                         f"assert run({g}, 'show', '--name-only', '--format=', 'main~1']).stdout.split() == ['README.md']\n"
                         f"assert run({g}, 'show', 'main~1:README.md']).stdout.splitlines()[0].strip() == {heading!r}")]),
        Check(f"The second commit adds `{rel}`, an identical copy of `{a.path}`, with the message `Add {name}`.",
              [("second", f"assert run({g}, 'log', '-1', '--format=%s', 'main']).stdout.strip() == {'Add ' + name!r}\n"
                          + _blob_check(repo, "main", rel, a))]),
        Check(f"Make both commits with the author `{who}`.",
              [("author", f"assert run({g}, 'log', '--format=%an <%ae>', 'main']).stdout.split('\\n')[:2] == [{who!r}] * 2")]),
        Check(f"Mark the second commit with the annotated tag `{tag}`.",
              [("tag", f"assert run({g}, 'cat-file', '-t', {tag!r}]).stdout.strip() == 'tag'\n"
                       f"assert run({g}, 'rev-parse', {tag + '^{commit}'!r}]).stdout == run({g}, 'rev-parse', 'main']).stdout")]),
        Check("Leave the working tree clean, with nothing uncommitted or untracked.",
              [("clean", f"st = run({g}, 'status', '--porcelain'])\nassert st.returncode == 0 and st.stdout == ''")]),
    ]
    ident = f"-c user.name='{BOT[0]}' -c user.email={BOT[1]}"
    solve = f"""mkdir -p {repo}
cd {repo}
git init -q -b main
printf '%s\\n\\n%s\\n' '{heading}' 'Published by the data pipeline.' > README.md
git add README.md
git {ident} commit -q -m 'Add README'
mkdir -p data
cp -r {a.path} {rel}
git add data
git {ident} commit -q -m 'Add {name}'
git {ident} tag -a {tag} -m 'Release {tag}'"""
    out = a.moved(f"{repo}/{rel}")
    return Fragment("Publish it in a tagged Git repository", f"Version {describe(a)} in a new repository.", checks,
                    solve, out)


register(Recipe("git-publish-tag", "git", "Publish in a tagged repository", lambda a: True, seed_any, _publish_build,
                weight=2, universal=True, consumes="any", kinds=("git-repository", "git-history")))


# --- git-history-authors -------------------------------------------------------------------------

SUBJECTS = ["Fix typo in {f}", "Refactor {f}", "Add tests for {f}", "Update {f}", "Handle empty input in {f}",
            "Document {f}"]
FILES = ["src/app.py", "src/util.py", "src/cli.py", "docs/index.md", "docs/usage.md", "Makefile"]


def fast_import_stream(ctx: StepContext) -> tuple[bytes, list[tuple[str, str, str]]]:
    """A deterministic `git fast-import` stream: (stream, [(author, email, subject)] oldest first)."""
    rng = ctx.rng
    people = []
    for f, l in zip(rng.sample(FIRST, 4), rng.sample(LAST, 4)):
        people.append((f"{f.capitalize()} {l.capitalize()}", f"{f}@example.com"))
    people = people[: rng.randint(3, 4)]
    weights = [rng.randint(1, 6) for _ in people]
    t = 1_700_000_000 + rng.randrange(10_000_000)
    content = {p: f"# {p}\n" for p in FILES}
    out, log, mark = [], [], 0
    for i in range(rng.randint(7, 12)):
        author = rng.choices(people, weights)[0] if i else people[0]
        f = rng.choice(FILES) if i else "docs/index.md"
        content[f] += f"change {i + 1}\n"
        subject = rng.choice(SUBJECTS).format(f=f.rsplit("/", 1)[-1]) if i else "Initial commit"
        t += rng.randint(3600, 86400 * 3)
        mark += 1
        blob = content[f].encode()
        out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(blob), blob))
        msg = (subject + "\n").encode()
        head = (f"commit refs/heads/main\nmark :{mark + 1000}\nauthor {author[0]} <{author[1]}> {t} +0000\n"
                f"committer {author[0]} <{author[1]}> {t} +0000\n").encode()
        frm = f"from :{mark + 999}\n".encode() if i else b""
        out.append(head + b"data %d\n%s" % (len(msg), msg) + frm + f"M 100644 :{mark} {f}\n\n".encode())
        log.append((author[0], author[1], subject))
    return b"".join(out) + b"done\n", log


def _history_build(ctx: StepContext, a: Artifact) -> Fragment:
    repo = ctx.claim(ctx.rng.choice(["/app/project", "/app/webapp", "/app/toolkit"]))
    stream, log = fast_import_stream(ctx)
    fi = ctx.add_input(ctx.claim("/app/project-history.fi"), stream)
    ctx.docker_run.append(f"git init -q -b main {repo} && git -C {repo} fast-import --quiet --done < {fi} "
                          f"&& git -C {repo} reset -q --hard main && rm {fi}")
    name = a.basename
    rel = f"reports/{name}"
    bot = ("Report Bot", "reports@example.com")
    counts = Counter((au, em) for au, em, _ in log)
    counts[bot] += 1
    rows = sorted(((au, em, n) for (au, em), n in counts.items()), key=lambda r: (-r[2], r[0]))
    path = ctx.claim(f"/app/out/{ctx.rng.choice(['commit_authors', 'authors', 'contributors'])}.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("author", "email", "commits"), ("str", "str", "int"),
                                                           tuple(rows)), label="commit_authors")
    g = f"['git', '-C', {repo!r}"
    checks = [
        Check(f"Add `{a.path}` to the repository `{repo}` as `{rel}` in one new commit on `main` with the message "
              f"`Add {name} report` and the author `{bot[0]} <{bot[1]}>`.",
              [("commit", f"assert run({g}, 'rev-list', '--count', 'main']).stdout.strip() == '{len(log) + 1}'\n"
                          f"assert run({g}, 'log', '-1', '--format=%s|%an <%ae>', 'main']).stdout.strip() == "
                          f"{f'Add {name} report|{bot[0]} <{bot[1]}>'!r}\n"
                          f"assert run({g}, 'log', '-1', '--format=%s', 'main~1']).stdout.strip() == {log[-1][2]!r}\n"
                          + _blob_check(repo, "main", rel, a))]),
        Check(f"Keep the existing history of `{repo}` as it is, building the new commit on top of it.",
              [("history", f"subjects = run({g}, 'log', '--format=%s', 'main']).stdout.splitlines()[1:]\n"
                           f"assert subjects == {[s for _, _, s in reversed(log)]!r}")]),
    ]
    checks += table_output_checks(out, repo, "by `commits` from largest to smallest, breaking ties by `author` ascending",
                                  [list(r) for r in rows],
                                  f"Write `{path}` as a CSV file with a header row and one row per commit author of "
                                  f"`main` in `{repo}` (including your commit) giving the author name as `author`, "
                                  f"the e-mail as `email` and the number of commits as `commits`.")
    solve = f"""mkdir -p {repo}/reports /app/out
cp -r {a.path} {repo}/{rel}
git -C {repo} add {rel}
git -C {repo} -c user.name='{bot[0]}' -c user.email={bot[1]} commit -q --author='{bot[0]} <{bot[1]}>' -m 'Add {name} report'
{{ echo author,email,commits; git -C {repo} log --format='%an,%ae' main | sort | uniq -c | sort -k1,1nr -k2 \\
  | sed -E 's/^ *([0-9]+) (.*)$/\\2,\\1/'; }} > {path}"""
    intro = f"`{repo}` is a Git project with existing history; file {describe(a)} into it and summarise who committed."
    return Fragment("Commit into an existing project and report authors", intro, checks, solve, out)


register(Recipe("git-history-authors", "git", "Commit into history and report authors", lambda a: True, seed_any,
                _history_build, weight=2, universal=True, consumes="any", kinds=("git-repository", "git-history")))


# --- git-revert-branch ---------------------------------------------------------------------------

def _revert_stream(ctx: StepContext) -> tuple[bytes, str, str, str, list[str]]:
    """History with one bad commit: (stream, settings before it, bad subject, later subjects, all subjects)."""
    rng = ctx.rng
    f, l = rng.choice(FIRST), rng.choice(LAST)
    who = f"{f.capitalize()} {l.capitalize()} <{f}@example.com>"
    t = 1_700_000_000 + rng.randrange(10_000_000)
    timeout, retries = rng.choice([10, 20, 30, 45]), rng.randint(2, 5)
    files = {"config/settings.ini": f"[http]\ntimeout = {timeout}\nretries = {retries}\n",
             "src/app.py": "def main():\n    pass\n", "docs/README.md": "# Service\n"}
    good = files["config/settings.ini"]
    bad_subject, bad_value = rng.choice([("Tune request timeout", f"[http]\ntimeout = 0\nretries = {retries}\n"),
                                         ("Simplify retry settings", f"[http]\ntimeout = {timeout}\nretries = -1\n")])
    plan = [("Initial commit", dict(files))]
    for i in range(rng.randint(1, 3)):
        f2 = rng.choice(["src/app.py", "docs/README.md"])
        files[f2] += f"# revision {i + 1}\n"
        plan.append((rng.choice(SUBJECTS).format(f=f2.rsplit("/", 1)[-1]) + f" ({i + 1})", {f2: files[f2]}))
    plan.append((bad_subject, {"config/settings.ini": bad_value}))
    later = []
    for i in range(rng.randint(1, 2)):
        f2 = rng.choice(["src/app.py", "docs/README.md"])
        files[f2] += f"# follow-up {i + 1}\n"
        subj = rng.choice(SUBJECTS).format(f=f2.rsplit("/", 1)[-1]) + f" (follow-up {i + 1})"
        plan.append((subj, {f2: files[f2]}))
        later.append(subj)
    times = []
    for _ in plan:
        t += rng.randint(3600, 86400)
        times.append(t)
    return (fast_import(plan, who, times), good, bad_subject, "\n".join(later), [s for s, _ in plan])


def fast_import(plan: list[tuple[str, dict[str, str]]], who: str, times: list[int],
                executable: frozenset[str] = frozenset()) -> bytes:
    """A `git fast-import` stream of linear commits on `main`: per commit its subject and changed
    files (path -> text), its time, the paths committed as executable."""
    out, mark = [], 0
    for k, ((subject, changes), t) in enumerate(zip(plan, times)):
        ms = []
        for path, body in sorted(changes.items()):
            mark += 1
            blob = body.encode()
            out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(blob), blob))
            ms.append(f"M {'100755' if path in executable else '100644'} :{mark} {path}\n")
        msg = (subject + "\n").encode()
        head = f"commit refs/heads/main\nmark :{1000 + k}\nauthor {who} {t} +0000\ncommitter {who} {t} +0000\n".encode()
        frm = f"from :{999 + k}\n".encode() if k else b""
        out.append(head + b"data %d\n%s" % (len(msg), msg) + frm + "".join(ms).encode() + b"\n")
    return b"".join(out) + b"done\n"


def _revert_build(ctx: StepContext, a: Artifact) -> Fragment:
    repo = ctx.claim(ctx.rng.choice(["/app/service", "/app/api-repo", "/app/backend"]))
    stream, good, bad, later, subjects = _revert_stream(ctx)
    later = later.split("\n")
    fi = ctx.add_input(ctx.claim("/app/service-history.fi"), stream)
    ctx.docker_run.append(f"git init -q -b main {repo} && git -C {repo} fast-import --quiet --done < {fi} "
                          f"&& git -C {repo} reset -q --hard main && rm {fi}")
    stem = stem_of(a).replace("_", "-")
    branch = f"data/{stem}"
    name = a.basename
    rel = f"incoming/{name}"
    revert_msg = f'Revert "{bad}"'
    report = ctx.claim(f"/app/out/{stem}_since_bad_commit.txt")
    g = f"['git', '-C', {repo!r}"
    n = len(subjects)
    checks = [
        Check(f"Undo the commit `{bad}` on `main` of `{repo}` with one new commit on top of `main` whose message is "
              f"Git's default revert message `{revert_msg}`, keeping the rest of the history as it is.",
              [("revert", f"assert run({g}, 'rev-list', '--count', 'main']).stdout.strip() == '{n + 1}'\n"
                          f"assert run({g}, 'log', '-1', '--format=%s', 'main']).stdout.strip() == {revert_msg!r}\n"
                          f"assert run({g}, 'log', '--format=%s', 'main~1']).stdout.splitlines() == {subjects[::-1]!r}\n"
                          f"assert run({g}, 'show', 'main:config/settings.ini']).stdout == {good!r}")]),
        Check(f"Create the branch `{branch}` from the new `main` with one more commit that adds `{rel}`, an identical "
              f"copy of `{a.path}`, with the message `Add {name}`, leaving `main` without `incoming/`.",
              [("branch", f"assert run({g}, 'rev-parse', {branch + '~1'!r}]).stdout == run({g}, 'rev-parse', 'main']).stdout\n"
                          f"assert run({g}, 'log', '-1', '--format=%s', {branch!r}]).stdout.strip() == {'Add ' + name!r}\n"
                          f"assert run({g}, 'ls-tree', '--name-only', 'main', 'incoming']).stdout == ''\n"
                          + _blob_check(repo, branch, rel, a))]),
        Check(f"Leave `{branch}` checked out in `{repo}` with a clean working tree.",
              [("checkout", f"assert run({g}, 'symbolic-ref', 'HEAD']).stdout.strip() == {'refs/heads/' + branch!r}\n"
                            f"st = run({g}, 'status', '--porcelain'])\nassert st.returncode == 0 and st.stdout == ''")]),
        Check(f"Write `{report}` with the subjects of the commits on `main` that came after `{bad}` (your revert "
              f"included), oldest first, one per line.",
              [("report", f"assert read_lines({report!r}) == {later + [revert_msg]!r}")]),
    ]
    ident = f"-c user.name='{BOT[0]}' -c user.email={BOT[1]}"
    solve = f"""mkdir -p /app/out
cd {repo}
bad=$(git log --format='%H %s' main | awk -v s={bad!r} '{{h=$1; $1=""; if (substr($0, 2) == s) print h}}')
git {ident} revert --no-edit "$bad"
git log --reverse --format=%s "$bad"..main > {report}
git checkout -q -b {branch}
mkdir -p incoming
cp -r {a.path} {rel}
git add incoming
git {ident} commit -q -m 'Add {name}'"""
    intro = (f"`{repo}` is a service repository; a recent commit broke its configuration. Revert it, then hand "
             f"{describe(a)} over on a branch of its own.")
    return Fragment("Revert the bad commit and branch off", intro, checks, solve, a.moved(f"{repo}/{rel}"))


register(Recipe("git-revert-branch", "git", "Revert a bad commit and branch off", lambda a: True, seed_any,
                _revert_build, weight=2, universal=True, consumes="any", kinds=("git-repository", "git-history")))
