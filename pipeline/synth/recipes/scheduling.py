"""scheduling-automation families: a refresh script plus its crontab entry; next run times of a
crontab."""
from __future__ import annotations

from datetime import datetime, timedelta

from .base import Artifact, Check, Fragment, Recipe, StepContext, Table, describe, register, stem_of
from .common import table_output_checks
from .formats import render_lines
from .seeds import seed_any

# (words, a canonical expression, expanded sets minute/hour/dom/month/dow)
SCHEDULES = [
    ("every day at 02:30", "30 2 * * *"),
    ("every 15 minutes", "*/15 * * * *"),
    ("at 23:45 on every weekday (Monday to Friday)", "45 23 * * 1-5"),
    ("at 06:00 on the first day of every month", "0 6 1 * *"),
    ("every Sunday at 04:10", "10 4 * * 0"),
    ("every two hours on the hour", "0 */2 * * *"),
    ("at minute 5 past every hour from 09:00 to 17:00 on weekdays", "5 9-17 * * 1-5"),
]
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def expand(field: str, lo: int, hi: int) -> list[int]:
    out = set()
    for part in field.split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/")
            step = int(s)
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = (int(x) for x in part.split("-"))
        else:
            a = b = int(part)
            if step != 1:
                b = hi
        out.update(range(a, b + 1, step))
    return sorted(out)


def cron_sets(expr: str) -> list[list[int]]:
    sets = [expand(f, lo, hi) for f, (lo, hi) in zip(expr.split(), RANGES)]
    sets[4] = sorted({0 if d == 7 else d for d in sets[4]})
    return sets


def _cron_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    stem = stem_of(a)
    words, expr = rng.choice(SCHEDULES)
    system = rng.random() < 0.4
    script = ctx.claim(f"/app/bin/refresh_{stem}.sh")
    cron = ctx.claim(f"/app/cron/{stem}" if system else f"/app/cron/{stem}.crontab")
    latest = ctx.claim(f"/app/out/latest/{a.basename}")
    log = ctx.claim(f"/app/logs/refresh_{stem}.log")
    cronlog = ctx.claim(f"/app/logs/cron_{stem}.log")
    fmt_words = ("in the `/etc/cron.d` format (five time fields, the user `root`, then the command)" if system
                 else "in user crontab format (five time fields, then the command)")
    sets = cron_sets(expr)
    line_re = r"^\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+" + (r"root\s+" if system else "") + r"(.+)$"
    parse = (f"jobs = [l for l in read_lines({cron!r}) if not l.lstrip().startswith('#') and not re.match(r'^[A-Za-z_]+=', l.strip())]\n"
             f"assert len(jobs) == 1, jobs\nm = re.match({line_re!r}, jobs[0].strip())\nassert m, jobs[0]\n"
             f"fields, cmd = jobs[0].split()[:5], m.group(1)")
    checks = [
        Check(f"Write an executable bash script `{script}` that copies `{a.path}` to `{latest}` (replacing any older copy) "
              f"and then appends the line `refreshed {a.basename}` to `{log}`.",
              # The extra run happens in scratch: what it writes is undone, so the next test sees
              # only what the solution's own run left (issue 10.14).
              [("script", f"assert mode_of({script!r}) & 0o111\nassert read_text({script!r}).startswith('#!')\n"
                          f"with scratch({latest!r}, {log!r}):\n"
                          f"    before = len(read_lines({log!r})) if os.path.exists({log!r}) else 0\n"
                          f"    p = run([{script!r}])\n    assert p.returncode == 0, p.stderr\n"
                          f"    assert same_files({latest!r}, {a.path!r})\n    lines = read_lines({log!r})\n"
                          f"    assert len(lines) == before + 1 and lines[-1] == {'refreshed ' + a.basename!r}")]),
        Check(f"Run the script once yourself so that `{latest}` and `{log}` exist.",
              [("ran", f"assert os.path.exists({latest!r})\nassert {'refreshed ' + a.basename!r} in read_lines({log!r})")]),
        Check(f"Write `{cron}` {fmt_words} with exactly one job that runs `{script}` {words}.",
              [("schedule", f"{parse}\nranges = {RANGES!r}\nsets = [cron_field(f, lo, hi) for f, (lo, hi) in zip(fields, ranges)]\n"
                            f"sets[4] = sorted({{0 if d == 7 else d for d in sets[4]}})\nassert sets == {sets!r}, sets")]),
        Check(f"Make the job append both the standard output and the standard error of the script to `{cronlog}`.",
              [("command", f"{parse}\nassert {script!r} in cmd\nassert re.search(r'>>\\s*' + re.escape({cronlog!r}), cmd), cmd\n"
                           f"assert '2>&1' in cmd or '&>>' in cmd, cmd")]),
    ]
    copy = f"rm -rf {latest}\ncp -r {a.path} {latest}"
    solve = f"""mkdir -p /app/bin /app/cron /app/logs $(dirname {latest})
cat > {script} <<'SH'
#!/bin/bash
set -euo pipefail
mkdir -p $(dirname {latest}) $(dirname {log})
{copy}
echo 'refreshed {a.basename}' >> {log}
SH
chmod +x {script}
printf '%s\\n' '# refresh {stem}' '{expr}{" root" if system else ""} {script} >> {cronlog} 2>&1' > {cron}
bash {script}"""
    intro = f"Keep a fresh copy of {describe(a)} available by refreshing it on a schedule."
    return Fragment("Schedule a refresh job", intro, checks, solve, a.moved(latest))


register(Recipe("cron-refresh-job", "scheduling-automation", "Script and schedule a refresh job", lambda a: True,
                seed_any, _cron_build, weight=2, universal=True, consumes="any", kinds=("cron-schedule", "shell-script")))


# --- cron-next-runs ----------------------------------------------------------------------------

POOL = ["*/20 * * * *", "0 3 * * *", "30 */6 * * *", "15 8-18/2 * * 1-5", "0 0 1 * *", "45 22 * * 0",
        "0,30 12 * * *", "10 4 * * 6", "5 0 15 * *", "0 9 * * 1,3,5", "*/45 7-9 * * *"]
JOBS = ["rotate-logs", "backup-db", "sync-mirror", "send-digest", "vacuum", "renew-certs", "purge-cache",
        "export-metrics", "reindex", "prune-images"]


def seed_crontab(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    n = rng.randint(4, 6)
    lines = ["# m h dom mon dow command", "MAILTO=ops@example.com"]
    for expr, job in zip(rng.sample(POOL, n), rng.sample(JOBS, n)):
        if rng.random() < 0.3:
            lines.append(f"# {job.replace('-', ' ')}")
        lines.append(f"{expr} /usr/local/bin/{job}.sh")
    path = ctx.claim(f"/app/input/{rng.choice(['jobs', 'root', 'batch', 'ops'])}.crontab")
    ctx.add_input(path, render_lines(lines))
    return Artifact("lines", path, fmt="txt", lines=tuple(lines), flavor="crontab", label="jobs")


def runs(expr: str, start: datetime, end: datetime):
    m, h, dom, mon, dow = cron_sets(expr)
    t = start + timedelta(minutes=1)
    while t <= end:
        # Neither day field in the pool is restricted together with the other, so AND is exact.
        if t.minute in m and t.hour in h and t.day in dom and t.month in mon and (t.isoweekday() % 7) in dow:
            yield t
        t += timedelta(minutes=1)


def _next_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    now = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59))
    jobs = [(l.split()[5].rsplit("/", 1)[-1].removesuffix(".sh"), " ".join(l.split()[:5]))
            for l in a.lines if l.strip() and not l.startswith("#") and "=" not in l.split()[0]]
    rows = []
    for job, expr in jobs:
        nxt = next(runs(expr, now, now + timedelta(days=62)))
        day = sum(1 for _ in runs(expr, now, now + timedelta(hours=24)))
        rows.append((job, nxt.strftime("%Y-%m-%d %H:%M"), day))
    rows.sort(key=lambda r: (r[1], r[0]))
    path = ctx.claim(f"/app/out/{stem_of(a)}_next_runs.csv")
    out = Artifact("records", path, fmt="csv", table=Table(("job", "next_run", "runs_next_24h"), ("str", "str", "int"),
                                                           tuple(rows)), label=f"{a.label}_next_runs")
    stamp = now.strftime("%Y-%m-%d %H:%M")
    checks = table_output_checks(out, a.path, "by `next_run` ascending, breaking ties by `job` ascending",
                                 [list(r) for r in rows],
                                 f"Write `{path}` as a CSV file with a header row and one row per job in `{a.path}`, "
                                 f"naming the job by its script's file name without `.sh` as `job`, giving as `next_run` "
                                 f"the first time strictly after {stamp} it runs (written `YYYY-MM-DD HH:MM`) and as "
                                 f"`runs_next_24h` how many times it runs after {stamp} up to and including the same "
                                 f"time one day later.")
    body = f'''
from datetime import datetime, timedelta
R = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
def expand(f, lo, hi):
    out = set()
    for part in f.split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/"); step = int(s)
        if part == "*": a, b = lo, hi
        elif "-" in part: a, b = map(int, part.split("-"))
        else:
            a = b = int(part)
            if step != 1: b = hi
        out.update(range(a, b + 1, step))
    return out
def matches(sets, t):
    m, h, dom, mon, dow = sets
    return t.minute in m and t.hour in h and t.day in dom and t.month in mon and (t.isoweekday() % 7) in {{d % 7 for d in dow}}
now = datetime({now.year}, {now.month}, {now.day}, {now.hour}, {now.minute})
rows = []
for line in open({a.path!r}):
    p = line.split()
    if not p or p[0].startswith("#") or "=" in p[0]:
        continue
    sets = [expand(f, lo, hi) for f, (lo, hi) in zip(p[:5], R)]
    job = p[5].rsplit("/", 1)[-1][:-3]
    t, nxt, n = now, None, 0
    while True:
        t += timedelta(minutes=1)
        if matches(sets, t):
            nxt = nxt or t
            if t <= now + timedelta(hours=24):
                n += 1
        if nxt and t > now + timedelta(hours=24):
            break
    rows.append({{"job": job, "next_run": nxt.strftime("%Y-%m-%d %H:%M"), "runs_next_24h": n}})
rows.sort(key=lambda r: (r["next_run"], r["job"]))
write({path!r}, "csv", ["job", "next_run", "runs_next_24h"], rows)
'''
    from .common import py_block
    solve = "mkdir -p /app/out\n" + py_block(None, body)
    intro = f"{describe(a)[0].upper()}{describe(a)[1:]} schedules the maintenance jobs of a host whose clock runs in UTC."
    return Fragment("Predict the next cron runs", intro, checks, solve, out)


register(Recipe("cron-next-runs", "scheduling-automation", "Compute next cron run times",
                lambda a: a.kind == "lines" and a.flavor == "crontab", seed_crontab, _next_build, weight=2,
                consumes="crontab", kinds=("cron-schedule",)))


# --- systemd-timer-lock ------------------------------------------------------------------------

CALENDARS = [("every day at 02:30", "*-*-* 02:30:00"), ("every Monday at 06:00", "Mon *-*-* 06:00:00"),
             ("on weekdays at 18:15", "Mon..Fri *-*-* 18:15:00"), ("on the first day of every month at 00:05",
                                                                      "*-*-01 00:05:00"),
             ("every hour at minute 20", "*-*-* *:20:00")]

# Test source: the solution's script runs in scratch (its copy, log and lock are put back as
# they were afterwards, issue 10.14), starting with no copy, so the run must make it itself.
_SCRATCH = '''with scratch({dest!r}, {log!r}, {lock!r}):
    dest = Path({dest!r})
    if dest.is_dir():
        shutil.rmtree(dest)
    elif dest.exists():
        dest.unlink()
{body}'''


def _timer_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    stem = stem_of(a).replace("_", "-")
    unit = f"snapshot-{stem}"
    words, cal = rng.choice(CALENDARS)
    script = ctx.claim(f"/app/bin/{unit}.sh")
    lock = ctx.claim(f"/app/run/{unit}.lock")
    dest = ctx.claim(f"/app/snapshots/{a.basename}")
    log = ctx.claim(f"/app/logs/{unit}.log")
    service, timer = ctx.claim(f"/app/systemd/{unit}.service"), ctx.claim(f"/app/systemd/{unit}.timer")
    ini = ("def unit(p):\n    c = configparser.ConfigParser(strict=False, interpolation=None)\n"
           "    c.optionxform = str\n    c.read(p)\n    return c\n")
    run_body = (f"    before = len(read_lines({log!r})) if os.path.exists({log!r}) else 0\n"
                f"    p = run([{script!r}], timeout=60)\n    assert p.returncode == 0, p.stderr\n"
                f"    assert same_files(dest, {a.path!r})\n    lines = read_lines({log!r})\n"
                f"    assert len(lines) == before + 1 and lines[-1] == {'snapshot ' + a.basename!r}, lines")
    lock_body = (f"    import fcntl\n    os.makedirs(os.path.dirname({lock!r}), exist_ok=True)\n"
                 f"    with open({lock!r}, 'a') as fh:\n        fcntl.flock(fh, fcntl.LOCK_EX)\n"
                 f"        p = run([{script!r}], timeout=60)\n"
                 f"    assert p.returncode == 75, (p.returncode, p.stderr)\n    assert not dest.exists()")
    checks = [
        Check(f"Write an executable bash script `{script}` that copies `{a.path}` to `{dest}` (replacing any older "
              f"copy) and then appends the line `snapshot {a.basename}` to `{log}`.",
              [("script", f"assert mode_of({script!r}) & 0o111\nassert read_text({script!r}).startswith('#!')\n"
                          + _SCRATCH.format(dest=dest, log=log, lock=lock, body=run_body))]),
        Check(f"Make the script hold an exclusive `flock` lock on `{lock}` while it works, and exit at once with status "
              f"75, copying nothing, when another process already holds that lock.",
              [("lock", _SCRATCH.format(dest=dest, log=log, lock=lock, body=lock_body))]),
        Check(f"Run the script once yourself so that `{dest}` exists.",
              [("ran", f"assert same_files({dest!r}, {a.path!r})")]),
        Check(f"Write the systemd unit `{service}` with `Type=oneshot` and `ExecStart={script}` in its `[Service]` "
              f"section.",
              [("service", f"{ini}c = unit({service!r})\nassert c.get('Service', 'Type') == 'oneshot'\n"
                           f"assert c.get('Service', 'ExecStart').strip() == {script!r}")]),
        Check(f"Write the systemd unit `{timer}` that starts `{unit}.service` {words}: its `[Timer]` section sets "
              f"`OnCalendar={cal}`, `Persistent=true` and `Unit={unit}.service`, and its `[Install]` section sets "
              f"`WantedBy=timers.target`.",
              [("timer", f"{ini}c = unit({timer!r})\nassert c.get('Timer', 'OnCalendar').strip() == {cal!r}\n"
                         f"assert c.get('Timer', 'Persistent').strip() == 'true'\n"
                         f"assert c.get('Timer', 'Unit').strip() == {unit + '.service'!r}\n"
                         f"assert c.get('Install', 'WantedBy').strip() == 'timers.target'")]),
    ]
    solve = f"""mkdir -p /app/bin /app/run /app/logs /app/systemd $(dirname {dest})
cat > {script} <<'SH'
#!/bin/bash
set -euo pipefail
mkdir -p $(dirname {lock}) $(dirname {dest}) $(dirname {log})
exec 9>>{lock}
flock -n 9 || exit 75
rm -rf {dest}
cp -r {a.path} {dest}
echo 'snapshot {a.basename}' >> {log}
SH
chmod +x {script}
cat > {service} <<'UNIT'
[Unit]
Description = Snapshot {a.basename}

[Service]
Type = oneshot
ExecStart = {script}
UNIT
cat > {timer} <<'UNIT'
[Unit]
Description = Snapshot timer for {unit}

[Timer]
OnCalendar = {cal}
Persistent = true
Unit = {unit}.service

[Install]
WantedBy = timers.target
UNIT
bash {script}"""
    intro = (f"Take regular snapshots of {describe(a)} with a systemd timer; runs must never overlap, so the job "
             f"guards itself with a lock file.")
    return Fragment("Snapshot it with a locked systemd timer", intro, checks, solve, a.moved(dest))


register(Recipe("systemd-timer-lock", "scheduling-automation", "Locked job with a systemd timer", lambda a: True,
                seed_any, _timer_build, weight=2, universal=True, consumes="any", kinds=("systemd-unit", "shell-script")))
