"""system-administration family: run a shipped worker as a service-like daemon — its config file,
a start/stop/status control script with a pidfile, as an init script would do it. The tests run
the control script themselves, against a pristine copy of the worker.

Reads: anything (universal: the daemon watches the previous step's result).
Leaves: the same artifact, untouched (the daemon only reads it).
"""
from __future__ import annotations

from .base import Artifact, Check, Fragment, Recipe, StepContext, describe, register
from .seeds import PRODUCTS, seed_any

WORKER = '''#!/usr/bin/env python3
"""A watcher daemon: logs the size of the path it watches every few seconds.

usage: worker.py --config FILE   (an INI file with a [worker] section: watch, interval, log)
Stops cleanly on SIGTERM.
"""
import argparse
import configparser
import os
import signal
import sys
import time


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    cfg = configparser.ConfigParser()
    cfg.read(ap.parse_args().config)
    w = cfg["worker"]
    log = open(w["log"], "a", buffering=1)
    signal.signal(signal.SIGTERM, lambda *_: (log.write("stopping\\n"), sys.exit(0)))
    log.write(f"started pid={os.getpid()} watching {w['watch']}\\n")
    while True:
        log.write(f"size {size(w['watch'])}\\n")
        time.sleep(float(w["interval"]))


if __name__ == "__main__":
    main()
'''

# Test prelude for the control script: a pristine worker, and scratch for what a run leaves.
_CTL = '''def alive(pid):
    try:
        return Path(f"/proc/{{pid}}/stat").read_text().split(") ", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
with scratch({worker!r}, {run_dir!r}, {log_dir!r}):
    Path({worker!r}).write_text({source!r})
    ctl = lambda cmd: run(["bash", {ctl!r}, cmd], timeout=30, stdin=subprocess.DEVNULL)
    try:
'''
_START = '''        assert os.access({ctl!r}, os.X_OK), "the control script is not executable"
        assert ctl("start").returncode == 0
        pid = int(read_text({pidfile!r}).strip())
        assert alive(pid), "the pid in the pidfile is not running"
        # Until the forked shell has exec'd the worker, its command line is the caller's: wait a little.
        for _ in range(100):
            cmd = Path(f"/proc/{{pid}}/cmdline").read_bytes().decode(errors="replace").replace("\\0", " ")
            if {worker!r} in cmd:
                break
            time.sleep(0.05)
        assert {worker!r} in cmd, f"pid {{pid}} runs {{cmd!r}}, not the worker"
        st = ctl("status")
        assert st.returncode == 0 and st.stdout.split() == ["running", str(pid)], (st.returncode, st.stdout)
        assert ctl("start").returncode == 0 and int(read_text({pidfile!r}).strip()) == pid, "a second start restarted it"
        for _ in range(150):
            if Path({log!r}).exists() and "watching {watch}" in read_text({log!r}):
                break
            time.sleep(0.1)
        assert "watching {watch}" in read_text({log!r}), "the worker does not watch {watch}"
'''
_STOP = '''        assert ctl("start").returncode == 0
        pid = int(read_text({pidfile!r}).strip())
        assert ctl("stop").returncode == 0
        assert not alive(pid), "still running after stop"
        assert not Path({pidfile!r}).exists(), "the pidfile is left behind"
        st = ctl("status")
        assert st.returncode == 3 and st.stdout.split() == ["stopped"], (st.returncode, st.stdout)
        assert ctl("stop").returncode == 0, "stop of a stopped service must succeed"
'''
_END = '''    finally:
        with contextlib.suppress(Exception):
            os.kill(int(read_text({pidfile!r}).strip()), 9)'''


def _daemon_build(ctx: StepContext, a: Artifact) -> Fragment:
    rng = ctx.rng
    svc = rng.choice(PRODUCTS) + rng.choice(["-watch", "d", "-monitor"])
    worker = ctx.add_input(ctx.claim(f"/app/opt/{svc}/worker.py"), WORKER, executable=True)
    conf = ctx.claim(f"/app/etc/{svc}.conf")
    ctl = ctx.claim(f"/app/bin/{svc}ctl")
    run_dir = ctx.claim(f"/app/run/{svc}")
    pidfile = f"{run_dir}/{svc}.pid"
    log_dir = ctx.claim(f"/app/var/log/{svc}")
    log = f"{log_dir}/{svc}.log"
    interval = rng.choice([2, 5, 10, 30])
    fmt = dict(worker=worker, run_dir=run_dir, log=log, log_dir=log_dir, ctl=ctl, source=WORKER, pidfile=pidfile, watch=a.path)
    head = "import time\n" + _CTL.format(**fmt)
    checks = [
        Check(f"Write `{conf}` as an INI file whose section `[worker]` sets `watch` to `{a.path}`, `interval` to "
              f"{interval} and `log` to `{log}`.",
              [("config", f"cp = configparser.ConfigParser()\nassert cp.read({conf!r}), 'no config'\n"
                          f"assert dict(cp['worker']) == {{'watch': {a.path!r}, 'interval': '{interval}', 'log': {log!r}}}")]),
        Check(f"Write `{ctl}`, an executable bash script whose `start` runs `{worker} --config {conf}` in the background detached "
              f"from the caller, with its PID in `{pidfile}`, and exits 0, starting no second copy when one runs.",
              [("start", head + _START.format(**fmt) + _END.format(**fmt))]),
        Check(f"Make `{ctl} status` print `running` and the PID and exit 0 while the worker runs, and print `stopped` and "
              f"exit 3 otherwise; make `{ctl} stop` end the worker with SIGTERM, wait for it, remove `{pidfile}` and exit "
              f"0, also when it was not running.",
              [("stop", head + _STOP.format(**fmt) + _END.format(**fmt))]),
    ]
    solve = f"""mkdir -p /app/etc /app/bin {run_dir} {log_dir}
printf '[worker]\\nwatch = %s\\ninterval = %s\\nlog = %s\\n' {a.path} {interval} {log} > {conf}
cat > {ctl} <<'SH'
#!/bin/bash
pidfile={pidfile}
running() {{
  [ -f "$pidfile" ] || return 1
  local pid state
  pid=$(cat "$pidfile")
  state=$(awk '{{print $3}}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}}
case "$1" in
  start)
    running && exit 0
    mkdir -p "$(dirname "$pidfile")" {log_dir}
    setsid python3 {worker} --config {conf} </dev/null >/dev/null 2>&1 &
    echo $! > "$pidfile"
    exit 0 ;;
  stop)
    if running; then
      pid=$(cat "$pidfile")
      kill -TERM "$pid"
      for _ in $(seq 100); do running || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
    exit 0 ;;
  status)
    if running; then echo "running $(cat "$pidfile")"; exit 0; fi
    echo stopped
    exit 3 ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
SH
chmod +x {ctl}"""
    intro = rng.choice([f"`{worker}` is a small watcher; turn it into a service that watches {describe(a)}.",
                        f"Run the worker in `/app/opt/{svc}` as a managed daemon over {describe(a)}.",
                        f"The host needs `{svc}` to keep an eye on {describe(a)}, managed like any other service."])
    title = rng.choice(["Run the watcher as a service", "Manage a daemon with a pidfile", "Wrap the worker in a control script"])
    return Fragment(title, intro, checks, solve, a)


register(Recipe("daemon-control", "system-administration", "Config and control script for a daemon", lambda a: True,
                seed_any, _daemon_build, weight=2, universal=True, consumes="any",
                kinds=("running-process", "config-file", "shell-script")))
