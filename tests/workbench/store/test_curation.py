"""Curation events: batch save with author and time, undo, conflicts, validation."""
from __future__ import annotations

import pytest

from tests.helpers import write_skill
from pipeline.ingest.run import ingest
from workbench.models import CurationChange
from workbench.store import curation
from workbench.store import skills as skill_store
from workbench.store.status import workspace_status


@pytest.fixture
def two_skills(workspace, tmp_path):
    corpus = tmp_path / "c"
    write_skill(corpus, "a/sort-lines", description="Sort lines of a text file.",
                steps=["Sort it with `sort in.txt > out.txt`.", "Check with `head out.txt`."])
    write_skill(corpus, "b/count-words", description="Count words with wc.",
                steps=["Run `wc -w in.txt`.", "Write the number to count.txt."])
    ingest(workspace, [corpus])
    t = skill_store.skills_table(workspace.db).set_index("name")
    return workspace, t.loc["sort-lines", "id"], t.loc["count-words", "id"]


def _status(ws, sid):
    return skill_store.skill_detail(ws.db, sid)["status"]


def test_batch_save_records_events_and_updates_counts(two_skills):
    ws, a, b = two_skills
    assert workspace_status(ws.db)["skills"]["accepted"] == 2
    batch = curation.save_changes(ws.db, [CurationChange(skill_id=a, field="status", new_value="rejected"),
                                          CurationChange(skill_id=b, field="category", new_value="log-analysis"),
                                          CurationChange(skill_id=b, field="description", new_value="Word count.")],
                                  author="ada")
    assert batch
    assert _status(ws, a) == "rejected"
    d = skill_store.skill_detail(ws.db, b)
    assert d["category"] == "log-analysis" and d["description"] == "Word count." and d["curated"]
    counts = workspace_status(ws.db)["skills"]
    assert counts == {"total": 2, "accepted": 1, "rejected": 1, "pending": 0}
    hist = curation.recent_batches(ws.db)
    assert hist.iloc[0]["author"] == "ada" and hist.iloc[0]["changes"] == 3 and hist.iloc[0]["at"] is not None


def test_undo_restores_parsed_values_and_is_itself_an_event(two_skills):
    ws, a, b = two_skills
    batch = curation.save_changes(ws.db, [CurationChange(skill_id=a, field="status", new_value="rejected"),
                                          CurationChange(skill_id=b, field="name", new_value="wc-words")],
                                  author="ada")
    undo = curation.undo_batch(ws.db, batch, author="bob")
    assert _status(ws, a) == "accepted"
    assert skill_store.skill_detail(ws.db, b)["name"] == "count-words"
    hist = curation.recent_batches(ws.db).set_index("batch_id")
    # the history names the value an undo restores (the browser walk read "status → (parsed value)")
    assert "(parsed value)" not in hist.loc[undo, "summary"]
    assert "sort-lines: status → accepted (filters' verdict)" in hist.loc[undo, "summary"]
    assert "count-words: name → count-words (as parsed)" in hist.loc[undo, "summary"]
    assert bool(hist.loc[batch, "undone"]) and hist.loc[undo, "undoes_batch"] == batch
    assert hist.loc[undo, "author"] == "bob"
    with pytest.raises(curation.CurationError, match="already undone"):
        curation.undo_batch(ws.db, batch, author="bob")
    # Undoing the undo re-applies the change.
    curation.undo_batch(ws.db, undo, author="bob")
    assert _status(ws, a) == "rejected"


def test_undo_refuses_to_lose_a_later_edit(two_skills):
    ws, a, _ = two_skills
    first = curation.save_changes(ws.db, [CurationChange(skill_id=a, field="status", new_value="rejected")], "ada")
    curation.save_changes(ws.db, [CurationChange(skill_id=a, field="status", new_value="pending")], "bob")
    with pytest.raises(curation.CurationError, match="changed again"):
        curation.undo_batch(ws.db, first, author="ada")
    assert _status(ws, a) == "pending"
    assert curation.last_undoable_batch(ws.db) != first


def test_invalid_changes_are_refused_before_anything_is_written(two_skills):
    ws, a, b = two_skills
    with pytest.raises(curation.CurationError, match="status must be"):
        curation.save_changes(ws.db, [CurationChange(skill_id=b, field="status", new_value="rejected"),
                                      CurationChange(skill_id=a, field="status", new_value="maybe")], "ada")
    with pytest.raises(curation.CurationError, match="cannot be edited"):
        curation.save_changes(ws.db, [CurationChange(skill_id=a, field="raw_text", new_value="x")], "ada")
    assert _status(ws, b) == "accepted"
    assert curation.recent_batches(ws.db).empty


def test_unchanged_values_make_no_event(two_skills):
    ws, a, _ = two_skills
    assert curation.save_changes(ws.db, [CurationChange(skill_id=a, field="status", new_value="accepted")],
                                 "ada") is None
    assert curation.recent_batches(ws.db).empty
