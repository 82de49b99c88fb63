"""security-permissions family: a team's shared folder — group ownership, a setgid folder so new
files keep the group, no access for others — with the previous step's result placed in it and a
checksum manifest of what it holds. For a skill that runs setfacl/getfacl, one reader outside the
group also gets read-only access through POSIX ACLs, default ACLs included.

Reads: anything (universal: the artifact is copied into the shared folder).
Leaves: the same artifact at its place inside the shared folder.
"""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, SynthesisError, describe, register
from .seeds import FIRST, seed_any

TEAMS = ["analysts", "ops", "qa", "designers", "finance", "research", "release"]

# Test body: every entry under the folder has the group and the modes asked for.
_TREE_MODES = '''import grp
gid = grp.getgrnam({team!r}).gr_gid
top = Path({root!r})
assert top.is_dir() and not top.is_symlink(), "no shared folder"
for p in [top, *top.rglob("*")]:
    st = os.lstat(p)
    assert not stat.S_ISLNK(st.st_mode), f"{{p}} is a symlink"
    assert st.st_gid == gid, f"{{p}} is not in group {team}"
    want = 0o2770 if p.is_dir() else 0o660
    assert stat.S_IMODE(st.st_mode) == want, f"{{p}} has mode {{oct(stat.S_IMODE(st.st_mode))}}, expected {{oct(want)}}"'''

# Test body: the reader's ACL entries, read from the xattrs themselves (not the container's getfacl):
# a 4-byte header, then (tag, perm, id) entries; tag 2 is a named user.
_READER_ACL = '''import pwd, struct
uid = pwd.getpwnam({reader!r}).pw_uid
def named_user(p, xattr):
    try:
        raw = os.getxattr(p, xattr, follow_symlinks=False)
    except OSError:
        return None
    return {{i: perm for tag, perm, i in struct.iter_unpack("<HHI", raw[4:]) if tag == 2}}.get(uid)
top = Path({root!r})
assert top.is_dir(), "no shared folder"
for p in [top, *top.rglob("*")]:
    want = 5 if p.is_dir() else 4
    assert named_user(p, "system.posix_acl_access") == want, f"{{p}}: {reader} should have {{'r-x' if want == 5 else 'r--'}}"
    if p.is_dir():
        assert named_user(p, "system.posix_acl_default") == 5, f"{{p}}: no default ACL entry r-x for {reader}"'''
READERS = ["auditor", "reviewer", "compliance", "observer"]


def _shared_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    made = " ".join(ctx.docker_run)
    team = rng.choice([t for t in TEAMS if f"groupadd {t} " not in made] or [None])
    if team is None:
        raise SynthesisError("every team name of shared-group-folder is taken in this task")
    members = sorted(rng.sample(FIRST, rng.randint(2, 3)))
    # The group and its members exist in the image, as on a real server (a user another step
    # already made only joins the group).
    ctx.docker_run.append(f"groupadd {team} && for m in {' '.join(members)}; do id -u $m >/dev/null 2>&1 || "
                          f"useradd -M -N -s /usr/sbin/nologin $m; usermod -a -G {team} $m; done")
    reader = None
    if ctx.pick(["group-only", "reader-acl"], {"reader-acl": {"setfacl", "getfacl"}}) == "reader-acl":
        reader = rng.choice([r for r in READERS if r not in made] or [None])
    if reader:
        ctx.docker_run.append(f"id -u {reader} >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin {reader}")
    root = ctx.claim(f"/app/shared/{team}")
    name = a.basename
    dest = f"{root}/{name}"
    manifest = f"{root}/SHA256SUMS"
    members_file = ctx.claim(f"/app/out/{team}_members.txt")
    checks = [
        Check(f"Create `{root}` owned by `root` and the group `{team}` with mode 2770, so that whatever is created in "
              f"it keeps the group `{team}`.",
              [("folder", f"import grp\nst = os.stat({root!r})\nassert st.st_uid == 0\n"
                          f"assert st.st_gid == grp.getgrnam({team!r}).gr_gid\nassert mode_of({root!r}) == 0o2770")]),
        Check(f"Copy `{a.path}` to `{dest}`.", [("copied", f"assert same_files({dest!r}, {a.path!r})")]),
        Check(f"Give every folder under `{root}` the group `{team}` and mode 2770 and every file the group `{team}` "
              f"and mode 0660, with no symbolic links.",
              [("modes", _TREE_MODES.format(team=team, root=root))]),
        Check(f"Write `{manifest}` in `sha256sum` format listing every other file under `{root}` by its path "
              f"relative to `{root}`, sorted by path.",
              [("manifest", f"lines = read_lines({manifest!r})\nnames = [l.split(None, 1)[1].lstrip('*') for l in lines]\n"
                            f"want = [n for n in files_under({root!r}) if n != 'SHA256SUMS']\n"
                            f"assert names == want and want, names\nfor l in lines:\n    d, n = l.split(None, 1)\n"
                            f"    assert sha256_of(Path({root!r}) / n.lstrip('*')) == d, n")]),
        Check(f"Write `{members_file}` with the members of the group `{team}` as `/etc/group` lists them, sorted, one "
              f"per line.", [("members", f"assert read_lines({members_file!r}) == {members!r}")]),
    ]
    if reader:
        checks.append(Check(f"Give the user `{reader}`, who is not in `{team}`, read access to every file and read and "
                            f"enter access to every folder under `{root}` through ACL entries, and the same as a "
                            f"default ACL on every folder, without changing the modes asked for.",
                            [("reader_acl", _READER_ACL.format(reader=reader, root=root))]))
    solve = f"""mkdir -p {root} /app/out
chown root:{team} {root}
chmod 2770 {root}
cp -r {a.path} {dest}
chgrp -R {team} {root}
find {root} -type d -exec chmod 2770 {{}} +
(cd {root} && find . -type f ! -path ./SHA256SUMS -printf '%P\\n' | sort | xargs -d '\\n' sha256sum) > /tmp/sums
mv /tmp/sums {manifest}
chgrp {team} {manifest}
find {root} -type f -exec chmod 0660 {{}} +
python3 -c 'import grp; print("\\n".join(sorted(grp.getgrnam("{team}").gr_mem)))' > {members_file}"""
    if reader:     # after the chmods: X needs the final modes, and chmod would reset the ACL mask
        solve += f"""
setfacl -R -m u:{reader}:rX {root}
find {root} -type d -exec setfacl -d -m u:{reader}:rX {{}} +"""
    intro = rng.choice([f"The team `{team}` needs a folder of its own for {describe(a)}.",
                        f"Share {describe(a)} with the group `{team}` and nobody else.",
                        f"Members of `{team}` will work on {describe(a)} together; set up their shared folder."])
    title = rng.choice(["Set up the team's shared folder", "Share it with one group", "Give the team a setgid folder"])
    return Fragment(title, intro, checks, solve, a.moved(dest))


register(Recipe("shared-group-folder", "security-permissions", "A setgid folder shared by one group", lambda a: True,
                seed_any, _shared_build, weight=2, universal=True, consumes="any", tools=("setfacl",),
                kinds=("file-permissions", "user-accounts", "checksum-manifest")))
