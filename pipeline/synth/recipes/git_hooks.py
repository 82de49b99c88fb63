"""git family: a pre-commit hook that refuses oversized files and private keys, then the previous
step's result committed through it. The tests run the hook themselves, in a copy of the repository.

Reads: anything (universal: the artifact is committed into the repository).
Leaves: the same artifact, committed at `data/<name>` in the repository.
"""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, register
from .git import fast_import
from .seeds import FIRST, LAST, seed_any

REPOS = ["/app/datasets", "/app/handover", "/app/shared-repo", "/app/drop"]
KEY_PATTERNS = "`*.pem`, `*.key` or `id_rsa*`"
TITLES = ["Guard the repository with a pre-commit hook", "Add a pre-commit guard", "Install a commit hook"]
INTROS = ["Large blobs and private keys keep ending up in `{repo}`; stop them at commit time, then add {d}.",
          "`{repo}` needs a pre-commit hook before {d} goes in.",
          "Protect `{repo}` with a hook, then commit {d} through it."]

# Test body: commits in a throwaway copy of the repository, through the hook the solution installed.
_ATTEMPTS = '''tmp = tempfile.mkdtemp()
try:
    work = Path(tmp, "repo")
    shutil.copytree({repo!r}, work, symlinks=True)
    def git(*args):
        return run(["git", "-C", str(work), "-c", "user.name=Hook Test", "-c", "user.email=hook@example.com", *args],
                   timeout=30)
    def commits(name, data):
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        git("add", "--", name)
        before = git("rev-parse", "HEAD").stdout
        done = git("commit", "-q", "-m", "try " + name).returncode == 0 and git("rev-parse", "HEAD").stdout != before
        if not done:
            git("rm", "-q", "--cached", "--", name)
        return done
{body}
finally:
    shutil.rmtree(tmp, ignore_errors=True)'''


def _hook_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    repo = ctx.claim(rng.choice(REPOS))
    f, l = rng.choice(FIRST), rng.choice(LAST)
    t0 = 1_700_000_000 + rng.randrange(10_000_000)
    plan = [("Initial commit", {"README.md": f"# {repo.rsplit('/', 1)[1]}\n"})]
    fi = ctx.add_input(ctx.claim(f"{repo}-history.fi"),
                       fast_import(plan, f"{f.capitalize()} {l.capitalize()} <{f}@example.com>", [t0]))
    ctx.docker_run.append(f"git init -q -b main {repo} && git -C {repo} fast-import --quiet --done < {fi} "
                          f"&& git -C {repo} reset -q --hard main && rm {fi}")
    limit = rng.choice([64, 100, 128, 256, 500]) * 1024
    name = a.basename
    rel = f"data/{name}"
    hook = f"{repo}/.git/hooks/pre-commit"
    g = f"['git', '-C', {repo!r}"
    blob = "\n".join([
        f"names = run({g}, 'ls-tree', '-r', '--name-only', 'main', '--', {rel!r}]).stdout.split()",
        f"assert names, 'nothing committed at {rel}'",
        f"for n in names:",
        f"    got = subprocess.run(['git', '-C', {repo!r}, 'show', 'main:' + n], capture_output=True).stdout",
        f"    src = Path({a.path!r}) / n[len({rel!r}) + 1:] if Path({a.path!r}).is_dir() else Path({a.path!r})",
        f"    assert got == src.read_bytes(), n"])
    checks = [
        Check(f"Install a pre-commit hook in `{repo}` that refuses a commit when a staged file is larger than {limit} "
              f"bytes and lets smaller ones through.",
              [("size", _ATTEMPTS.format(repo=repo, body=(
                  f"    assert commits('notes/small.txt', b'fine\\n'), 'a small file was refused'\n"
                  f"    assert commits('edge.bin', b'x' * {limit}), 'a file of exactly {limit} bytes was refused'\n"
                  f"    assert not commits('big.bin', b'x' * {limit + 1}), 'a file over the limit was committed'")))]),
        Check(f"Make the hook also refuse a staged file whose name matches {KEY_PATTERNS}.",
              [("keys", _ATTEMPTS.format(repo=repo, body=(
                  "    assert commits('ok.txt', b'plain\\n'), 'a plain file was refused'\n"
                  "    for n in ['certs/server.pem', 'deploy.key', 'id_rsa', 'keys/id_rsa.pub']:\n"
                  "        assert not commits(n, b'-----BEGIN PRIVATE KEY-----\\n'), n + ' was committed'")))]),
        Check(f"Commit `{a.path}` as `{rel}` on `main` of `{repo}` with the message `Add {name}`, through the hook.",
              [("commit", f"assert run({g}, 'log', '-1', '--format=%s', 'main']).stdout.strip() == {'Add ' + name!r}\n"
                          f"assert run({g}, 'rev-list', '--count', 'main']).stdout.strip() == '2'\n" + blob)]),
    ]
    ident = f"-c user.name='{f.capitalize()} {l.capitalize()}' -c user.email={f}@example.com"
    solve = f"""cat > {hook} <<'SH'
#!/bin/bash
# Refuse staged files over the size limit and anything that looks like a private key.
limit={limit}
status=0
while IFS= read -r -d '' f; do
  case "${{f##*/}}" in
    *.pem|*.key|id_rsa*) echo "pre-commit: $f looks like a private key" >&2; status=1 ;;
  esac
  size=$(git cat-file -s ":$f")
  if [ "$size" -gt "$limit" ]; then echo "pre-commit: $f is $size bytes (limit $limit)" >&2; status=1; fi
done < <(git diff --cached --name-only --diff-filter=ACMR -z)
exit $status
SH
chmod +x {hook}
mkdir -p {repo}/data
cp -r {a.path} {repo}/{rel}
git -C {repo} add data
git -C {repo} {ident} commit -q -m 'Add {name}'"""
    return Fragment(rng.choice(TITLES), rng.choice(INTROS).format(repo=repo, d=describe(a)), checks, solve,
                    a.moved(f"{repo}/{rel}"))


register(Recipe("git-hook-guard", "git", "A pre-commit hook, then a commit through it", lambda a: True, seed_any,
                _hook_build, weight=2, universal=True, consumes="any",
                kinds=("git-repository", "shell-script")))
