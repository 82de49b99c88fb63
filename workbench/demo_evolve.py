"""The demo's evolution stage (no API key): noisy-oracle rollouts (k = K, each solution step kept
with probability KEEP_P; simulated, not a model) on the demo's probe tasks, then one round of
SETA-Evol (pipeline/evolve/run.run_evolve) on them: by each task's pass rate a harder variant,
a context switch or an easier one, verified like any synthesized task and rolled out by the same
agent. Recipe-built parents go through the offline operators; LLM-built ones through the LLM
operator against an in-process scripted replay server (a test double, as the demo's LLM batch).

KEEP_P is chosen so the demo's tasks fall in all three bands (r = 0, 0 < r <= 0.5, r > 0.5):
see the measurement by its side. Both runs have fixed ids, so a build cut short resumes them
(rollout ids are content keys and a variant already made is not made again).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from workbench import demo_rollouts
from workbench.workspace import Workspace

K = 4
# Measured on the demo's 10 probe tasks (7 offline, 3 LLM-built; 2-4 marked steps, each checked by
# the tests: the ablation probe passes none, so a task passes exactly when every step is kept and the
# bands follow from draw_kept alone), k = 4. The draw is seeded by (sample, task), so the same tasks
# give the same rates on every build — and new task ids (SYNTH_VERSION 5, 2026-12-06) give new ones:
# p = 0.62 then left no task above 0.5. p = 0.70 gives 4 tasks at r = 0 (easier), 4 with
# 0 < r <= 0.5 (context switch) and 2 above 0.5 (harder: one offline, one LLM-built); 0.68-0.75 give
# the same bands, 0.63-0.67 only one task above 0.5.
KEEP_P = 0.70
AGENT = "noisy-oracle"
ROLLOUT_RUN = "demo-noisy-oracle"
EVOLVE_RUN = "demo-evolve"
CONCURRENCY = demo_rollouts.CONCURRENCY


def evolution_missing(ws: Workspace, tasks_missing: bool) -> bool:
    """Whether the demo still lacks its round of evolution: the evolve run is not done, and there
    are (or will be, `tasks_missing`) accepted tasks to evolve."""
    from workbench.store import lineage
    run = lineage.get_run(ws.db, EVOLVE_RUN)
    if run is not None and run["status"] == "done":
        return False
    return tasks_missing or bool(demo_rollouts.probe_tasks(ws))


def _rollouts_done(ws: Workspace) -> bool | None:
    """None: no noisy-oracle run yet; else whether it is done."""
    from workbench.store import rollouts as ro_store
    run = ro_store.get_run(ws.db, ROLLOUT_RUN)
    return None if run is None else run["status"] == "done"


@contextmanager
def _llm_operator(ws: Workspace, engine, stop: threading.Event):
    """The LLM operator over a caller against an in-process scripted replay server: the scripted
    evolution model answers the evolve prompts, the demo's scripted synthesis model the repair and
    judge prompts of the loop (it answers every request, so it goes last); calls and costs are
    logged under the evolve run."""
    from pipeline.evolve.llm_operator import LlmOperator
    from pipeline.evolve.llm_scripted import ScriptedEvolution
    from pipeline.synth.llm.calls import LLMCaller
    from pipeline.synth.llm.scripted_faults import DEMO_PRICE, DEMO_REPLAY_MODEL, scripted_replies
    from workbench.llm.replay_server import ReplayServer, Script
    from workbench.llm.runtime import open_client
    from workbench.llm.settings import LLMSettings
    from workbench.sandbox.base_image import base_image_name
    synthesis, _ = scripted_replies(ws)
    evolution = ScriptedEvolution(ws, base_image=base_image_name())
    with ReplayServer(Script([evolution.rule(), synthesis.rule()])) as srv:
        settings = LLMSettings(base_url=srv.base_url, model=DEMO_REPLAY_MODEL, concurrency=4,
                               prices={DEMO_REPLAY_MODEL: DEMO_PRICE})
        caller = LLMCaller(open_client(ws, settings, batch_id=EVOLVE_RUN))
        try:
            yield LlmOperator(caller, engine=engine, ws=ws, stop=stop)
        finally:
            caller.close()                      # flushes the call log


def run_demo_evolution(ws: Workspace, engine, *, stop: threading.Event,
                       progress: Callable[[int, int, str], None] | None = None) -> str:
    """Run (or resume) the noisy-oracle rollouts of the demo's probe tasks, then (or resume) one
    round of evolution on them; returns what was made, in one line."""
    from pipeline.evolve.run import run_evolve
    from pipeline.rollouts.batch import run_rollouts
    from workbench.store import lineage
    t0 = time.monotonic()
    parents = demo_rollouts.probe_tasks(ws)
    if not parents:
        return "no accepted task to evolve"
    done = _rollouts_done(ws)
    if not done:
        def tick(counts: dict) -> None:
            if progress:
                progress(int(counts.get("done", 0)), int(counts.get("total", 0)), f"{AGENT} rollouts (p = {KEEP_P:g})")
        if done is None:
            run_rollouts(ws, agent=AGENT, task_ids=parents, k=K, keep_p=KEEP_P, run_id=ROLLOUT_RUN,
                         concurrency=CONCURRENCY, progress=tick, stop=stop, engine=engine)
        else:
            run_rollouts(ws, run_id=ROLLOUT_RUN, resume=True, concurrency=CONCURRENCY, progress=tick, stop=stop,
                         engine=engine)
    if stop.is_set():
        return "stopped during the noisy-oracle rollouts"

    def step(p: dict) -> None:
        if progress:
            progress(int(p.get("done", 0)), int(p.get("total", 0)), f"evolve: {p.get('phase', '')}")
    resume = lineage.get_run(ws.db, EVOLVE_RUN) is not None
    with _llm_operator(ws, engine, stop) as llm:
        kw = dict(run_id=EVOLVE_RUN, engine=engine, stop=stop, progress=step, operators={"llm": llm},
                  concurrency=CONCURRENCY)
        if resume:
            report = run_evolve(ws, resume=True, **kw)
        else:
            report = run_evolve(ws, task_ids=parents, rounds=1, agent=AGENT, k=K, keep_p=KEEP_P, **kw)
    return f"{report.summary()} (noisy-oracle p = {KEEP_P:g}, simulated) in {time.monotonic() - t0:.0f} s"
