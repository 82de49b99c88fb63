"""Hostile bundles: each is contained, reported with a clear reason, and leaves no container,
no dangling image and no lost work behind (a good task verified beside them is kept)."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.verify import failures
from pipeline.verify.run import verify_bundle
from tests.helpers import sum_bundle
from workbench.models import TaskRecord
from workbench.sandbox.bundle import BundleError, write_bundle
from workbench.sandbox.engine import Engine
from workbench.store import tasks as store

pytestmark = pytest.mark.docker

HOSTILE = {
    "good": sum_bundle(name="workbench/good"),
    "fork-bomb": sum_bundle(":(){ :|:& };:", agent_timeout=8, verifier_timeout=8, name="workbench/fork"),
    "gigabyte": sum_bundle("yes 'all work and no play' | head -c 1000000000", name="workbench/loud"),
    "sleeper": sum_bundle("sleep infinity", agent_timeout=3, name="workbench/sleeper"),
    "bad-build": sum_bundle(dockerfile_extra="RUN echo partial > /partial\nRUN exit 7\n", name="workbench/badbuild"),
}
EXPECT = {
    "good": (None, None),
    "fork-bomb": ("oracle", ("process limit reached: something forks without end",)),
    "gigabyte": ("oracle", ("printed more than 1024 KiB",)),
    "sleeper": ("oracle", ("ran past its 3 s limit",)),
    "bad-build": ("build", ("returned a non-zero code: 7",)),
}


def test_hostile_bundles_are_contained_and_reported(workspace):
    engine = Engine()
    dangling_before = {i.id for i in engine.client.images.list(filters={"dangling": True})}
    for key, b in HOSTILE.items():
        write_bundle(b, workspace.root / "tasks" / key)
        store.save_task(workspace.db, TaskRecord(task_id=key, name=f"workbench/{key}", path_id="p", category="x",
                                                 difficulty="easy", n_steps=1, recipes=[], skill_ids=[],
                                                 scenario_ids=[], bundle_dir=f"tasks/{key}",
                                                 bundle_hash=b.content_hash()))

    def run(key):
        checks = verify_bundle(HOSTILE[key], engine=engine)
        return key, store.save_verification(workspace.db, key, checks, None, verdict=failures.verdict(checks),
                                            failed_check=failures.first_failed(checks)), checks

    with ThreadPoolExecutor(3) as pool:
        results = {k: (v, c) for k, v, c in pool.map(run, HOSTILE)}
    assert results["good"][0] == "accepted"
    for key, (check, phrases) in EXPECT.items():
        if check is None:
            continue
        verdict, checks = results[key]
        failed = next(c for c in checks if not c.passed)
        assert verdict == "rejected" and failed.name == check, (key, failed)
        assert any(p in failed.reason for p in phrases), (key, failed.reason)
    frame = store.tasks_frame(workspace.db).set_index("task_id")
    assert frame.loc["good", "verdict"] == "accepted" and frame.loc["sleeper", "failed_check"] == "oracle"
    assert "ran past" in frame.loc["sleeper", "reason"]
    assert engine.orphaned_containers() == []
    assert {i.id for i in engine.client.images.list(filters={"dangling": True})} <= dangling_before


def test_traversal_bundle_is_refused_before_anything_is_built():
    b = sum_bundle(extra_files={"environment/../../etc/cron.d/evil": "* * * * * root rm -rf /"})
    checks = verify_bundle(b, engine=Engine())
    assert [c.name for c in checks] == ["build"] and not checks[0].passed
    assert "bundle rejected before building" in checks[0].reason and "'..' is not allowed" in checks[0].reason
    with pytest.raises(BundleError):
        b.validate()
