"""What the sealed test phase costs per task (issue 11.1-11.3, 10.14, 27.1).

For each of N synthesized tasks (built once, untimed), the oracle check runs three times in the
same process, alternating: sealed (`pipeline.verify.docker_checks.check_oracle`: strays
stopped twice, verifier folders emptied, test.sh on the read-only toolchain, the tests'
traces compared through two snapshots; the tests' programs the image's copies in the
toolchain), sealed on the container's programs (the same, with the PATH before issue 27.1:
what running the image's copies adds) and plain, the flow before (solution, tests copied
in, `bash /tests/test.sh` on the container's own bash, verifier folder read). The toolchain
volume exists before timing (it is built once per base image; the first build's time is
printed when this run makes it).

Last line: ``RESULT sealed_s_per_task=… plain_s_per_task=… overhead_s_per_task=… overhead_ratio=…
pristine_programs_s_per_task=… n_tasks=…``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import contextmanager
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


@contextmanager
def container_programs():
    """The tests' PATH and git variables as before issue 27.1: the container's own programs."""
    saved = toolchain.PATH, toolchain.PRISTINE_ENV
    toolchain.PATH = f"{toolchain.ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    toolchain.PRISTINE_ENV = {}
    try:
        yield
    finally:
        toolchain.PATH, toolchain.PRISTINE_ENV = saved


def sealed_on_container_programs(engine: Engine, image: str, bundle, cfg) -> float:
    with container_programs():
        return check_oracle(engine, image, bundle, cfg).seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 synthesized task, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.tasks, args.rounds = 1, 1
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
    times: dict[str, list[float]] = {"sealed": [], "container": [], "plain": []}
    try:
        for r in range(args.rounds):
            for slug, bundle, cfg, image, _ in tasks:
                # Alternate the order so machine load falls on both alike.
                arms = [("sealed", lambda: check_oracle(engine, image, bundle, cfg).seconds),
                        ("container", lambda: sealed_on_container_programs(engine, image, bundle, cfg)),
                        ("plain", lambda: plain_oracle(engine, image, bundle, cfg))]
                for name, fn in (arms if r % 2 == 0 else arms[::-1]):
                    times[name].append(fn())
                print(f"round {r + 1} {slug}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    finally:
        for *_, image, built_here in tasks:
            if built_here:     # images another run made stay
                engine.remove_image(image)
    s, c, p = (statistics.median(times[k]) for k in ("sealed", "container", "plain"))
    print(f"RESULT sealed_s_per_task={s:.2f} plain_s_per_task={p:.2f} overhead_s_per_task={s - p:.2f} "
          f"overhead_ratio={s / p:.2f} pristine_programs_s_per_task={s - c:.2f} n_tasks={len(tasks)}")


if __name__ == "__main__":
    main()
