"""What one Terminus-2 turn costs in our tmux Terminal (issue 14: harness overhead ≤ 50 ms per
turn), next to two baselines measured in the same run and the same container:
- a bare `docker exec` of `true` through Box.run (the floor any exec-based terminal pays), and
  our Terminal with one exec per look instead of its channel (Terminal.open(channel=False));
- Harbor's way of driving tmux (terminus_2/tmux_session.py): one exec for send-keys, a sleep
  of the duration the model asked for, then one exec capturing the whole history and one the
  visible screen, each over the same Box.run.
A turn = type one command, wait the duration the model gave (0.1 s for `echo`, 1.0 s for a
`sleep 0.3`, as Terminus-2's prompt advises), read the new output.

    .venv/bin/python bench/terminal_turn.py [--turns 20]

Last line: RESULT overhead_ms_per_turn=… execs_per_turn=… bare_exec_ms=… speedup_vs_harbor_way=…
"""
from __future__ import annotations

import argparse
import statistics
import time

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine, Limits
from workbench.sandbox.terminal import Terminal

COMMANDS = [("echo turn-{i}\n", 0.1), ("sleep 0.3; echo slept-{i}\n", 1.0)]


def ours(box, turns: int, channel: bool = True) -> dict:
    t0 = time.monotonic()
    term = Terminal.open(box, channel=channel)
    opened_s = time.monotonic() - t0
    term.read_new()
    walls, overheads, execs = [], [], []
    for i in range(turns):
        keys, duration = COMMANDS[i % len(COMMANDS)]
        e0, o0, t0 = term.stats.execs, term.stats.overhead_s, time.monotonic()
        term.send_keys(keys.format(i=i))
        term.wait(duration)
        out = term.read_new()
        assert f"-{i}" in out, out
        walls.append(time.monotonic() - t0)
        overheads.append(term.stats.overhead_s - o0)
        execs.append(term.stats.execs - e0)
    t0 = time.monotonic()
    term.close()
    return {"wall_s": statistics.median(walls), "overhead_s": statistics.median(overheads),
            "execs": statistics.mean(execs), "total_s": sum(walls),
            "open_close_s": opened_s + time.monotonic() - t0, "open_close_execs": term.stats.execs}


def harbor_way(box, turns: int) -> dict:
    sock = "/tmp/bench-harbor.sock"
    tmux = ["tmux", "-S", sock]
    box.run([*tmux, "new-session", "-d", "-s", "h", "-x", "160", "-y", "40"], 30)
    box.run([*tmux, "set-option", "-g", "history-limit", "10000000"], 30)
    walls, overheads = [], []
    for i in range(turns):
        keys, duration = COMMANDS[i % len(COMMANDS)]
        t0 = time.monotonic()
        box.run([*tmux, "send-keys", "-t", "h", keys.format(i=i)], 30)   # non-blocking: sleep the duration
        time.sleep(duration)
        full = box.run([*tmux, "capture-pane", "-p", "-S", "-", "-t", "h"], 30).output
        box.run([*tmux, "capture-pane", "-p", "-t", "h"], 30)
        wall = time.monotonic() - t0
        walls.append(wall)
        overheads.append(wall - duration)
        assert f"-{i}" in full or i % 2, full[-300:]      # a 0.3 s sleep may not have printed yet at 1 s under load
    return {"wall_s": statistics.median(walls), "overhead_s": statistics.median(overheads), "execs": 3.0,
            "total_s": sum(walls)}


def bare_exec(box, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        box.run(["true"], 30)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 turns")
    args = ap.parse_args()
    if args.quick:
        args.turns = 2
    engine = Engine()
    with engine.container(base_image_name(), Limits()) as box:
        floor = bare_exec(box, args.turns)
        us = ours(box, args.turns)
        by_exec = ours(box, args.turns, channel=False)
        them = harbor_way(box, args.turns)
        floor = (floor + bare_exec(box, args.turns)) / 2     # before and after: the machine's load drifts
    print(f"bare exec (Box.run true): {floor * 1000:.1f} ms")
    for name, r in (("ours", us), ("ours by exec", by_exec), ("harbor's way", them)):
        print(f"{name:13s} turn {r['wall_s'] * 1000:7.1f} ms  overhead {r['overhead_s'] * 1000:6.1f} ms  "
              f"execs/turn {r['execs']:.2f}  {args.turns} turns {r['total_s']:.2f} s")
    for name, r in (("ours", us), ("ours by exec", by_exec)):
        print(f"{name:13s} open + close {r['open_close_s'] * 1000:.0f} ms, {r['open_close_execs']} docker execs in all")
    print(f"RESULT overhead_ms_per_turn={us['overhead_s'] * 1000:.1f} execs_per_turn={us['execs']:.2f} "
          f"overhead_ms_per_turn_by_exec={by_exec['overhead_s'] * 1000:.1f} "
          f"bare_exec_ms={floor * 1000:.1f} overhead_vs_bare_exec={us['overhead_s'] / floor:.2f} "
          f"harbor_way_overhead_ms={them['overhead_s'] * 1000:.1f} "
          f"speedup_vs_harbor_way={them['total_s'] / us['total_s']:.2f}")


if __name__ == "__main__":
    main()
