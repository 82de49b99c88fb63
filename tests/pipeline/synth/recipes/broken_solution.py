"""One family in a real container: its oracle passes, and a deliberately wrong solution (the
oracle with one line changed) is failed by the family's own tests."""
from __future__ import annotations

from pipeline.verify.run import image_for, verify_bundle
from tests.pipeline.synth.test_docker_families import chain_task
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine


def with_solve(bundle: TaskBundle, old: str, new: str) -> TaskBundle:
    solve = bundle.text("solution/solve.sh")
    assert old in solve, f"{old!r} is not in solve.sh:\n{solve}"
    return TaskBundle({**bundle.files, "solution/solve.sh": solve.replace(old, new).encode()}, bundle.executables)


def oracle_passes_and_broken_fails(chain: list[str], old: str, new: str) -> list[str]:
    """Verify the chain's task and its broken twin; returns the names of the tests the twin fails."""
    task = chain_task(0, chain)
    engine = Engine()
    try:
        good = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert good["oracle"].passed, (good["oracle"].reason, good["oracle"].log[-3000:])
        assert good["noop"].passed, good["noop"].reason
        assert good["rubric"].passed, good["rubric"].reason
        broken = {c.name: c for c in verify_bundle(with_solve(task.bundle, old, new), engine=engine)}
    finally:
        engine.remove_image(image_for(task.bundle))
    oracle = broken["oracle"]
    assert not oracle.passed and "after the solution the tests still fail" in oracle.reason, oracle.reason
    assert engine.orphaned_containers() == []
    return [t["name"] for t in oracle.details["tests"] if t["outcome"] != "passed"]
