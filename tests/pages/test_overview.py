"""Overview page through AppTest: counts, stages, and counts following a save."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.pages.apptest_helpers import frame
from workbench.config import REPO_ROOT
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
