"""Overview page through AppTest: counts, stages, counts following a save, and the demo build's progress."""
from __future__ import annotations

import os
import subprocess
import sys

from streamlit.testing.v1 import AppTest

from tests.pages.apptest_helpers import frame
from workbench.config import REPO_ROOT
from workbench.demo_status import new_status, write_status
from workbench.models import CurationChange
from workbench.store import curation
from workbench.store import skills as skill_store
from workbench.store.status import workspace_status

PAGE = str(REPO_ROOT / "pages" / "overview.py")


def _metrics(at):
    return {m.label: int(m.value) for m in at.metric}


def test_overview_shows_counts_and_stages(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    status = workspace_status(demo_workspace.db)["skills"]
    assert _metrics(at) == {"Skills": status["total"], "Accepted": status["accepted"],
                            "Rejected": status["rejected"], "Pending review": status["pending"]}
    stages = frame(at, "stage", "state")
    assert stages.iloc[0]["state"] == "done" and stages.iloc[1]["state"] == "not run"
    assert "Provider: offline" in at.caption[0].value


def test_overview_counts_follow_a_save(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    before = _metrics(at)
    table = skill_store.skills_table(demo_workspace.db)
    ids = table[table["status"] == "accepted"]["id"].head(3).tolist()
    curation.save_changes(demo_workspace.db, [CurationChange(skill_id=i, field="status", new_value="rejected")
                                              for i in ids], author="t")
    after = _metrics(at.run())
    assert after["Accepted"] == before["Accepted"] - 3
    assert after["Rejected"] == before["Rejected"] + 3


def test_overview_on_empty_workspace(workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(workspace.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert _metrics(at)["Skills"] == 0
    assert any("workbench ingest" in i.value for i in at.info)


def test_overview_points_at_workbench_rollout(workspace, monkeypatch):
    """The command exists now (it read 'not built yet' with no command before issue 14)."""
    monkeypatch.setenv("WORKBENCH_HOME", str(workspace.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    stages = frame(at, "stage", "state", "command").set_index("stage")
    assert stages.loc["Rollouts", "state"] == "not run"
    assert stages.loc["Rollouts", "command"] == "workbench rollout --accepted --agent oracle -k 3"
    assert subprocess.run([sys.executable, "-m", "workbench.cli", "rollout", "--help"], capture_output=True,
                          timeout=120).returncode == 0


def test_overview_counts_the_stored_rollouts(graph_workspace, monkeypatch):
    from tests.pages.rollouts_fixture import make_rollouts_fixture
    fx = make_rollouts_fixture(graph_workspace)
    monkeypatch.setenv("WORKBENCH_HOME", str(graph_workspace.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    stages = frame(at, "stage", "state", "detail").set_index("stage")
    assert stages.loc["Rollouts", "state"] == "done"
    assert stages.loc["Rollouts", "detail"].startswith(f"{len(fx.records)} rollouts")


LONG_DETAIL = ("ingested 40 skills from 3 folders (12 accepted, 20 pending, 8 rejected by the filters: "
               "thin description, no steps, duplicate of another skill)")


def _build_status(ws, *, pid: int, state: str = "building", missing=()):
    status = new_status(["ingest", "scenarios", "graph", "sample", "tasks"], ws.runs_dir / "demo-build.log")
    status.pid, status.state, status.missing = pid, state, list(missing)
    for key in ("ingest", "scenarios"):
        status.stage(key).state = "done"
    status.stage("ingest").detail = LONG_DETAIL
    if state == "building":
        status.stage("graph").state = "running"
        status.stage("graph").done, status.stage("graph").total = 1, 4
    else:
        for key in ("graph", "sample"):
            status.stage(key).state = "done"
        status.stage("tasks").state = "skipped"
    write_status(ws.root, status)


def test_overview_shows_the_demo_build_in_progress(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    _build_status(demo_workspace, pid=os.getpid())   # a live pid: this test's own
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    bar = at.get("progress")[0].proto
    assert "being built: 2 of 5 stages done; now: build the scenario graph" in bar.text
    assert bar.value == int(100 * (2 + 1 / 4) / 5)
    rows = at.table[0].value.set_index("state")
    assert rows.loc["running", "progress"] == "1 of 4"
    # the walk saw the stages' details cut to the grid's column width: a table wraps them, whole
    assert rows.loc["done", "detail"].tolist() == [LONG_DETAIL, ""]
    assert not [df for df in at.dataframe if "progress" in df.value.columns]


def test_overview_says_what_the_finished_demo_lacks(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    _build_status(demo_workspace, pid=os.getpid(), state="done",
                  missing=["No Docker engine or base image: the demo has no synthesized tasks yet."])
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.get("progress")
    assert any("No Docker engine" in w.value for w in at.warning)


def test_overview_says_a_killed_build_stopped(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    dead = subprocess.Popen(["true"])
    dead.wait()
    _build_status(demo_workspace, pid=dead.pid)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.get("progress")
    assert any("stopped before it finished" in w.value and "workbench app --demo" in w.value for w in at.warning)
