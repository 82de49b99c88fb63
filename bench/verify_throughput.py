"""Verification throughput: our Docker verifier against Harbor's trials on the same tasks.

Takes 10 task folders in the Harbor layout (`--tasks DIR`; by default 10 tasks are made
with the offline synthesizer, `pipeline.synth.compose.synthesize_task`, along fixed paths
over the category taxonomy) and measures, at the same concurrency c (default 4):

- ours: `pipeline.verify.run.verify_bundle` (build + no-op + oracle + static checks) for
  every task, through a ThreadPoolExecutor of c workers;
- Harbor: one `harbor run` job with the oracle and the nop agent over the same folders,
  `n_concurrent_trials = c` (2 trials per task), via `pipeline.export.harbor_runner`.

Seconds per task is each side's wall-clock time over the number of tasks (Harbor's
includes starting its CLI, ~5 s, which is part of using it; its mean trial time is printed
too). After an untimed warm-up (one task through our verifier,
`harbor --version`), both sides start cold: before each measured run the images either side built for
these tasks (`workbench/env:<hash>` and the untagged layers Harbor's builds leave) are
removed, so both build every environment from the base image. Then ours alone at
concurrency 1, 2, 4 gives the scaling (tasks/min).

Last line:
``RESULT speedup_vs_harbor=… tasks_per_min_c4=… ours_s_per_task=… harbor_s_per_task=…
harbor_trial_s=… tasks_per_min_c1=… tasks_per_min_c2=… scaling_c4_vs_c1=… ours_accepted=…
harbor_ok=… agree=… n_tasks=… concurrency=…``
speedup_vs_harbor = harbor_s_per_task / ours_s_per_task at concurrency c; ours_accepted:
tasks whose build, no-op and oracle checks passed; harbor_ok: tasks with oracle 1.0 and
nop 0.0; agree: tasks where both sides say the same.
`--harbor-only` measures Harbor alone (and prints only its figures).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.export.harbor_runner import (  # noqa: E402
    _image_ids,
    ensure_harbor,
    harbor_bin,
    harbor_env,
    remove_new_dangling_images,
    run_harbor_job,
    task_folders,
)
from workbench.sandbox.base_image import base_image_name  # noqa: E402
from workbench.sandbox.bundle import TaskBundle, read_bundle, write_bundle  # noqa: E402

CORE_CHECKS = ("build", "noop", "oracle")


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------- tasks
def synthesized_bundles(n: int, seed: int = 0) -> list[tuple[str, TaskBundle]]:
    """n tasks from the offline synthesizer along fixed two-step paths over the categories."""
    from pipeline.synth.compose import PathStep, synthesize_task
    from pipeline.taxonomy import CATEGORIES
    cats = list(CATEGORIES)
    out: list[tuple[str, TaskBundle]] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n and i < 20 * n:
        a, b = cats[i % len(cats)], cats[(i * 5 + 3) % len(cats)]
        steps = [PathStep(f"bench-skill-{i}a", f"{a} step", a, f"A {a} skill.", f"s{i}", f"m{i}"),
                 PathStep(f"bench-skill-{i}b", f"{b} step", b, f"A {b} skill.", f"m{i}", f"e{i}")]
        task = synthesize_task(steps, seed + i, base_image_name(), path_id=f"bench-{i}")
        slug = task.name.split("/", 1)[1]
        if slug not in seen:
            seen.add(slug)
            out.append((slug, task.bundle))
        i += 1
    return out


def folder_bundles(tasks_dir: Path, n: int) -> list[tuple[str, TaskBundle]]:
    folders = task_folders(tasks_dir)[:n]
    if not folders:
        raise SystemExit(f"no task folders (with task.toml) in {tasks_dir}")
    return [(f.name, read_bundle(f)) for f in folders]


# ---------------------------------------------------------------- cold start
def make_cold(engine, bundles: list[tuple[str, TaskBundle]], baseline: set[str]) -> None:
    """Remove the images either side built for these tasks (not the base image)."""
    if engine is not None:
        from pipeline.verify.run import image_for
        for _, b in bundles:
            engine.remove_image(image_for(b))
    remove_new_dangling_images(baseline)


# ---------------------------------------------------------------- the two sides
def run_ours(bundles: list[tuple[str, TaskBundle]], concurrency: int, engine) -> tuple[float, dict[str, bool]]:
    from pipeline.verify.run import verify_bundle

    def one(item: tuple[str, TaskBundle]) -> tuple[str, bool]:
        slug, bundle = item
        checks = {c.name: c for c in verify_bundle(bundle, engine=engine)}
        ok = all(name in checks and checks[name].passed for name in CORE_CHECKS)
        if not ok:
            bad = next((checks[n] for n in CORE_CHECKS if n in checks and not checks[n].passed), None)
            log(f"  ours: {slug} not accepted: {bad.name + ': ' + bad.reason[:200] if bad else 'checks missing'}")
        return slug, ok

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        verdicts = dict(pool.map(one, bundles))
    return time.monotonic() - t0, verdicts


def run_harbor_side(dataset: Path, concurrency: int, jobs_dir: Path) -> tuple[float, dict[str, bool], float]:
    job = run_harbor_job(dataset, ["oracle", "nop"], concurrency, jobs_dir, timeout_s=1800)
    oracle, nop = job.rewards("oracle"), job.rewards("nop")
    for task, err in sorted(job.errors().items()):
        log(f"  harbor: {task}: {err.splitlines()[0][:200]}")
    verdicts = {t: oracle.get(t) == 1.0 and nop.get(t) == 0.0 for t in set(oracle) | set(nop)}
    trials = job.trial_seconds()
    return job.wall_s, verdicts, (sum(trials) / len(trials) if trials else float("nan"))


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, help="a folder of Harbor task folders (default: synthesize them)")
    ap.add_argument("--n", type=int, default=10, help="number of tasks (default 10)")
    ap.add_argument("--concurrency", "-c", type=int, default=4, help="concurrency of the comparison (default 4)")
    ap.add_argument("--scaling", default="1,2,4", help="our concurrency levels for tasks/min (default 1,2,4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--harbor-only", action="store_true", help="measure Harbor alone")
    ap.add_argument("--keep", type=Path, help="keep the dataset and Harbor's job folders here")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 synthesized tasks at concurrency 2, no scaling")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.concurrency, args.scaling = 2, 2, "2"

    ensure_harbor()
    import docker

    from workbench.sandbox.base_image import bootstrap
    bootstrap(docker.from_env(), log=log)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="verify-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.tasks:
            bundles = folder_bundles(args.tasks, args.n)
        else:
            log(f"synthesizing {args.n} tasks offline")
            bundles = synthesized_bundles(args.n, args.seed)
        dataset = work / "dataset"
        shutil.rmtree(dataset, ignore_errors=True)
        for slug, bundle in bundles:
            write_bundle(bundle, dataset / slug)
        n = len(bundles)
        c = args.concurrency
        log(f"{n} tasks in {dataset}; concurrency {c}")

        engine = None
        if not args.harbor_only:
            from workbench.sandbox.engine import Engine
            engine = Engine()
        baseline = _image_ids()
        figures: dict[str, object] = {}

        # Warm-ups (untimed): imports and the Docker connection on our side, the page cache
        # for Harbor's CLI (its Python start-up is still counted: every job pays it).
        if engine is not None:
            run_ours(bundles[:1], 1, engine)
        subprocess.run([str(harbor_bin()), "--version"], capture_output=True, env=harbor_env(), timeout=120)

        ours_wall = None
        ours_verdicts: dict[str, bool] = {}
        if engine is not None:
            make_cold(engine, bundles, baseline)
            ours_wall, ours_verdicts = run_ours(bundles, c, engine)
            log(f"ours   c={c}: {ours_wall:.1f} s, {ours_wall / n:.2f} s/task, "
                f"{sum(ours_verdicts.values())}/{n} accepted")

        make_cold(engine, bundles, baseline)
        h_wall, h_verdicts, h_trial = run_harbor_side(dataset, c, work / "jobs")
        log(f"harbor c={c}: {h_wall:.1f} s, {h_wall / n:.2f} s/task, mean trial {h_trial:.2f} s, "
            f"{sum(h_verdicts.values())}/{n} oracle 1.0 and nop 0.0")

        if ours_wall is not None:
            figures["speedup_vs_harbor"] = round((h_wall / n) / (ours_wall / n), 2)
            rates: dict[int, float] = {}
            levels = sorted({int(x) for x in args.scaling.split(",") if x.strip()})
            for level in levels:
                if level == c:
                    rates[level] = n / ours_wall * 60
                    continue
                make_cold(engine, bundles, baseline)
                wall, _ = run_ours(bundles, level, engine)
                rates[level] = n / wall * 60
                log(f"ours   c={level}: {wall:.1f} s, {rates[level]:.1f} tasks/min")
            rates.setdefault(c, n / ours_wall * 60)
            figures[f"tasks_per_min_c{c}"] = round(rates[c], 1)
            figures["ours_s_per_task"] = round(ours_wall / n, 2)
        figures["harbor_s_per_task"] = round(h_wall / n, 2)
        figures["harbor_trial_s"] = round(h_trial, 2)
        if ours_wall is not None:
            for level in sorted(rates):
                if level != c:
                    figures[f"tasks_per_min_c{level}"] = round(rates[level], 1)
            lo, hi = min(rates), max(rates)
            if hi != lo:
                figures[f"scaling_c{hi}_vs_c{lo}"] = round(rates[hi] / rates[lo], 2)
            figures["ours_accepted"] = sum(ours_verdicts.values())
        figures["harbor_ok"] = sum(h_verdicts.values())
        if ours_wall is not None:
            figures["agree"] = sum(1 for s, _ in bundles if ours_verdicts.get(s) == h_verdicts.get(s, False))
        figures["n_tasks"] = n
        figures["concurrency"] = c
        make_cold(engine, bundles, baseline)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("RESULT " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
