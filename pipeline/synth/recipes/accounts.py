"""system-administration family: provision real accounts on this machine from a table — one user
per row, a group per department, home folders, locked passwords — and report what was made.

Reads: records with a column of unique login names and a column to group them by (the staff
table, or any table shaped like it).
Leaves: records — one row per account made (user, group, home), for any records family.
"""
from __future__ import annotations

import re
from datetime import date

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import py_block, table_output_checks
from .formats import render_table
from .seeds import DEPARTMENTS, DOMAINS, FIRST, LAST, a_date

LOGIN = re.compile(r"^[a-z][a-z0-9.]{1,30}$")
SHELLS = ["/bin/bash", "/bin/sh"]
TITLES = ["Provision the accounts", "Create the staff accounts", "Set up users and groups"]
INTROS = ["Everyone in {d} needs an account on this machine.", "Turn {d} into real users and groups here.",
          "New staff are listed in {d}; give each of them a login."]


def _columns(a: Artifact) -> tuple[str, str] | None:
    """(login column, group column) of a table that can be provisioned, or None."""
    t = a.table
    logins = [c for c, ty in zip(t.columns, t.types) if ty == "str" and len(set(t.col(c))) == len(t.rows)
              and all(LOGIN.match(str(v)) for v in t.col(c))]
    groups = [c for c in t.groupable(2, 6) if t.type_of(c) == "str" and all(re.match(r"^[a-z][a-z0-9-]{1,20}$", str(v))
                                                                            for v in t.col(c))]
    return (logins[0], groups[0]) if logins and groups else None


def _accepts(a: Artifact) -> bool:
    return a.kind == "records" and a.exact and 2 <= len(a.table.rows) <= 60 and _columns(a) is not None


def seed_new_staff(ctx: StepContext) -> Artifact:
    """A table of new staff, shaped like the employees table, with one login per person."""
    rng = ctx.rng
    people = rng.sample([(f, l) for f in FIRST for l in LAST], rng.randint(6, 14))
    depts = rng.sample(DEPARTMENTS, rng.randint(2, 4))
    ids = rng.sample(range(1000, 9999), len(people))
    rows = tuple((f"E-{i}", f"{f}.{l}", rng.choice(depts), a_date(rng, date(2024, 1, 1), 200), f"{f}.{l}@{DOMAINS[0]}")
                 for i, (f, l) in zip(sorted(ids), people))
    table = Table(("emp_id", "login", "department", "start_date", "email"), ("str",) * 5, rows)
    fmt = rng.choice(["csv", "csv", "tsv", "json"])
    path = ctx.claim(f"/app/input/{rng.choice(['new_staff', 'hires', 'onboarding'])}.{fmt}")
    ctx.add_input(path, render_table(table, fmt))
    return Artifact("records", path, fmt=fmt, table=table, label="staff")


def _provision_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    login, group_col = _columns(a)
    shell = rng.choice(SHELLS)
    prefix = rng.choice(["", "u_", "staff_"])
    t = a.table
    rows = sorted((prefix + str(r[t.columns.index(login)]).replace(".", "_"), str(r[t.columns.index(group_col)]),
                   f"/home/{prefix}{str(r[t.columns.index(login)]).replace('.', '_')}") for r in t.rows)
    report = ctx.claim(f"/app/out/{stem_of(a)}_accounts.csv")
    out = Artifact("records", report, fmt="csv", table=Table(("user", "group", "home"), ("str", "str", "str"),
                                                             tuple(rows)), label=f"{a.label}_accounts")
    users = [u for u, _, _ in rows]
    name_rule = (f"`{prefix}` followed by the `{login}` value" if prefix else f"the `{login}` value") + \
        " with every `.` replaced by `_`"
    per_user = (f"import grp, pwd\nfor user, group, home in {[list(r) for r in rows]!r}:\n"
                f"    pw = pwd.getpwnam(user)\n")
    checks = [
        Check(f"Create one user per row of `{a.path}`, named {name_rule}, whose primary group is the group named by "
              f"`{group_col}` (create each such group once).",
              [("users", per_user + "    assert grp.getgrgid(pw.pw_gid).gr_name == group, (user, group)")]),
        Check(f"Give every new user the home folder `/home/<user>`, existing and owned by that user, and the login "
              f"shell `{shell}`.",
              [("homes", per_user + f"    assert pw.pw_dir == home and pw.pw_shell == {shell!r}, (user, pw)\n"
                         f"    st = os.stat(home)\n    assert stat.S_ISDIR(st.st_mode) and st.st_uid == pw.pw_uid, home")]),
        Check("Lock the password of every new user, so that nobody can log in with one.",
              [("locked", f"shadow = {{l.split(':')[0]: l.split(':')[1] for l in read_lines('/etc/shadow')}}\n"
                          f"for user in {users!r}:\n"
                          f"    assert user in shadow, user + ' has no account'\n"
                          f"    assert shadow[user].startswith(('!', '*')), user + ' can log in with a password'")]),
    ]
    checks += table_output_checks(out, a.path, "by `user` ascending", [list(r) for r in rows],
                                  f"Write `{report}` as a CSV file with a header row and one row per account you made "
                                  f"giving its `user` name, its primary `group` and its `home` folder.")
    body = f'''
import subprocess
rows = load({a.path!r})
made = []
for r in rows:
    user = {prefix!r} + str(r[{login!r}]).replace(".", "_")
    group = str(r[{group_col!r}])
    if subprocess.run(["getent", "group", group], capture_output=True).returncode != 0:
        subprocess.run(["groupadd", group], check=True)
    subprocess.run(["useradd", "-m", "-d", "/home/" + user, "-g", group, "-s", {shell!r}, user], check=True)
    subprocess.run(["usermod", "-L", user], check=True)
    made.append({{"user": user, "group": group, "home": "/home/" + user}})
write({report!r}, "csv", ["user", "group", "home"], sorted(made, key=lambda m: m["user"]))
'''
    solve = "mkdir -p /app/out\n" + py_block(a, body)
    return Fragment(rng.choice(TITLES), rng.choice(INTROS).format(d=describe(a)), checks, solve, out)


register(Recipe("accounts-provision", "system-administration", "Create users and groups from a table", _accepts, seed_new_staff,
                _provision_build, weight=2, consumes="records with logins and a group column",
                kinds=("user-accounts",)))
