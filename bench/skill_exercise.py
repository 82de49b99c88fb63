"""Issue 24: how far offline synthesis exercises the skills it claims, on a real corpus.

1. Coverage: the accepted skills an exercise step can serve, by kind: `script` (its SKILL.md runs a
   bundled script that runs offline in the base image, called with inputs the package has samples
   of) or `command` (it documents a command of the tool it is about, a program of the base image,
   that runs on a file a sample or generator can supply), and, grouped, why the rest cannot be served.
2. A batch of inverse-frequency paths synthesized offline (no Docker): tasks made, steps by rubric
   score (pipeline.synth.fidelity_rubric), claimed steps and their scores, exercise steps, paths
   failed. The same batch with skill packages off (no exercise steps, today's recipes only) is the
   baseline in the same run.
3. `--verify N`: the first N tasks that hold an exercise step of each kind verified in Docker
   (build, no-op, oracle, rubric), counted per kind.

    .venv/bin/python bench/skill_exercise.py [--corpus DIR | --workspace WS] [--paths 100] [--verify N] [--quick]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.graph.sample_run import sample  # noqa: E402
from pipeline.synth.compose import synthesize_task  # noqa: E402
from pipeline.synth.context import steps_by_path  # noqa: E402
from pipeline.synth.exercise.coverage import exercise_coverage  # noqa: E402
from pipeline.synth.exercise.command_step import RECIPE_NAME as COMMAND  # noqa: E402
from pipeline.synth.exercise.step import RECIPE_NAME as SCRIPT  # noqa: E402
from pipeline.synth.recipes.base import SynthesisError  # noqa: E402
from workbench.store import graph as graph_store  # noqa: E402
from workbench.store import tasks as store  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402

BASE = "workbench/base:latest"   # the tag `workbench images bootstrap` also sets
KINDS = (SCRIPT, COMMAND)        # the recipe names of the two exercise kinds


def _corpus_default() -> Path:
    dev = REPO.parent / "shared" / "corpora" / "dev"
    return dev if (dev / "labels.jsonl").is_file() else REPO / "data" / "skills"


def build_workspace(corpus: Path, root: Path) -> Workspace:
    from pipeline.graph.build import BuildOptions, build_graph
    from pipeline.ingest.run import ingest
    from pipeline.scenarios.run import infer_offline
    ws = Workspace.open(root)
    ingest(ws, [corpus])
    infer_offline(ws)
    build_graph(ws, BuildOptions())
    return ws


def batch(work: dict, seed: int, ship: bool) -> dict:
    scores, claimed, exercise, tasks, failed = Counter(), Counter(), Counter(), [], Counter()
    for pid, steps in work.items():
        try:
            task = synthesize_task(steps, seed, BASE, path_id=pid, ship_skills=ship)
        except SynthesisError as exc:
            failed[str(exc).split(":")[0][:60]] += 1
            continue
        tasks.append(task)
        for f in task.fidelity:
            scores[f.score] += 1
            if f.claims:
                claimed[f.score] += 1
        for kind in KINDS:
            exercise[kind] += task.recipes.count(kind)
    return {"tasks": tasks, "scores": scores, "claimed": claimed, "exercise_steps": exercise, "failed": failed,
            "with_exercise": sum(bool(set(KINDS) & set(t.recipes)) for t in tasks)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--workspace", type=Path, default=None, help="an existing workspace with a graph")
    ap.add_argument("--paths", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--verify", type=int, default=0, help="verify this many exercise tasks in Docker")
    ap.add_argument("--quick", action="store_true", help="the demo corpus, 10 paths, no Docker")
    a = ap.parse_args()
    if a.quick:
        a.corpus, a.paths, a.verify = REPO / "data" / "skills", 10, 0
    tmp = None
    t0 = time.monotonic()
    if a.workspace:
        ws = Workspace.open(a.workspace)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench-exercise-"))
        ws = build_workspace(a.corpus or _corpus_default(), tmp / "ws")
    print(f"workspace ready in {time.monotonic() - t0:.1f} s", flush=True)
    try:
        cov = exercise_coverage(ws.db)
        print(f"\naccepted skills: {cov.skills}; an exercise step can serve {len(cov.served)} ({cov.share:.1%}): "
              + ", ".join(f"{cov.by_kind[k]} by a {k}" for k in ("script", "command")))
        for cls, n in cov.reasons.most_common():
            print(f"  {n:4d}  {cls:42s} e.g. {cov.examples[cls][0][:110]}")
        drawn = sample(ws, "inverse-frequency", a.paths, a.seed, min_len=2, max_len=5)
        work = steps_by_path(store.path_steps_with_skills(ws.db, graph_store.batch_path_ids(ws.db, drawn.batch_id)))
        rows = {}
        for label, ship in (("recipes only (packages off)", False), ("with exercise steps", True)):
            t = time.monotonic()
            rows[label] = r = batch(work, a.seed, ship)
            steps = sum(r["scores"].values())
            print(f"\n{label}: {len(work)} paths -> {len(r['tasks'])} tasks in {time.monotonic() - t:.1f} s; "
                  f"{steps} steps: " + ", ".join(f"{r['scores'][s]} at {s}" for s in (2, 1, 0))
                  + f"; claimed steps {sum(r['claimed'].values())} (at 2: {r['claimed'][2]}); "
                  f"exercise steps {sum(r['exercise_steps'].values())} in {r['with_exercise']} tasks ("
                  + ", ".join(f"{r['exercise_steps'][k]} {k}" for k in KINDS) + ")")
            for why, n in r["failed"].most_common(4):
                print(f"    failed {n:3d}: {why}")
        ex = rows["with exercise steps"]
        verified = ""
        if a.verify:
            verified = verify_by_kind(ex["tasks"], a.verify)
        print(f"RESULT servable_share={cov.share:.3f} servable={len(cov.served)}/{cov.skills} "
              f"servable_script={cov.by_kind['script']} servable_command={cov.by_kind['command']} "
              f"tasks={len(ex['tasks'])} exercise_steps={sum(ex['exercise_steps'].values())} "
              f"script_steps={ex['exercise_steps'][SCRIPT]} command_steps={ex['exercise_steps'][COMMAND]} "
              f"claimed_at_2={ex['claimed'][2]} "
              f"claimed={sum(ex['claimed'].values())} steps_at_0={ex['scores'][0]}{verified}")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def verify_by_kind(tasks: list, n: int) -> str:
    """The first `n` tasks holding an exercise step of each kind verified in Docker (build, no-op, oracle,
    rubric must pass); per kind 'accepted/tried', and why the others failed."""
    from pipeline.verify.run import image_for, verify_bundle
    from workbench.sandbox.engine import Engine
    engine, out = Engine(), []
    for kind in KINDS:
        ok = tried = 0
        for task in [t for t in tasks if kind in t.recipes][:n]:
            checks = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
            tried += 1
            good = all(c.passed for name, c in checks.items() if name in ("build", "noop", "oracle", "rubric"))
            ok += bool(good)
            bad = [f"{name}: {c.reason[:140]}" for name, c in checks.items() if not c.passed]
            print(f"  verify [{kind}] {task.name}: {'accepted' if good else 'rejected'} {bad[:2]}")
            if checks.get("oracle") and not checks["oracle"].passed:
                msgs = [t.get("message", "")[:300] for t in checks["oracle"].details.get("tests", [])
                        if t.get("outcome") != "passed"]
                print(f"      {msgs[:1]}")
            engine.remove_image(image_for(task.bundle))
        out.append(f" verified_{kind.split('-')[0]}_tasks={ok}/{tried}")
    return "".join(out)


if __name__ == "__main__":
    main()
