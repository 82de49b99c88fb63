"""system-administration families: audit account files, summarise a process snapshot, deploy a
file and edit the service's INI configuration to point at it."""
from __future__ import annotations

from collections import defaultdict

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register
from .common import table_output_checks
from .seeds import FIRST, LAST, PRODUCTS, seed_any
from .trees import place_tree

SYSTEM = [("root", 0, "/root", "/bin/bash"), ("daemon", 1, "/usr/sbin", "/usr/sbin/nologin"),
          ("bin", 2, "/bin", "/usr/sbin/nologin"), ("sys", 3, "/dev", "/usr/sbin/nologin"),
          ("sync", 4, "/bin", "/bin/sync"), ("www-data", 33, "/var/www", "/usr/sbin/nologin"),
          ("sshd", 105, "/run/sshd", "/usr/sbin/nologin"), ("nobody", 65534, "/nonexistent", "/usr/sbin/nologin")]
SHELLS = ["/bin/bash"] * 4 + ["/bin/zsh", "/usr/sbin/nologin", "/bin/false"]


def seed_accounts(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    users = list(SYSTEM)
    names = set()
    uid = 1000
    for _ in range(rng.randint(6, 9)):
        while True:
            n = f"{rng.choice(FIRST)[:1]}{rng.choice(LAST)}"
            if n not in names:
                names.add(n)
                break
        users.append((n, uid, f"/home/{n}", rng.choice(SHELLS)))
        uid += rng.randint(1, 3)
    rng.shuffle(users)
    people = sorted(names)
    groups = {"sudo": (27, rng.sample(people, 2)), "docker": (998, rng.sample(people, rng.randint(1, 3))),
              "developers": (1500, rng.sample(people, rng.randint(2, 4))), "backup": (34, [])}
    passwd = "".join(f"{n}:x:{u}:{u if u >= 1000 else 0}:{n.capitalize()}:{h}:{s}\n" for n, u, h, s in users)
    group = "".join(f"{g}:x:{gid}:{','.join(sorted(m))}\n" for g, (gid, m) in sorted(groups.items()))
    group += "".join(f"{n}:x:{u}:\n" for n, u, _, _ in sorted(users, key=lambda x: x[1]) if u >= 1000 and u != 65534)
    root = ctx.claim(rng.choice(["/app/input/etc", "/app/input/etc-snapshot", "/app/input/server-etc"]))
    files = (("group", group.encode()), ("passwd", passwd.encode()))
    place_tree(ctx, root, list(files))
    return Artifact("tree", root, fmt="dir", files=files, flavor="accounts", label="accounts")


def _accounts_build(ctx: StepContext, a: Artifact) -> Fragment:
    files = dict(a.files)
    users = [line.split(":") for line in files["passwd"].decode().splitlines()]
    member = defaultdict(list)
    for line in files["group"].decode().splitlines():
        g, _, _, members = line.split(":")
        for m in filter(None, members.split(",")):
            member[m].append(g)
    rows = [(u[0], int(u[2]), u[5], u[6], ";".join(sorted(member[u[0]])))
            for u in users if int(u[2]) >= 1000 and u[2] != "65534" and u[6] not in ("/usr/sbin/nologin", "/bin/false")]
    rows.sort(key=lambda r: r[1])
    path = ctx.claim(f"/app/out/{ctx.rng.choice(['login_accounts', 'interactive_users', 'human_accounts'])}.csv")
    cols = ("user", "uid", "home", "shell", "groups")
    out = Artifact("records", path, fmt="csv", table=Table(cols, ("str", "int", "str", "str", "str"), tuple(rows)),
                   label="login_accounts")
    checks = table_output_checks(
        out, a.path, "by `uid` ascending", [list(r) for r in rows],
        f"Write `{path}` as a CSV file with a header row and one row per regular account in `{a.path}/passwd` (UID 1000 "
        f"or above, excluding 65534) whose shell is neither `/usr/sbin/nologin` nor `/bin/false`, giving its name, UID, "
        f"home folder and shell, and in `groups` the names of the groups in `{a.path}/group` that list it as a member, "
        f"sorted and joined with `;` (empty when none).")
    sudo = sorted(m for m, gs in member.items() if "sudo" in gs)
    admins = ctx.claim(f"/app/out/{ctx.rng.choice(['sudo_members', 'admins', 'sudoers_list'])}.txt")
    checks.append(Check(f"Write `{admins}` listing the members of the `sudo` group, sorted, one per line.",
                        [("sudo", f"assert read_lines({admins!r}) == {sudo!r}")]))
    body = f'''import csv
from collections import defaultdict
member = defaultdict(list)
for line in open({a.path + "/group"!r}):
    g, _, _, ms = line.rstrip("\\n").split(":")
    for m in filter(None, ms.split(",")):
        member[m].append(g)
rows = []
for line in open({a.path + "/passwd"!r}):
    u = line.rstrip("\\n").split(":")
    if int(u[2]) >= 1000 and u[2] != "65534" and u[6] not in ("/usr/sbin/nologin", "/bin/false"):
        rows.append([u[0], int(u[2]), u[5], u[6], ";".join(sorted(member[u[0]]))])
rows.sort(key=lambda r: r[1])
with open({path!r}, "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\\n")
    w.writerow({list(cols)!r})
    w.writerows(rows)
open({admins!r}, "w").write("".join(m + "\\n" for m in sorted(m for m, gs in member.items() if "sudo" in gs)))'''
    solve = f"mkdir -p /app/out\npython3 - <<'PY'\n{body}\nPY"
    return Fragment("Audit the login accounts", f"`{a.path}` holds copies of a server's `passwd` and `group` files.",
                    checks, solve, out)


register(Recipe("accounts-audit", "system-administration", "Audit login accounts",
                lambda a: a.kind == "tree" and a.flavor == "accounts", seed_accounts, _accounts_build, weight=1,
                consumes="passwd/group snapshot", kinds=("user-accounts", "config-file")))


# --- process-snapshot --------------------------------------------------------------------------

COMMANDS = ["/usr/sbin/nginx -g daemon off;", "postgres: writer process", "/usr/bin/python3 worker.py --queue high",
            "sshd: deploy [priv]", "/usr/lib/jvm/bin/java -Xmx2g -jar app.jar", "bash", "/usr/bin/redis-server *:6379",
            "cron -f", "node server.js", "[kworker/0:1]"]


def seed_ps(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    owners = ["root", "www-data", "postgres", rng.choice(FIRST), "redis"]
    lines = ["USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"]
    pids = sorted(rng.sample(range(1, 32000), rng.randint(22, 34)))
    for pid in pids:
        user = rng.choice(owners)
        zombie = rng.random() < 0.1
        cpu, mem = round(rng.uniform(0, 35), 1), round(rng.uniform(0, 12), 1)
        rss = 0 if zombie else rng.randint(800, 900000)
        vsz = 0 if zombie else rss + rng.randint(1000, 2000000)
        cmd = "[defunct]" if zombie else rng.choice(COMMANDS)
        stat = "Z" if zombie else rng.choice(["S", "Ss", "R", "Sl", "D", "I<"])
        lines.append(f"{user:<10} {pid:>6} {cpu:>4} {mem:>4} {vsz:>7} {rss:>6} ?        {stat:<4} 08:{rng.randint(0, 59):02d}   "
                     f"{rng.randint(0, 9)}:{rng.randint(0, 59):02d} {cmd}")
    path = ctx.claim(f"/app/input/{rng.choice(['ps_aux', 'processes', 'ps-snapshot'])}.txt")
    ctx.add_input(path, "\n".join(lines) + "\n")
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="ps", label="ps_aux")


def _ps_build(ctx: StepContext, a: Artifact) -> Fragment:
    procs = [x.split(None, 10) for x in a.lines[1:]]
    agg: dict = {}
    for p in procs:
        r = agg.setdefault(p[0], [0, 0.0, 0])
        r[0] += 1
        r[1] += float(p[2])
        r[2] += int(p[5])
    rows = sorted(((u, n, round(c, 2), rss) for u, (n, c, rss) in agg.items()), key=lambda r: (-r[3], r[0]))
    path = ctx.claim(f"/app/out/{ctx.rng.choice(['process_usage', 'usage_by_user', 'user_load'])}.csv")
    cols = ("user", "processes", "cpu_percent", "rss_kb")
    out = Artifact("records", path, fmt="csv", table=Table(cols, ("str", "int", "float", "int"), tuple(rows)),
                   label="process_usage")
    checks = table_output_checks(out, a.path, "by `rss_kb` from largest to smallest, breaking ties by `user` ascending",
                                 [list(r) for r in rows],
                                 f"Write `{path}` as a CSV file with a header row and one row per user in `{a.path}` "
                                 f"giving the number of processes, the sum of `%CPU` as `cpu_percent` and the sum of "
                                 f"`RSS` as `rss_kb`.")
    zombies = sorted(int(p[1]) for p in procs if p[7].startswith("Z"))
    zpath = ctx.claim(f"/app/out/{ctx.rng.choice(['zombie_pids', 'defunct', 'zombies'])}.txt")
    checks.append(Check(f"Write `{zpath}` listing the PIDs of the zombie processes (state starting with `Z`) in "
                        f"`{a.path}`, in ascending numeric order, one per line.",
                        [("zombies", f"assert [int(x) for x in read_lines({zpath!r})] == {zombies!r}")]))
    solve = (f"mkdir -p /app/out\n"
             f"{{ echo 'user,processes,cpu_percent,rss_kb'; tail -n +2 {a.path} | awk '{{n[$1]++; c[$1]+=$3; r[$1]+=$6}} "
             f"END {{for (u in n) printf \"%s,%d,%.2f,%d\\n\", u, n[u], c[u], r[u]}}' | sort -t, -k4,4nr -k1,1; }} > {path}\n"
             f"tail -n +2 {a.path} | awk '$8 ~ /^Z/ {{print $2}}' | sort -n > {zpath}")
    return Fragment("Summarise the process snapshot", f"`{a.path}` is a saved `ps aux` listing from a busy host.",
                    checks, solve, out)


register(Recipe("process-snapshot", "system-administration", "Summarise a process snapshot",
                lambda a: a.kind == "lines" and a.flavor == "ps", seed_ps, _ps_build, weight=1, consumes="ps listing", kinds=("running-process",)))


# --- config-deploy -----------------------------------------------------------------------------

def count_phrase(a: Artifact) -> tuple[str, str]:
    """How to say what `records = N` counts, and shell that computes it from the file."""
    p = a.path
    if a.kind == "records":
        if a.fmt in ("csv", "tsv"):
            return "the number of data rows in it (not counting the header)", f"$(( $(grep -c . {p}) - 1 ))"
        if a.fmt == "json":
            return "the number of objects in it", f"$(jq length {p})"
        return "the number of objects in it", f"$(grep -c . {p})"
    if a.kind == "lines":
        return "the number of non-blank lines in it", f"$(grep -c . {p})"
    if a.kind == "tree":
        return "the number of files in it", f"$(find {p} -type f | wc -l)"
    lister = f"unzip -Z1 {p}" if a.fmt == "zip" else f"tar -tf {p}"
    return "the number of files in it", f"$({lister} | grep -vc '/$')"


def _deploy_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    svc = rng.choice(PRODUCTS) + rng.choice(["d", "-svc", "-api"])
    ini = ctx.claim(f"/app/etc/{svc}.ini")
    old = f"/var/lib/{svc}/import.csv"
    text = (f"; {svc} service configuration\n; managed by hand, keep comments\n[service]\nname = {svc}\n"
            f"workers = {rng.randint(2, 16)}\nlegacy_mode = true\n\n[storage]\ndata_path = {old}\nrecords = 0\n"
            f"compress = {rng.choice(['yes', 'no'])}\n\n; verbose until the migration is done\n[logging]\n"
            f"level = debug\nfile = /var/log/{svc}.log\n")
    ctx.add_input(ini, text)
    dest = ctx.claim(f"/app/srv/{svc}/data/{a.basename}")
    n = a.count()
    what, count_sh = count_phrase(a)
    level = rng.choice(["warning", "error", "info"])
    keep = {"service": {"name": svc, "workers": text.split("workers = ")[1].split("\n")[0]},
            "storage": {"data_path": dest, "records": str(n), "compress": text.split("compress = ")[1].split("\n")[0]},
            "logging": {"level": level, "file": f"/var/log/{svc}.log"}}
    cp = (f"cp = configparser.ConfigParser(inline_comment_prefixes=None)\ncp.read({ini!r})\n"
          f"got = {{s: dict(cp[s]) for s in cp.sections()}}")
    checks = [
        Check(f"Copy {'the folder' if a.kind == 'tree' else 'the file'} `{a.path}` to `{dest}`.",
              [("deployed", f"assert same_files({dest!r}, {a.path!r})")]),
        Check(f"In `{ini}`, set `data_path` in section `[storage]` to `{dest}` and `records` to {what}.",
              [("storage", f"{cp}\nassert got['storage']['data_path'] == {dest!r}\nassert got['storage']['records'] == '{n}'")]),
        Check(f"Set `level` in section `[logging]` of `{ini}` to `{level}`.",
              [("logging", f"{cp}\nassert got['logging']['level'] == {level!r}")]),
        Check(f"Remove the `legacy_mode` key from section `[service]` of `{ini}`.",
              [("legacy", f"{cp}\nassert 'legacy_mode' not in got['service']")]),
        Check(f"Keep every other key, section and comment line of `{ini}` as it is.",
              [("kept", f"{cp}\nassert got == {keep!r}, got\ntext = read_text({ini!r})\n"
                        f"for c in {[l for l in text.splitlines() if l.startswith(';')]!r}:\n    assert c in text.splitlines(), c")]),
    ]
    solve = f"""mkdir -p $(dirname {dest})
cp -r {a.path} {dest}
n={count_sh}
sed -i -e '/^legacy_mode[[:space:]]*=/d' \\
  -e "s|^data_path[[:space:]]*=.*|data_path = {dest}|" \\
  -e "s|^records[[:space:]]*=.*|records = $n|" \\
  -e '/^\\[logging\\]/,/^\\[/ s|^level[[:space:]]*=.*|level = {level}|' {ini}"""
    intro = f"The service `{svc}` reads its settings from `{ini}`; deploy {describe(a)} for it."
    return Fragment("Deploy and reconfigure the service", intro, checks, solve, a.moved(dest))


register(Recipe("config-deploy", "system-administration", "Deploy a file and edit an INI config", lambda a: True,
                seed_any, _deploy_build, weight=1, universal=True, consumes="any", kinds=("config-file",)))
