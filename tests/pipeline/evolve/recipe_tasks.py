"""Verified offline (recipe) demo tasks for the evolve tests: real synthesis in real Docker, once
per test module that imports the fixture; each test gets its own copy. Plus rollouts planted in
the store, so a test chooses each parent's pass rate (and so its operator) exactly."""
from __future__ import annotations

import dataclasses
import shutil

import pytest

from pipeline.agents.factory import make_agent
from pipeline.evolve.models import NoVariant, ParentTask
from pipeline.evolve.offline_operator import OfflineOperator
from pipeline.rollouts.models import RolloutRecord
from pipeline.synth.batch import run_synth
from workbench.sandbox.bundle import read_bundle
from workbench.store import rollouts as rollout_store
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

KEEP_P = 0.8


@pytest.fixture(scope="module")
def recipe_template(graph_workspace_template, tmp_path_factory):
    """(workspace root, accepted task ids) — eight demo paths synthesized offline and verified (six
    stopped being enough when curation changed the demo graph: every task's last scenario was one no
    skill leaves, so none had a harder variant)."""
    root = tmp_path_factory.mktemp("evolve") / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    report = run_synth(ws, n_paths=8, seed=1, concurrency=2)
    ids = sorted(task_store.accepted_tasks(ws.db).task_id)
    assert len(ids) >= 4, report.as_dict()
    return root, ids


@pytest.fixture
def recipe_ws(recipe_template, tmp_path):
    src, ids = recipe_template
    dst = tmp_path / "ws"
    shutil.copytree(src, dst)
    return Workspace.open(dst), list(ids)


def parent(ws: Workspace, task_id: str, pass_rate: float = 1.0, rollouts: int = 4) -> ParentTask:
    rec = task_store.tasks_frame(ws.db).set_index("task_id", drop=False).loc[task_id].to_dict()
    return ParentTask(task_id, read_bundle(ws.root / rec["bundle_dir"]), rec, pass_rate, rollouts)


def first_with(ws: Workspace, ids: list[str], operator: str, *, exclude: tuple[str, ...] = ()) -> str:
    """The first task the offline operator can make this kind of variant of (the demo graph decides)."""
    op = OfflineOperator(ws)
    for t in ids:
        if t in exclude:
            continue
        try:
            op.make(parent(ws, t), operator, 1)
            return t
        except NoVariant:
            continue
    raise AssertionError(f"no demo task has a {operator} variant")


def plant_rollouts(ws: Workspace, task_id: str, passed: int, n: int, *, agent: str = "noisy-oracle",
                   keep_p: float | None = KEEP_P) -> None:
    """n stored rollouts of `agent` on the task, `passed` of them passing (as a batch would store them)."""
    label = make_agent(agent, keep_p=keep_p).label
    for i in range(n):
        ok = i < passed
        rec = RolloutRecord(rollout_id=f"planted-{task_id}-{agent}-{i}", run_id="planted", task_id=task_id,
                            agent=agent, agent_label=label, model=None, sample=i, temperature=0.0,
                            source="workbench", reward=1.0 if ok else 0.0, passed=ok,
                            failure_class=None if ok else "test_assertion", n_tests=2, n_failed=0 if ok else 1,
                            turns=1, parse_errors=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0,
                            agent_s=1.0, verifier_s=1.0, total_s=2.0, overhead_ms_per_turn=None,
                            folder=f"runs/planted/rollouts/{task_id}-{i}", details={})
        rollout_store.save_rollout(ws.db, dataclasses.asdict(rec), [])
