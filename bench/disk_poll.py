"""What the sandbox's disk cap costs: one poll of a container's writable-layer size (the
daemon's SizeRw, `Box.disk_used`) against a plain container list call (the baseline, the
same request without size=True), measured in the same run on one container whose layer
grows from empty to 2,000 and 20,000 files; and how long a command writing at full speed
runs past a 200 MB cap before it is stopped.

The daemon walks the layer's files for SizeRw, so a poll costs more the more files a
solution writes; `Box._watch_disk` waits 4x the last poll's cost between polls (at least
0.25 s), so polling takes at most a fifth of one CPU whatever the layer holds.

Last line: ``RESULT poll_ms_empty=… poll_ms_2k_files=… poll_ms_20k_files=… list_ms=…
ratio_20k_vs_list=… stop_after_cap_s=…``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.sandbox.base_image import base_image_name  # noqa: E402
from workbench.sandbox.engine import Engine, Limits  # noqa: E402

ROUNDS = 15


def _median_ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 timed polls per figure instead of 15")
    rounds = 3 if ap.parse_args().quick else ROUNDS
    engine = Engine()
    figures: dict[str, float] = {}
    with engine.container(base_image_name(), Limits(disk_mb=4096)) as box:
        plain = lambda: engine.client.api.containers(all=True, filters={"id": box.container.id})  # noqa: E731
        plain(), box.disk_used()   # warm the connection pool before timing either
        figures["list_ms"] = _median_ms(plain, rounds)
        figures["poll_ms_empty"] = _median_ms(box.disk_used, rounds)
        box.run("mkdir -p /tmp/many && cd /tmp/many && for i in $(seq 2000); do echo $i > f$i; done", 300)
        figures["poll_ms_2k_files"] = _median_ms(box.disk_used, rounds)
        box.run("cd /tmp/many && for i in $(seq 2001 20000); do echo $i > f$i; done", 600)
        figures["poll_ms_20k_files"] = _median_ms(box.disk_used, rounds)
    figures["ratio_20k_vs_list"] = figures["poll_ms_20k_files"] / max(figures["list_ms"], 1e-6)
    with engine.container(base_image_name(), Limits(disk_mb=200)) as box:
        # 250 MB files as fast as the disk takes them; time from start to the stop.
        res = box.run("for i in $(seq 12); do head -c 250M /dev/zero > /tmp/f$i; done", 300)
        figures["stop_after_cap_s"] = res.seconds
        assert res.disk_full, "the disk cap did not stop the writer"
    for k, v in figures.items():
        print(f"{k:>20}: {v:8.2f}")
    print("RESULT " + " ".join(f"{k}={v:.2f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
