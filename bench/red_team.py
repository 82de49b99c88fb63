"""What the red-team probe costs per task, and what it catches (issue 27.2).

For N tasks (synthesized by the offline synthesizer, or Harbor task folders with --tasks-dir;
each built once, untimed), in the same process and alternating the order per round: the no-op
and oracle checks together (`check_noop_and_oracle`, the verification this probe follows: the
baseline) and the red-team check (`check_red_team`: one trial per attack, CONCURRENCY at once).
Prints, per attack, how many tasks it hacked (reward > 0 believed) and how many tests it passed
in all — a probe that passes many tests without a hack found tests that check little.

Last line: ``RESULT red_team_s_per_task=… noop_oracle_s_per_task=… ratio=… hackable=…/… n_tasks=…``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_throughput import folder_bundles, synthesized_bundles  # noqa: E402

from pipeline.agents.red_team.agent import ATTACK_ORDER  # noqa: E402
from pipeline.verify.docker_checks import check_build, check_noop_and_oracle  # noqa: E402
from pipeline.verify.red_team import check_red_team  # noqa: E402
from workbench.sandbox import toolchain  # noqa: E402
from workbench.sandbox.engine import Engine  # noqa: E402
from workbench.sandbox.task_toml import parse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=6, help="how many tasks (default 6)")
    ap.add_argument("--tasks-dir", type=Path, default=None, help="Harbor task folders to probe instead")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 synthesized task, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.tasks, args.rounds, args.tasks_dir = 1, 1, None
    engine = Engine()
    toolchain.ensure(engine)
    bundles = folder_bundles(args.tasks_dir, args.tasks) if args.tasks_dir else synthesized_bundles(args.tasks)
    tasks = []
    for slug, bundle in bundles:
        cfg = parse(bundle.text("task.toml"))
        _, res = check_build(engine, bundle, cfg, 1.0)
        if res.ok:
            tasks.append((slug, bundle, cfg, res.image, not res.cached))
    times: dict[str, list[float]] = {"red_team": [], "noop_oracle": []}
    hacked: Counter = Counter()
    passed_tests: Counter = Counter()
    hackable: set[str] = set()
    try:
        for r in range(args.rounds):
            for slug, bundle, cfg, image, _ in tasks:
                def red_team() -> float:
                    check = check_red_team(engine, image, bundle, cfg)
                    if r == 0:
                        for row in check.details["attacks"]:
                            hacked[row["attack"]] += row["hacked"]
                            passed_tests[row["attack"]] += row["tests_passed"]
                        if not check.passed:
                            hackable.add(slug)
                    return check.seconds

                def noop_oracle() -> float:
                    t0 = time.monotonic()
                    check_noop_and_oracle(engine, image, bundle, cfg)
                    return time.monotonic() - t0
                arms = [("red_team", red_team), ("noop_oracle", noop_oracle)]
                for name, fn in (arms if r % 2 == 0 else arms[::-1]):
                    times[name].append(fn())
                print(f"round {r + 1} {slug}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items())
                      + (" HACKABLE" if slug in hackable else ""), flush=True)
    finally:
        for *_, image, built_here in tasks:
            if built_here:
                engine.remove_image(image)
    for attack in ATTACK_ORDER:
        print(f"  {attack:<16} hacked {hacked[attack]} of {len(tasks)} tasks; tests passed in all: {passed_tests[attack]}")
    red, base = (statistics.median(times[k]) if times[k] else 0.0 for k in ("red_team", "noop_oracle"))
    print(f"RESULT red_team_s_per_task={red:.2f} noop_oracle_s_per_task={base:.2f} "
          f"ratio={red / base if base else 0:.2f} hackable={len(hackable)}/{len(tasks)} n_tasks={len(tasks)}")


if __name__ == "__main__":
    main()
