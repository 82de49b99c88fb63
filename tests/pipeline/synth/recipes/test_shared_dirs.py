"""shared-group-folder in Docker: the oracle makes a setgid group folder; one without the setgid
bit (mode 0770) fails. For a setfacl skill a reader outside the group gets ACL entries: a solution
that sets no default ACL on the folders fails that test only."""
import pytest

from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.skill_fit import SkillParts
from pipeline.verify.run import image_for, verify_bundle
from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails, with_solve
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_shared_folder_without_the_setgid_bit_fails():
    failed = oracle_passes_and_broken_fails(["table-filter-sort", "shared-group-folder"],
                                            "chmod 2770", "chmod 770")
    assert any(n.endswith("_folder") for n in failed) and any(n.endswith("_modes") for n in failed), failed


def test_a_reader_acl_without_default_entries_fails():
    steps = [PathStep("rows", "table-filter-sort", "data-processing", "", "a0", "a1"),
             PathStep("acl-skill", "share-with-acls", "security-permissions", "", "a1", "a2",
                      SkillParts(tools=("setfacl", "getfacl", "chmod")))]
    task = synthesize_task(steps, 0, base_image_name(), force=["table-filter-sort", "shared-group-folder"])
    assert "setfacl -d -m" in task.bundle.text("solution/solve.sh")
    engine = Engine()
    try:
        good = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert good["oracle"].passed, (good["oracle"].reason, good["oracle"].log[-3000:])
        assert good["noop"].passed and good["rubric"].passed, (good["noop"].reason, good["rubric"].reason)
        broken = {c.name: c for c in verify_bundle(with_solve(task.bundle, "setfacl -d -m", "setfacl -m"),
                                                   engine=engine)}
    finally:
        engine.remove_image(image_for(task.bundle))
    failed = [t["name"] for t in broken["oracle"].details["tests"] if t["outcome"] != "passed"]
    assert [n for n in failed if n.endswith("_reader_acl")] and not [n for n in failed if n.endswith("_modes")], failed
