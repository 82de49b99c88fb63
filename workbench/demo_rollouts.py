"""The demo's rollouts (no API key): oracle, nop and ablation rollouts (k = 3) on up to 10 of
the demo's accepted tasks, and terminus-2 against the scripted replay model (a test double) on a few of
them — one behaviour that solves them, one that never completes — then the scripted trajectory
judge on what no rollout solved. The Difficulty and Failures pages then have real data.

Each batch has a fixed run id, so a build cut short resumes its unfinished batch and skips
the finished ones (rollout ids are content keys: nothing is run twice).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from workbench.workspace import Workspace

K = 3
CONCURRENCY = 3           # trials mostly wait on Docker; the tasks stage's batches use 2-3 too
# The probes run on this many accepted tasks (offline and LLM-built ones alike): 9 trials a task
# took ~11 s each at concurrency 3 on the loaded 2-core machine, and the demo runs in CI.
MAX_TASKS = 10
MAX_LLM_TASKS = 3
N_TERMINUS_TASKS = 3      # tasks the scripted terminus-2 model solves
STUCK_MAX_TURNS = 3       # the never-completing model's episodes end at this many turns


@dataclass(frozen=True)
class DemoBatch:
    run_id: str
    agent: str
    replay: str | None = None            # terminus-2: the scripted model's behaviour
    tasks: str = "all"                   # all | terminus (the first few) | stuck (one other)
    max_turns: int | None = None


BATCHES = (
    DemoBatch("demo-oracle", "oracle"),
    DemoBatch("demo-nop", "nop"),
    DemoBatch("demo-ablation", "ablation"),
    DemoBatch("demo-terminus2", "terminus-2", replay="oracle", tasks="terminus"),
    DemoBatch("demo-terminus2-stuck", "terminus-2", replay="never_completes", tasks="stuck",
              max_turns=STUCK_MAX_TURNS),
)


def _done_runs(ws: Workspace) -> set[str]:
    from workbench.store import rollouts as ro_store
    runs = ro_store.runs(ws.db)
    return set(runs.loc[runs["status"] == "done", "run_id"]) if len(runs) else set()


def rollouts_missing(ws: Workspace, tasks_missing: bool) -> bool:
    """Whether the demo still lacks its rollouts: some batch is not done, and there are (or will
    be, `tasks_missing`) accepted tasks to run them on."""
    from workbench.store.tasks import accepted_tasks
    if {b.run_id for b in BATCHES} <= _done_runs(ws):
        return False
    return tasks_missing or len(accepted_tasks(ws.db)) > 0


def _task_ids(ws: Workspace) -> dict[str, list[str]]:
    """The tasks of each kind of batch: up to MAX_TASKS accepted ones for the probes (up to
    MAX_LLM_TASKS of them LLM-built; by name, so a resumed build picks the same); the first few
    offline ones (their solutions are marked step by step) for the solving model; one more
    offline one for the stuck model."""
    from pipeline.evolve.models import root_of
    from workbench.store.tasks import accepted_tasks, tasks_frame
    # originals only: the evolution stage's variants are rolled out by their own agent there
    ids = [t for t in accepted_tasks(ws.db)["task_id"] if root_of(t) == t]
    provider = tasks_frame(ws.db).set_index("task_id")["provider"]
    offline = [t for t in ids if provider.get(t) == "offline"]
    llm = [t for t in ids if provider.get(t) != "offline"][:MAX_LLM_TASKS]
    probes = (offline[:MAX_TASKS - len(llm)] + llm)
    probes += [t for t in ids if t not in probes][:MAX_TASKS - len(probes)]
    solvable = offline or ids
    return {"all": sorted(probes, key=ids.index), "terminus": solvable[:N_TERMINUS_TASKS],
            "stuck": solvable[N_TERMINUS_TASKS:N_TERMINUS_TASKS + 1] or ids[-1:]}


def probe_tasks(ws: Workspace) -> list[str]:
    """The accepted original tasks the probes run on (the evolution stage evolves the same)."""
    return _task_ids(ws)["all"]


def run_demo_rollouts(ws: Workspace, engine, *, stop: threading.Event,
                      progress: Callable[[int, int, str], None] | None = None) -> str:
    """Run (or resume) every demo batch that is not done, then the scripted trajectory judge;
    returns what was made, in one line. `progress(done, total, what)` over all batches."""
    from pipeline.rollouts.batch import run_rollouts
    from workbench.cli_judge import judge_trajectories
    from workbench.store import rollouts as ro_store
    t0 = time.monotonic()
    chosen = _task_ids(ws)
    if not chosen["all"]:
        return "no accepted task to roll out"
    done_runs = _done_runs(ws)
    todo = [b for b in BATCHES if b.run_id not in done_runs and chosen[b.tasks]]
    sizes = {b.run_id: len(chosen[b.tasks]) * K for b in todo}
    total, finished = sum(sizes.values()), 0
    lines = []
    for b in todo:
        if stop.is_set():
            break

        def tick(counts: dict, b=b, base=finished) -> None:
            if progress:
                progress(base + int(counts.get("done", 0)), total, f"{b.agent}" + (f" ({b.replay})" if b.replay else ""))
        resume = ro_store.get_run(ws.db, b.run_id) is not None
        if resume:
            report = run_rollouts(ws, run_id=b.run_id, resume=True, progress=tick, stop=stop, engine=engine,
                                  concurrency=CONCURRENCY)
        else:
            report = run_rollouts(ws, agent=b.agent, task_ids=chosen[b.tasks], k=K, replay=b.replay,
                                  max_turns=b.max_turns, run_id=b.run_id, concurrency=CONCURRENCY,
                                  progress=tick, stop=stop, engine=engine)
        finished += sizes[b.run_id]
        p1 = f"{report.pass_at_1:.0%}" if report.pass_at_1 is not None else "n/a"
        lines.append(f"{b.agent}{f' ({b.replay}, scripted test model)' if b.replay else ''} {report.stored} pass@1 {p1}")
    if stop.is_set():
        return "stopped; " + "; ".join(lines)
    judged = judge_trajectories(ws, replay=True)
    return (f"{'; '.join(lines) or 'all batches were done'}; {judged.summary()} (scripted judge, a test double) "
            f"in {time.monotonic() - t0:.0f} s")
