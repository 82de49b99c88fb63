"""Verifier strength in Docker (issue 27.3): each solution command left out once. The sum task's
solution does its work (caught by the test), writes a file no test reads (untested), prints a word
(no effect) and writes a timestamp that differs between two full runs (unstable: its contents are
no effect of any other cut; leaving its own command out leaves it missing, an untested effect). A solution whose tests fail gives no reference; `workbench tasks strength`
stores the measure and the export carries it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.verify.strength import measure_strength
from tests.helpers import sum_bundle
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import parse

pytestmark = pytest.mark.docker

SOLVE = """cd /app
python3 -c "print(sum(int(x) for x in open('/app/numbers.txt')))" > /app/sum.txt
echo "summed" > /app/notes.txt
echo working
date +%s%N > /app/.stamp"""


@pytest.fixture(scope="module")
def engine():
    return Engine()


def _image(engine, bundle):
    return engine.build(bundle.under("environment"), bundle.environment_hash(), 300).image


def test_commands_are_caught_untested_or_without_effect(engine):
    bundle = sum_bundle(SOLVE)
    report = measure_strength(engine, _image(engine, bundle), bundle, parse(bundle.text("task.toml")))
    by = {c.command.split(": ", 1)[1]: c for c in report.commands}
    assert list(by) == ['python3 -c "print(sum(int(x) for x in open(\'/app/numbers.txt\')))" > /app/sum.txt',
                        'echo "summed" > /app/notes.txt', "echo working", "date +%s%N > /app/.stamp"]
    work, notes, echo, stamp = by.values()
    assert work.caught and work.effect and work.failing_tests == ["test_sum"]
    assert not notes.caught and notes.effect and notes.changed == ["/app/notes.txt"]
    assert not echo.caught and echo.effect is False
    # its contents differ run to run: no other cut counts it as an effect; without the command the
    # file is not there at all, which is its own (untested) effect
    assert "/app/.stamp" in report.unstable and stamp.changed == ["/app/.stamp"] and not stamp.caught
    assert all("/app/.stamp" not in c.changed for c in (work, notes, echo))
    assert report.strength == pytest.approx(1 / 3) and (report.effective, report.caught) == (3, 1)
    assert [c.command for c in report.untested] == [notes.command, stamp.command]
    assert [c.command for c in report.noise] == [echo.command]
    assert report.summary().startswith("33% of effective commands caught (1/3); 2 untested, 1 without effect")


def test_a_failing_solution_gives_no_reference(engine):
    bundle = sum_bundle("echo 0 > /app/sum.txt")
    report = measure_strength(engine, _image(engine, bundle), bundle, parse(bundle.text("task.toml")))
    assert report.strength is None and report.problem.startswith("the full solution gives no reference")


def test_the_cli_measures_accepted_tasks_once_and_the_export_carries_it(graph_workspace, engine):
    from tests.pages.synth_fixture import make_synth_fixture
    from workbench.sandbox.base_image import base_image_name
    from workbench.store import tasks as store
    ws = graph_workspace
    make_synth_fixture(ws)
    accepted = store.accepted_tasks(ws.db)
    # the fixture's Dockerfile names an image nobody builds: the base image instead
    dockerfile = ws.root / accepted["bundle_dir"].iloc[0] / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("workbench-base:latest", base_image_name()))
    accepted = accepted["task_id"].tolist()
    cmd = [sys.executable, "-m", "workbench.cli", "--workspace", str(ws.root), "tasks", "strength", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["measured"] == len(accepted) == 1 and summary["median"] == 1.0, proc.stdout
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert "Nothing to measure" in again.stdout
    rows = subprocess.run([sys.executable, "-m", "workbench.cli", "--workspace", str(ws.root), "tasks", "export"],
                          capture_output=True, text=True, timeout=120).stdout.splitlines()
    exported = {json.loads(r)["task_id"]: json.loads(r) for r in rows}
    assert exported[accepted[0]]["verifier_strength"] == 1.0


def test_what_comes_and_goes_between_full_runs_is_no_effect_of_a_cut():
    from pipeline.verify.strength import TREE_CHANGED, _differs, unstable_paths, volatile_dirs
    # two full runs: a commit's objects get other names each time, a stamp other contents
    full = {"tree": "t1", "more": 0, "files": {"/app/r/.git/objects/ab/cd": "x", "/app/out.txt": "6", "/app/.stamp": "1"}}
    again = {"tree": "t2", "more": 0, "files": {"/app/r/.git/objects/ef/01": "y", "/app/out.txt": "6", "/app/.stamp": "2"}}
    unstable = unstable_paths(full, again)
    volatile = volatile_dirs(full, again)
    assert volatile == {"/app/r/.git/objects"} and {"/app/.stamp", TREE_CHANGED} <= unstable
    # a cut that changed nothing but made its own object names and stamp: no effect
    cut = {"tree": "t3", "more": 0, "files": {"/app/r/.git/objects/99/aa": "z", "/app/out.txt": "6", "/app/.stamp": "3"}}
    assert _differs(full, cut, unstable, volatile) == []
    # one that left out.txt unwritten, or the stamp: an effect each
    assert _differs(full, dict(cut, files={"/app/.stamp": "3"}), unstable, volatile) == ["/app/out.txt"]
    assert _differs(full, dict(cut, files={"/app/out.txt": "6"}), unstable, volatile) == ["/app/.stamp"]
    # only the listing differs (a mode, a folder) and the full runs agree on it
    same = {"tree": "t1", "more": 0, "files": dict(full["files"])}
    assert _differs(full, dict(same, tree="t9"), set(), set()) == [TREE_CHANGED]
