"""Export of accepted tasks to a Harbor dataset folder: layout, refusals, path safety."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pipeline.export.harbor import export_harbor, slug_of
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.bundle import BundleError, TaskBundle, write_bundle
from tests.helpers import cli, judged, sum_bundle
from workbench.store import tasks as store


def sum_task(name: str = "workbench/sum-numbers", numbers: str = "3\n4\n35\n", dockerfile_extra: str = "") -> TaskBundle:
    """The shared small task (sum of /app/numbers.txt into /app/sum.txt) under another name."""
    return sum_bundle(numbers=numbers, dockerfile_extra=dockerfile_extra, name=name, agent_timeout=60,
                      verifier_timeout=60)


def add_task(ws, task_id: str, bundle: TaskBundle, *, name: str, verdict: str = "accepted",
             bundle_dir: str | None = None) -> Path:
    """Write the bundle under the workspace and record it in the store with a verdict."""
    rel = bundle_dir or f"tasks/{task_id}"
    dest = write_bundle(bundle, ws.root / rel) if bundle_dir is None else ws.root / rel
    store.save_task(ws.db, TaskRecord(task_id=task_id, name=name, path_id="p-" + task_id, category="text-processing",
                                      difficulty="easy", n_steps=1, recipes=["sum"], skill_ids=[], scenario_ids=[],
                                      bundle_dir=rel, bundle_hash=bundle.content_hash()))
    if verdict != "pending":
        checks = [CheckResult(name="build", passed=True), CheckResult(name="noop", passed=verdict == "accepted")]
        assert store.save_verification(ws.db, task_id, checks, image=None, **judged(checks)) == verdict
    return dest


def test_export_writes_one_harbor_folder_per_accepted_task(workspace, tmp_path):
    add_task(workspace, "t-a", sum_task("workbench/sum-a"), name="workbench/sum-a")
    add_task(workspace, "t-b", sum_task("workbench/sum-b", "1\n2\n"), name="workbench/sum-b")
    add_task(workspace, "t-r", sum_task("workbench/sum-r"), name="workbench/sum-r", verdict="rejected")
    add_task(workspace, "t-p", sum_task("workbench/sum-p"), name="workbench/sum-p", verdict="pending")
    out = tmp_path / "dataset"

    report = export_harbor(workspace, out)

    assert sorted(report.slugs) == ["sum-a", "sum-b"]
    assert report.skipped == []
    assert sorted(p.name for p in out.iterdir()) == ["sum-a", "sum-b"]   # no manifest: Harbor needs none
    for slug in ("sum-a", "sum-b"):
        folder = out / slug
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert files == ["environment/Dockerfile", "environment/app/numbers.txt", "instruction.md",
                         "solution/solve.sh", "task.toml", "tests/test.sh", "tests/test_outputs.py"]
        for script in ("solution/solve.sh", "tests/test.sh"):
            assert (folder / script).stat().st_mode & stat.S_IXUSR
        assert not (folder / "instruction.md").stat().st_mode & stat.S_IXUSR
    assert (out / "sum-a" / "task.toml").read_text() == (workspace.root / "tasks/t-a/task.toml").read_text()
    assert {e.task_id: e.path for e in report.exported}["t-b"] == (out / "sum-b").resolve()

    # Exporting again replaces the folders in place.
    again = export_harbor(workspace, out)
    assert sorted(again.slugs) == ["sum-a", "sum-b"]
    assert sorted(p.name for p in out.iterdir()) == ["sum-a", "sum-b"]


def test_export_refuses_unknown_and_not_accepted_tasks(workspace, tmp_path):
    add_task(workspace, "t-a", sum_task("workbench/sum-a"), name="workbench/sum-a")
    add_task(workspace, "t-r", sum_task("workbench/sum-r"), name="workbench/sum-r", verdict="rejected")
    add_task(workspace, "t-p", sum_task("workbench/sum-p"), name="workbench/sum-p", verdict="pending")
    out = tmp_path / "out"

    report = export_harbor(workspace, out, task_ids=["t-a", "t-r", "nope", "t-p", "t-a"])

    assert report.slugs == ["sum-a"]
    reasons = {s.task_id: s.reason for s in report.skipped}
    assert reasons == {"t-r": "not accepted (verdict: rejected)", "nope": "unknown task",
                       "t-p": "not accepted (verdict: pending)"}
    assert sorted(p.name for p in out.iterdir()) == ["sum-a"]
    assert "skipped 3" in report.summary()


def test_a_withdrawn_task_is_not_exported_and_the_report_says_why(workspace, tmp_path):
    from workbench.store import task_events
    add_task(workspace, "t-a", sum_task("workbench/sum-a"), name="workbench/sum-a")
    add_task(workspace, "t-w", sum_task("workbench/sum-w"), name="workbench/sum-w")
    task_events.withdraw(workspace.db, "t-w", "trajectory_judge", "test_sum wants a file never named")
    assert export_harbor(workspace, tmp_path / "all").slugs == ["sum-a"]
    report = export_harbor(workspace, tmp_path / "one", task_ids=["t-w"])
    assert {s.task_id: s.reason for s in report.skipped} == {
        "t-w": "withdrawn from the accepted set by trajectory_judge: test_sum wants a file never named"}


def test_export_path_safety(workspace, tmp_path):
    outside = tmp_path / "elsewhere"
    write_bundle(sum_task("workbench/sum-out"), outside / "sum-out")
    # A store row whose bundle folder points outside the workspace.
    add_task(workspace, "t-out", sum_task("workbench/sum-out"), name="workbench/sum-out",
             bundle_dir="../elsewhere/sum-out")
    # A bundle folder that contains a link.
    linked = add_task(workspace, "t-link", sum_task("workbench/sum-link"), name="workbench/sum-link")
    os.symlink("/etc/passwd", linked / "environment" / "app" / "passwd")
    # task.toml and the store disagree on the name.
    add_task(workspace, "t-mis", sum_task("workbench/other"), name="workbench/sum-mis")
    # The destination is a link to somewhere else: never written through.
    add_task(workspace, "t-lnk", sum_task("workbench/sum-lnk"), name="workbench/sum-lnk")
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (out / "sum-lnk").symlink_to(victim, target_is_directory=True)

    report = export_harbor(workspace, out)

    reasons = {s.task_id: s.reason for s in report.skipped}
    assert "outside the workspace" in reasons["t-out"]
    assert "links are not allowed" in reasons["t-link"]
    assert "store has 'workbench/sum-mis'" in reasons["t-mis"]
    assert "is a link" in reasons["t-lnk"]
    assert report.slugs == []
    assert {s.task_id for s in report.left_behind} == set(reasons)   # all accepted, none exported
    assert list(victim.iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == ["sum-lnk"]
    # Nothing was written anywhere but directly under `out`.
    assert sorted(p.name for p in outside.iterdir()) == ["sum-out"]


@pytest.mark.parametrize("name", ["org/../x", "org/", "org/.hidden", "org/a/b", "/"])
def test_slug_of_refuses_unsafe_names(name):
    with pytest.raises(BundleError):
        slug_of(name)


def test_slug_of_takes_the_part_after_the_slash():
    assert slug_of("workbench/csv-sum-3f2a") == "csv-sum-3f2a"


def test_export_cli_reports_as_json(workspace, tmp_path):
    import json
    add_task(workspace, "t-a", sum_task("workbench/sum-a"), name="workbench/sum-a")
    add_task(workspace, "t-r", sum_task("workbench/sum-r"), name="workbench/sum-r", verdict="rejected")
    r = cli("export", "harbor", str(tmp_path / "out"), "--workspace", str(workspace.root), "--json",
            "--task", "t-a", "--task", "t-r")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [e["slug"] for e in report["exported"]] == ["sum-a"]
    assert report["skipped"] == [{"task_id": "t-r", "reason": "not accepted (verdict: rejected)"}]


def test_tasks_sharing_a_name_are_all_exported(workspace, tmp_path):
    """Two accepted tasks with one name (as made before names carried the task id) used to
    give one folder, and the second was skipped: 19 of 20 exported. Both are written now."""
    add_task(workspace, "t-d1", sum_task("workbench/dup"), name="workbench/dup")
    add_task(workspace, "t-d2", sum_task("workbench/dup", "5\n"), name="workbench/dup")
    add_task(workspace, "t-x", sum_task("workbench/dup-t-d2"), name="workbench/dup-t-d2")   # the fallback's name
    out = tmp_path / "out"

    report = export_harbor(workspace, out)

    assert report.skipped == [] and report.left_behind == []
    folders = {e.task_id: e.slug for e in report.exported}
    assert folders["t-d1"] == "dup" and folders["t-x"] == "dup-t-d2"
    assert folders["t-d2"] not in ("dup", "dup-t-d2") and "t-d2" in folders["t-d2"]
    assert {e.task_id: e.renamed_from for e in report.exported}["t-d2"] == "dup"
    assert (out / folders["t-d2"] / "environment/app/numbers.txt").read_text() == "5\n"
    assert sorted(p.name for p in out.iterdir()) == sorted(folders.values())


def test_export_cli_fails_when_an_accepted_task_is_left_behind(workspace, tmp_path):
    add_task(workspace, "t-a", sum_task("workbench/sum-a"), name="workbench/sum-a")
    add_task(workspace, "t-mis", sum_task("workbench/other"), name="workbench/sum-mis")
    r = cli("export", "harbor", str(tmp_path / "out"), "--workspace", str(workspace.root))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "skipped t-mis" in r.stderr and "1 accepted task(s) were NOT exported" in r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["sum-a"]
