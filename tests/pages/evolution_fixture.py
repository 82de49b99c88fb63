"""A planted two-round evolve run over five original tasks, written through the real store
functions (tasks, verification, rollouts, workbench/store/lineage.py), for the Evolution page and
analysis tests (AppTest, browser, analysis/evolution).

The plan (`ORIGINALS`, `VARIANTS`) is small enough that the tests assert numbers worked out by hand:
rates are by noisy-oracle over k = 4 rollouts; two tasks also have terminus-2 rollouts, so the agent
filter changes what is shown. Rejected variants and attempts that made no variant have no rollouts.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.agents.factory import make_agent
from pipeline.agents.protocol import AGENT_LABELS
from pipeline.evolve.models import operator_for, parent_of, root_of
from pipeline.rollouts.models import RolloutRecord, rollout_key
from tests.helpers import judged
from tests.pages.rollouts_fixture import _bundle
from tests.pages.synth_fixture import _checks
from workbench.models import TaskRecord
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.store import lineage as lineage_store
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

RUN_ID = "evofix-run1"
AGENT = "noisy-oracle"
P = 0.8
LABEL = make_agent(AGENT, keep_p=P).label            # its rollouts' stored label carries p
LABEL_P05 = make_agent(AGENT, keep_p=0.5).label      # another p: other rates, never mixed in
K = 4
T2, T2_MODEL = "terminus-2", "gpt-4o-mini"


@dataclass(frozen=True)
class PlantedVariant:
    task_id: str
    round: int
    status: str              # made | no_variant | failed
    verdict: str | None      # accepted | rejected (made only)
    passed: int | None       # of K noisy-oracle rollouts (accepted only)
    change: str


# original -> noisy-oracle passes of K
ORIGINALS = {"evo00": 4, "evo01": 3, "evo02": 1, "evo03": 0, "evo04": 0}
VARIANTS = (
    PlantedVariant("evo00__d1", 1, "made", "accepted", 2, "added step 3 (jq-filter) along bridge s1>s4"),
    PlantedVariant("evo01__d1", 1, "made", "accepted", 1, "added step 2 (csv-sort) along bridge s2>s5"),
    PlantedVariant("evo02__b1", 1, "made", "accepted", 2, "step 1 served by awk-sum instead of lines-tally"),
    PlantedVariant("evo03__e1", 1, "made", "accepted", 3, "dropped step 2 (regex-extract)"),
    PlantedVariant("evo04__e1", 1, "no_variant", None, None, "one step left: nothing to drop"),
    PlantedVariant("evo00__d1__b1", 2, "made", "accepted", 1, "step 2 served by sed-replace instead of jq-filter"),
    PlantedVariant("evo01__d1__b1", 2, "no_variant", None, None, "no other recipe family serves step 2"),
    PlantedVariant("evo02__b1__b1", 2, "made", "rejected", None, "step 1 served by cut-fields instead of awk-sum"),
    PlantedVariant("evo03__e1__d1", 2, "failed", None, None, ""),
)
# terminus-2 (a model) on two tasks: (task, passed of 3)
T2_ROLLOUTS = {"evo00": 2, "evo00__d1": 0}
P05_TASK = "evo01"        # 4 noisy-oracle rollouts at p = 0.5 too, none passed
CRASHED_TASK = "evo00"    # one more p = 0.8 rollout whose worker crashed: not counted in r
FAILED_ERROR = "docker build failed: step 3 of the Dockerfile exited 1"


def rate(task_id: str) -> float:
    """The planted noisy-oracle pass rate of a task."""
    if task_id in ORIGINALS:
        return ORIGINALS[task_id] / K
    return next(v.passed for v in VARIANTS if v.task_id == task_id) / K


def _save_task(ws, task_id: str, verdict: str, n: int) -> str:
    files = _bundle(f"skillgraph/{task_id.replace('__', '-')}", "log-analysis", f"evo-marker-{n}")
    bundle = TaskBundle(files)
    write_bundle(bundle, ws.root / "tasks" / task_id)
    task_store.save_task(ws.db, TaskRecord(
        task_id=task_id, name=f"skillgraph/{task_id}", path_id=f"evo-path-{root_of(task_id)}", category="log-analysis",
        difficulty="medium", n_steps=2, recipes=["app-log-errors", "lines-tally"], skill_ids=[], scenario_ids=[],
        provider="offline", bundle_dir=f"tasks/{task_id}", bundle_hash=bundle.content_hash()))
    checks = _checks("accepted" if verdict == "accepted" else "oracle-fails", files)
    assert task_store.save_verification(ws.db, task_id, checks, "wb-task-evofix", **judged(checks)) == verdict
    return bundle.content_hash()


def _rollouts(ws, task_id: str, bundle_hash: str, agent: str, model: str | None, passed: int, n: int,
              run_id: str, label: str | None = None, failure: str = "test_assertion", first: int = 0) -> None:
    for sample in range(first, first + n):
        ok = sample - first < passed
        rid = rollout_key(bundle_hash, f"{agent}:{model}" if model else (label or agent), sample)
        rec = RolloutRecord(
            rollout_id=rid, run_id=run_id, task_id=task_id, agent=agent,
            agent_label=label or AGENT_LABELS[agent] + (f" · {model}" if model else ""), model=model, sample=sample,
            temperature=0.0, source="workbench", reward=float(ok), passed=ok,
            failure_class=None if ok else failure, n_tests=4, n_failed=0 if ok else 1, turns=1,
            parse_errors=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, agent_s=0.4, verifier_s=1.5,
            total_s=3.0, overhead_ms_per_turn=None, folder=f"runs/{run_id}/rollouts/{rid}")
        ro_store.save_rollout(ws.db, asdict(rec), [])


def make_evolution_fixture(ws) -> None:
    """Write the originals, the evolve run, every variant tried (tasks, verdicts, lineage rows) and
    the rollouts into ``ws`` (an empty workspace will do)."""
    ro_store.create_run(ws.db, "evofix-rollouts", agent=AGENT, model=None, k=K, concurrency=2,
                        n_tasks=len(ORIGINALS) + len(VARIANTS), params={"keep_p": P})
    ro_store.create_run(ws.db, "evofix-p05", agent=AGENT, model=None, k=K, concurrency=2, n_tasks=1,
                        params={"keep_p": 0.5})
    ro_store.create_run(ws.db, "evofix-t2", agent=T2, model=T2_MODEL, k=3, concurrency=2,
                        n_tasks=len(T2_ROLLOUTS), params={})
    lineage_store.create_run(ws.db, RUN_ID, rounds=2, agent=AGENT, model=None, k=K, params={"keep_p": P})
    hashes = {}
    for n, (task_id, passed) in enumerate(ORIGINALS.items()):
        hashes[task_id] = _save_task(ws, task_id, "accepted", n)
        _rollouts(ws, task_id, hashes[task_id], AGENT, None, passed, K, "evofix-rollouts", LABEL)
    for n, v in enumerate(VARIANTS, len(ORIGINALS)):
        parent = parent_of(v.task_id)
        if v.status == "made":
            hashes[v.task_id] = _save_task(ws, v.task_id, v.verdict, n)
            if v.passed is not None:
                _rollouts(ws, v.task_id, hashes[v.task_id], AGENT, None, v.passed, K, "evofix-rollouts", LABEL)
        op = operator_for(rate(parent))
        lineage_store.save_lineage(ws.db, {
            "task_id": v.task_id, "parent_id": parent, "root_id": root_of(v.task_id), "operator": op,
            "round": v.round, "run_id": RUN_ID, "parent_pass_rate": rate(parent), "parent_rollouts": K,
            "provider": "offline", "change": v.change if v.status == "made" else "", "status": v.status,
            "error": FAILED_ERROR if v.status == "failed" else (v.change if v.status == "no_variant" else None)})
    for task_id, passed in T2_ROLLOUTS.items():
        _rollouts(ws, task_id, hashes[task_id], T2, T2_MODEL, passed, 3, "evofix-t2")
    _rollouts(ws, P05_TASK, hashes[P05_TASK], AGENT, None, 0, K, "evofix-p05", LABEL_P05)
    _rollouts(ws, CRASHED_TASK, hashes[CRASHED_TASK], AGENT, None, 0, 1, "evofix-rollouts", LABEL, "crashed", first=K)
    ro_store.set_run_status(ws.db, "evofix-rollouts", "done", "finished")
    ro_store.set_run_status(ws.db, "evofix-t2", "done", "finished")
    ro_store.set_run_status(ws.db, "evofix-p05", "done", "finished")
    lineage_store.finish_run(ws.db, RUN_ID, "done", "2 rounds", rounds_done=2)


def planted_workspace(tmp_path_factory):
    """A workspace holding the fixture, for a module of tests that only read it."""
    from workbench.workspace import Workspace
    ws = Workspace.open(tmp_path_factory.mktemp("evolution") / "ws")
    make_evolution_fixture(ws)
    return ws
