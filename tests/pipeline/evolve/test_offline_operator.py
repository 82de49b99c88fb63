"""The offline operators on real demo recipe tasks: harder has one step more and its tests check
that step (the parent's own solution fails them), easier one step fewer, a context switch
another family for one step at the same length; each variant passes verification in Docker;
the same parent, operator and n give the same bytes; impossible changes are NoVariant, said why."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.evolve.models import NoVariant, ParentTask
from pipeline.evolve.offline_operator import OfflineOperator
from pipeline.verify import failures
from pipeline.verify.run import verify_bundle
from workbench.models import TaskRecord
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.sandbox.task_toml import parse as parse_toml
from workbench.store import tasks as task_store
from tests.pipeline.evolve.recipe_tasks import first_with, parent, recipe_template, recipe_ws  # noqa: F401

pytestmark = pytest.mark.docker


def _meta(bundle):
    return parse_toml(bundle.text("task.toml")).metadata


def test_the_three_operators_make_verified_variants(recipe_ws, engine):
    ws, ids = recipe_ws
    op = OfflineOperator(ws)
    hard_id = first_with(ws, ids, "harder")
    p_hard = parent(ws, hard_id)
    harder = op.make(p_hard, "harder", 1)
    p_rest = parent(ws, next(t for t in ids if t != hard_id and len(_meta(parent(ws, t).bundle).recipes) >= 2))
    easier = op.make(p_rest, "easier", 1)
    switch = op.make(p_rest, "context_switch", 1)

    hard_recipes = list(_meta(p_hard.bundle).recipes)
    assert harder.task_id == f"{hard_id}__d1" and harder.n_steps == len(hard_recipes) + 1
    assert harder.recipes[:-1] == hard_recipes            # the parent's families kept, one step added
    assert harder.change.startswith(f"added step {len(hard_recipes) + 1} ({harder.recipes[-1]}")
    rest = list(_meta(p_rest.bundle).recipes)
    assert easier.task_id == f"{p_rest.task_id}__e1" and easier.n_steps == len(rest) - 1
    assert easier.recipes == rest[:-1] and easier.change.startswith(f"dropped step {len(rest)}")
    assert switch.task_id == f"{p_rest.task_id}__b1" and switch.n_steps == len(rest)
    changed = [i for i, (a, b) in enumerate(zip(rest, switch.recipes)) if a != b]
    assert len(changed) == 1 and f"step {changed[0] + 1} served by {switch.recipes[changed[0]]}" in switch.change

    for d, p in ((harder, p_hard), (easier, p_rest), (switch, p_rest)):
        meta = _meta(d.bundle)
        assert (meta.parent_id, meta.operator, meta.recipes) == (p.task_id, d.operator, d.recipes)
        assert len(meta.steps) == d.n_steps and all(s.count(">") == 2 for s in meta.steps)
        assert parse_toml(d.bundle.text("task.toml")).name == d.name and d.name.endswith(
            {"harder": "-d1", "easier": "-e1", "context_switch": "-b1"}[d.operator])
        again = OfflineOperator(ws).make(p, d.operator, 1)     # deterministic: the same bytes
        assert again.bundle.files == d.bundle.files and again.change == d.change

    # The parent's own solution against the harder variant's tests: the added step is checked.
    crossed = TaskBundle({**harder.bundle.files, "solution/solve.sh": p_hard.bundle.files["solution/solve.sh"]},
                         set(harder.bundle.executables))
    bundles = [harder.bundle, easier.bundle, switch.bundle, crossed]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda b: verify_bundle(b, engine=engine), bundles))
    for d, checks in zip((harder, easier, switch), results[:3]):
        assert failures.verdict(checks) == "accepted", (d.task_id, [(c.name, c.reason) for c in checks if not c.passed])
    oracle = next(c for c in results[3] if c.name == "oracle")
    assert not oracle.passed, "the parent's solution passes the harder variant's tests: the added step is unchecked"


def test_a_variant_of_a_variant_reads_its_steps_from_its_task_toml(recipe_ws):
    ws, ids = recipe_ws
    hard_id = first_with(ws, ids, "harder")
    op = OfflineOperator(ws)
    harder = op.make(parent(ws, hard_id), "harder", 1)
    rel = f"tasks/{harder.task_id}"
    write_bundle(harder.bundle, ws.root / rel)
    task_store.save_task(ws.db, TaskRecord(
        task_id=harder.task_id, name=harder.name, path_id="p", category=harder.category, difficulty=harder.difficulty,
        n_steps=harder.n_steps, recipes=harder.recipes, skill_ids=harder.skill_ids, scenario_ids=harder.scenario_ids,
        bundle_dir=rel, bundle_hash=harder.bundle.content_hash()))
    back = op.make(parent(ws, harder.task_id), "easier", 1)     # generation 2: d1 then e1
    assert back.task_id == f"{hard_id}__d1__e1" and back.name.endswith("-d1-e1")
    assert back.recipes == harder.recipes[:-1] and _meta(back.bundle).steps == _meta(harder.bundle).steps[:-1]


def test_impossible_changes_are_no_variant_with_the_reason(recipe_ws):
    ws, ids = recipe_ws
    op = OfflineOperator(ws)
    two = next(t for t in ids if len(_meta(parent(ws, t).bundle).recipes) == 2)
    one = op.make(parent(ws, two), "easier", 1)
    assert one.n_steps == 1
    as_parent = ParentTask(one.task_id, one.bundle, {"provider": "offline", "path_id": ""}, 0.0, 4)
    with pytest.raises(NoVariant, match="one step left"):
        op.make(as_parent, "easier", 1)
    with pytest.raises(NoVariant, match=r"only \d+ of the 50 asked for"):
        op.make(parent(ws, two), "easier", 50)
    reasons = []
    for t in ids:
        try:
            op.make(parent(ws, t), "harder", 1)
        except NoVariant as exc:
            reasons.append(str(exc))
    assert all("no skill edge or bridge leaves" in r or "already 5 steps" in r or "composes" in r for r in reasons)
    llm = parent(ws, ids[0])
    llm.record["provider"] = "llm"
    with pytest.raises(NoVariant, match="built by provider 'llm'"):
        op.make(llm, "harder", 1)
    with pytest.raises(ValueError, match="operator 'sideways'"):
        op.make(parent(ws, ids[0]), "sideways", 1)
