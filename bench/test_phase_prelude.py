"""What the test phase's prelude costs before tests/test.sh (issue 14): the stray killer and
the preparing of the verifier folders as ONE exec of the toolchain's Python
(verifier_phase.stop_strays_and_prepare) vs the two execs they were
(verifier_phase.stop_strays, then verifier_phase.prepare), and vs those two execs confirmed as
they were before issue 14's speed work ("before": the pid count read from pids.current, which
counts the killed strays' zombies until PID 1 reaps them, about once a second), in turns in the
same container of the base image with the toolchain mounted, three stray `sleep`s planted
before each try.

    .venv/bin/python bench/test_phase_prelude.py [--tries 10]

Last line: RESULT merged_ms=… separate_ms=… before_ms=… saved_ms=… speedup_vs_before=… speedup_vs_separate=… bare_exec_ms=…
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.verify import verifier_phase as phase  # noqa: E402
from workbench.sandbox import toolchain  # noqa: E402
from workbench.sandbox.base_image import base_image_name  # noqa: E402
from workbench.sandbox.engine import Engine  # noqa: E402

PLANT = "for i in 1 2 3; do setsid sleep 1000 >/dev/null 2>&1 < /dev/null & done; exit 0"


def separate(box) -> int:
    killed = phase.stop_strays(box)
    phase.prepare(box)
    return killed


def before(box) -> int:
    """The two execs, each stop confirmed by the pid count that still holds zombies."""
    live = phase.pid_count
    phase.pid_count = lambda b: b.process_count()
    try:
        return separate(box)
    finally:
        phase.pid_count = live


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tries", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 try of each way")
    args = ap.parse_args()
    if args.quick:
        args.tries = 1
    engine = Engine()
    tc = toolchain.ensure(engine)
    times: dict[str, list[float]] = {"merged": [], "separate": [], "before": [], "bare": []}
    ways = {"merged": phase.stop_strays_and_prepare, "separate": separate, "before": before}
    with engine.container(base_image_name(), purpose="bench-test-phase-prelude", mounts=[tc.mount()]) as box:
        for i in range(args.tries):
            order = ("merged", "separate", "before")
            for name in order[i % 3:] + order[:i % 3]:
                box.run(PLANT, 30)
                t = time.monotonic()
                killed = ways[name](box)
                times[name].append(time.monotonic() - t)
                assert killed >= 3, (name, killed)
            t = time.monotonic()
            box.run(["true"], 10)
            times["bare"].append(time.monotonic() - t)
    ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
    print(f"load {os.getloadavg()[0]:.1f}; {args.tries} tries each, medians")
    print(f"before (two execs, zombies waited for): {ms['before']:.0f} ms")
    print(f"separate (stop_strays, prepare): {ms['separate']:.0f} ms")
    print(f"merged (stop_strays_and_prepare): {ms['merged']:.0f} ms")
    print(f"bare docker exec: {ms['bare']:.0f} ms")
    print(f"RESULT merged_ms={ms['merged']:.1f} separate_ms={ms['separate']:.1f} before_ms={ms['before']:.1f} "
          f"saved_ms={ms['before'] - ms['merged']:.1f} speedup_vs_before={ms['before'] / ms['merged']:.2f} "
          f"speedup_vs_separate={ms['separate'] / ms['merged']:.2f} bare_exec_ms={ms['bare']:.1f}")


if __name__ == "__main__":
    main()
