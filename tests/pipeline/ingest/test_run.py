"""Ingest end to end: the demo corpus, idempotence, versions, and the deliberate flaws."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.helpers import write_skill
from pipeline.ingest.run import ingest
from workbench.config import DEMO_CORPUS
from workbench.store import skills as skill_store
from workbench.store.status import workspace_status

FLAWS = json.loads((DEMO_CORPUS / "flaws.json").read_text())


def test_demo_corpus_ingests_at_least_200_skills_over_12_categories(demo_workspace_template):
    root, report = demo_workspace_template
    from workbench.workspace import Workspace
    ws = Workspace.open(root)
    table = skill_store.skills_table(ws.db)
    assert len(table) >= 200
    assert report.found == len(table)
    real_categories = Counter(table["category"])
    assert len([c for c, n in real_categories.items() if n >= 5]) >= 12


def test_second_ingest_adds_nothing_and_status_agrees(demo_workspace):
    report = ingest(demo_workspace, [DEMO_CORPUS])
    assert report.new == [] and report.new_versions == []
    assert report.unchanged == report.found > 200
    status = workspace_status(demo_workspace.db)["skills"]
    table = skill_store.skills_table(demo_workspace.db)
    assert status["total"] == len(table)
    for st in ("accepted", "rejected", "pending"):
        assert status[st] == int((table["status"] == st).sum())


def test_changed_skill_becomes_new_version_of_same_skill(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    write_skill(corpus, "text/count-words", description="Count words in text files.")
    first = ingest(workspace, [corpus])
    assert first.new == ["text/count-words"]
    write_skill(corpus, "text/count-words", description="Count words and lines in text files.")
    second = ingest(workspace, [corpus])
    assert second.new == [] and second.new_versions == ["text/count-words"]
    table = skill_store.skills_table(workspace.db)
    assert len(table) == 1 and table.iloc[0]["version"] == 2
    assert table.iloc[0]["description"] == "Count words and lines in text files."
    detail = skill_store.skill_detail(workspace.db, table.iloc[0]["id"])
    assert detail["versions"]["version"].tolist() == [1, 2]


def test_git_checkout_records_commit(workspace, tmp_path):
    import subprocess
    repo = tmp_path / "repo"
    write_skill(repo, "skills/tar-backup", description="Back up a folder with tar.")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"],
                   check=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    ingest(workspace, [repo])
    sid = skill_store.skills_table(workspace.db).iloc[0]["id"]
    assert skill_store.skill_detail(workspace.db, sid)["source_ref"] == head


def _table(template):
    from workbench.workspace import Workspace
    return skill_store.skills_table(Workspace.open(template[0]).db)


@pytest.mark.parametrize("flaw", [f for f in FLAWS if f["flaw"] == "dedup.near_duplicate"],
                         ids=lambda f: f["path"])
def test_each_near_duplicate_pair_keeps_exactly_one(demo_workspace_template, flaw):
    """Which copy is 'the original' is not knowable; exactly one of the pair must be set aside."""
    table = _table(demo_workspace_template).set_index("skill_key")
    pair = [flaw["path"], flaw["duplicate_of"]]
    flagged = [k for k in pair if "dedup.near_duplicate" in list(table.loc[k, "flagged_rules"])]
    assert len(flagged) == 1, pair
    kept = next(k for k in pair if k not in flagged)
    assert table.loc[flagged[0], "status"] == "rejected" and table.loc[kept, "status"] == "accepted"
    from workbench.workspace import Workspace
    detail = skill_store.skill_detail(Workspace.open(demo_workspace_template[0]).db, table.loc[flagged[0], "id"])
    evidence = detail["verdicts"].set_index("rule").loc["dedup.near_duplicate", "evidence"]
    assert kept in evidence and "near-duplicate of" in evidence


@pytest.mark.parametrize("flaw", [f for f in FLAWS if not f["flaw"].startswith(("ingest.", "dedup."))],
                         ids=lambda f: f["path"])
def test_each_flawed_demo_skill_is_rejected_by_its_rule(demo_workspace_template, flaw):
    root, _ = demo_workspace_template
    from workbench.workspace import Workspace
    table = skill_store.skills_table(Workspace.open(root).db)
    row = table[table["skill_key"] == flaw["path"]]
    assert len(row) == 1, f"{flaw['path']} was not ingested"
    assert flaw["flaw"] in list(row.iloc[0]["flagged_rules"]), row.iloc[0]["flagged_rules"]
    assert row.iloc[0]["status"] == "rejected"


@pytest.mark.parametrize("flaw", [f for f in FLAWS if f["flaw"].startswith("ingest.")],
                         ids=lambda f: f["path"])
def test_each_broken_demo_package_is_reported_with_a_reason(demo_workspace_template, flaw):
    _, report = demo_workspace_template
    path = flaw["path"].split("#")[0]
    hits = [p for p in report.problems if path in p.file]
    assert hits, f"{flaw['path']} was not reported"
    assert all(p.reason for p in hits)


def test_good_demo_skills_are_mostly_accepted(demo_workspace_template):
    """The filters must not reject realistic good skills (false positives)."""
    root, _ = demo_workspace_template
    from workbench.workspace import Workspace
    table = skill_store.skills_table(Workspace.open(root).db)
    flawed = {f["path"] for f in FLAWS} | {f.get("duplicate_of") for f in FLAWS}
    good = table[~table["skill_key"].isin(flawed)]
    wrongly_rejected = good[good["status"] == "rejected"]
    assert len(wrongly_rejected) == 0, wrongly_rejected[["skill_key", "flagged_rules"]].to_string()
    assert (good["status"] == "accepted").mean() >= 0.95
