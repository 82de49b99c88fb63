"""What the sealed test phase costs per task (issue 11.1-11.3, 10.14).

For each of N synthesized tasks (built once, untimed), the oracle check runs twice in the
same process, alternating: sealed (`pipeline.verify.docker_checks.check_oracle`: strays
stopped twice, verifier folders emptied, test.sh on the read-only toolchain, the tests'
traces compared through two snapshots) and plain, the flow before (solution, tests copied
in, `bash /tests/test.sh` on the container's own bash, verifier folder read). The toolchain
volume exists before timing (it is built once per base image; the first build's time is
printed when this run makes it).

Last line: ``RESULT sealed_s_per_task=… plain_s_per_task=… overhead_s_per_task=… overhead_ratio=… n_tasks=…``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_throughput import synthesized_bundles  # noqa: E402

from pipeline.verify.docker_checks import check_build, check_oracle, limits_for  # noqa: E402
from workbench.sandbox import toolchain  # noqa: E402
from workbench.sandbox.engine import Engine  # noqa: E402
from workbench.sandbox.task_toml import parse  # noqa: E402


def plain_oracle(engine: Engine, image: str, bundle, cfg) -> float:
    t0 = time.monotonic()
    with engine.container(image, limits_for(cfg), purpose="bench-plain") as box:
        box.put(bundle.under("solution"), "/solution")
        box.run("bash /solution/solve.sh", cfg.agent_timeout_sec)
        box.put(bundle.under("tests"), "/tests")
        box.run("mkdir -p /logs/verifier && bash /tests/test.sh", cfg.verifier_timeout_sec)
        box.read_files("/logs/verifier")
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    engine = Engine()
    t0 = time.monotonic()
    toolchain.ensure(engine)
    print(f"toolchain ready in {time.monotonic() - t0:.1f} s (built once per base image, then reused)", flush=True)
    tasks = []
    for slug, bundle in synthesized_bundles(args.tasks):
        cfg = parse(bundle.text("task.toml"))
        _, res = check_build(engine, bundle, cfg, 1.0)
        if res.ok:
            tasks.append((slug, bundle, cfg, res.image, not res.cached))
    sealed, plain = [], []
    try:
        for r in range(args.rounds):
            for slug, bundle, cfg, image, _ in tasks:
                # Alternate the order so machine load falls on both alike.
                pair = [("sealed", lambda: check_oracle(engine, image, bundle, cfg).seconds),
                        ("plain", lambda: plain_oracle(engine, image, bundle, cfg))]
                for name, fn in (pair if r % 2 == 0 else pair[::-1]):
                    (sealed if name == "sealed" else plain).append(fn())
                print(f"round {r + 1} {slug}: sealed {sealed[-1]:.2f} s, plain {plain[-1]:.2f} s", flush=True)
    finally:
        for *_, image, built_here in tasks:
            if built_here:     # images another run made stay
                engine.remove_image(image)
    s, p = statistics.median(sealed), statistics.median(plain)
    print(f"RESULT sealed_s_per_task={s:.2f} plain_s_per_task={p:.2f} overhead_s_per_task={s - p:.2f} "
          f"overhead_ratio={s / p:.2f} n_tasks={len(tasks)}")


if __name__ == "__main__":
    main()
