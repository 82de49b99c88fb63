"""Cached store reads: served from memory while the store is unchanged, read again after any
write — by the page itself or by another process."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
from streamlit.testing.v1 import AppTest

from pages import cached
from tests.pages.test_overview import _metrics
from workbench.config import REPO_ROOT
from workbench.models import CurationChange
from workbench.store import curation
from workbench.store import skills as skill_store

OVERVIEW = str(REPO_ROOT / "pages" / "overview.py")


def _counting_query():
    calls: list[str] = []

    def statuses(db, status):
        calls.append(status)
        with db.read() as con:
            return con.execute("SELECT count(*) AS n FROM skills_effective WHERE is_current AND status = ?",
                               [status]).df()
    return cached.store_query(statuses), calls


def _reject(ws, n: int) -> list[str]:
    table = skill_store.skills_table(ws.db)
    ids = table[table["status"] == "accepted"]["id"].head(n).tolist()
    curation.save_changes(ws.db, [CurationChange(skill_id=i, field="status", new_value="rejected") for i in ids],
                          author="t")
    return ids


def test_unchanged_store_is_not_queried_again(demo_workspace):
    query, calls = _counting_query()
    first = query(demo_workspace, "accepted")
    again = query(demo_workspace, "accepted")
    assert calls == ["accepted"]
    pd.testing.assert_frame_equal(first, again)
    query(demo_workspace, "rejected")  # other arguments, other entry
    assert calls == ["accepted", "rejected"]


def test_what_a_caller_does_to_a_result_leaves_the_cache_alone(demo_workspace):
    query, calls = _counting_query()
    first = query(demo_workspace, "accepted")
    n = int(first["n"].iloc[0])
    first.loc[0, "n"] = -1
    first["extra"] = 1
    again = query(demo_workspace, "accepted")
    assert int(again["n"].iloc[0]) == n and "extra" not in again and calls == ["accepted"]


def test_a_write_invalidates_the_cache(demo_workspace):
    query, calls = _counting_query()
    before = int(query(demo_workspace, "accepted")["n"].iloc[0])
    _reject(demo_workspace, 2)
    after = int(query(demo_workspace, "accepted")["n"].iloc[0])
    assert after == before - 2 and calls == ["accepted", "accepted"]


def test_a_write_by_another_process_invalidates_the_cache(demo_workspace):
    query, _ = _counting_query()
    before = int(query(demo_workspace, "accepted")["n"].iloc[0])
    code = ("import sys; from workbench.workspace import Workspace; from tests.pages.test_cached import _reject; "
            "_reject(Workspace.open(sys.argv[1]), 1)")
    subprocess.run([sys.executable, "-c", code, str(demo_workspace.root)], cwd=REPO_ROOT, check=True)
    assert int(query(demo_workspace, "accepted")["n"].iloc[0]) == before - 1


def test_an_edit_shows_on_the_next_render_and_in_a_new_session(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    at = AppTest.from_file(OVERVIEW, default_timeout=60).run()
    assert not at.exception
    before = _metrics(at)
    assert _metrics(at.run()) == before  # served from the cache: same figures
    _reject(demo_workspace, 3)
    assert _metrics(at.run())["Accepted"] == before["Accepted"] - 3
    fresh = AppTest.from_file(OVERVIEW, default_timeout=60).run()  # another browser tab
    assert _metrics(fresh)["Rejected"] == before["Rejected"] + 3
