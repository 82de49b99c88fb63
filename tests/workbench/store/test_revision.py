"""The store's data revision moves with every committed write, and only then."""
from __future__ import annotations

import duckdb
import pytest

from workbench.models import CurationChange
from workbench.store import curation, revision
from workbench.store import skills as skill_store


def test_reads_leave_the_revision_alone(demo_workspace):
    before = revision.current(demo_workspace.db_path)
    skill_store.skills_table(demo_workspace.db)
    with demo_workspace.db.read() as con:
        con.execute("SELECT count(*) FROM skills").fetchone()
    assert revision.current(demo_workspace.db_path) == before


def test_every_committed_write_gives_a_new_revision(demo_workspace):
    ids = skill_store.skills_table(demo_workspace.db)["id"].head(3).tolist()
    rev_file = revision.revision_path(demo_workspace.db_path)
    seen, tokens = {revision.current(demo_workspace.db_path)}, set()
    for sid in ids:  # writes in quick succession: each one must be told apart
        curation.save_changes(demo_workspace.db, [CurationChange(skill_id=sid, field="status",
                                                                 new_value="rejected")], author="t")
        seen.add(revision.current(demo_workspace.db_path))
        tokens.add(rev_file.read_text())
    assert len(seen) == len(ids) + 1
    # the token itself moves, not only the file times (which a coarse clock can repeat)
    assert len(tokens) == len(ids)


def test_a_rolled_back_write_keeps_the_revision(demo_workspace):
    before = revision.current(demo_workspace.db_path)
    with pytest.raises(RuntimeError):
        with demo_workspace.db.write() as con:
            con.execute("DELETE FROM skill_overrides")
            raise RuntimeError("boom")
    assert revision.current(demo_workspace.db_path) == before


def test_a_write_that_bypasses_the_gate_still_shows(demo_workspace):
    before = revision.current(demo_workspace.db_path)
    con = duckdb.connect(str(demo_workspace.db_path))  # say, a duckdb shell
    con.execute("DELETE FROM ingest_errors")
    con.close()
    assert revision.current(demo_workspace.db_path) != before


def test_an_unwritable_revision_file_does_not_fail_the_write(demo_workspace):
    rev = revision.revision_path(demo_workspace.db_path)
    rev.unlink(missing_ok=True)
    rev.mkdir()  # os.replace onto a directory fails
    sid = skill_store.skills_table(demo_workspace.db)["id"].iloc[0]
    before = revision.current(demo_workspace.db_path)
    curation.save_changes(demo_workspace.db, [CurationChange(skill_id=sid, field="status", new_value="rejected")],
                          author="t")
    assert skill_store.skills_table(demo_workspace.db).set_index("id").loc[sid, "status"] == "rejected"
    assert revision.current(demo_workspace.db_path) != before
