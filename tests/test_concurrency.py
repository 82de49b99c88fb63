"""While `workbench ingest` writes, the dashboard reads and a curation save succeeds."""
from __future__ import annotations

import subprocess
import sys
import time

from streamlit.testing.v1 import AppTest

from tests.helpers import write_skill
from pipeline.ingest.run import ingest
from workbench.models import CurationChange
from workbench.store import curation
from workbench.store import skills as skill_store
from workbench.store.status import workspace_status
from workbench.config import REPO_ROOT


def _big_corpus(root, n):
    verbs = ["sort", "count", "merge", "split", "archive", "audit", "filter", "index", "render", "compare"]
    for i in range(n):
        v = verbs[i % len(verbs)]
        write_skill(root, f"gen/{v}-{i}", description=f"{v.title()} batch {i} of files under /data/in{i}.",
                    steps=[f"Look at `/data/in{i}` with `ls -la /data/in{i}`.",
                           f"{v.title()} the entries {i} times and write `/data/out{i}.txt`.",
                           f"Check the result with `wc -l /data/out{i}.txt` (expect {i % 97} lines)."])


def test_dashboard_reads_and_save_succeeds_during_ingest(tmp_path, monkeypatch):
    ws_root = tmp_path / "ws"
    seed = tmp_path / "seed"
    write_skill(seed, "seed/keep-me", description="A skill curated during the ingest.")
    from workbench.workspace import Workspace
    ws = Workspace.open(ws_root)
    ingest(ws, [seed])
    sid = skill_store.skills_table(ws.db).iloc[0]["id"]
    corpus = tmp_path / "big"
    _big_corpus(corpus, 1200)

    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--workspace", str(ws_root), "ingest",
                             str(corpus), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    monkeypatch.setenv("WORKBENCH_HOME", str(ws_root))
    reads, seen_counts, saved, page_runs = 0, set(), None, 0
    try:
        while proc.poll() is None:
            seen_counts.add(workspace_status(ws.db)["skills"]["total"])
            reads += 1
            if saved is None and max(seen_counts) > 1:  # the ingest has committed a chunk
                saved = curation.save_changes(
                    ws.db, [CurationChange(skill_id=sid, field="status", new_value="rejected")], author="tester")
            if page_runs < 2:
                at = AppTest.from_file(str(REPO_ROOT / "pages" / "overview.py"), default_timeout=60).run()
                assert not at.exception, at.exception
                page_runs += 1
            time.sleep(0.05)
        out, errs = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, errs
    assert "lock" not in errs.lower()
    assert saved, "the ingest finished before a save could be tried; make the corpus bigger"
    assert reads > 3 and len(seen_counts) > 2, "reads did not interleave with the ingest's commits"
    assert page_runs == 2
    final = workspace_status(ws.db)["skills"]
    assert final["total"] == 1201
    assert skill_store.skill_detail(ws.db, sid)["status"] == "rejected"


def test_foreign_lock_holder_is_waited_out(workspace):
    """A program that ignores our gate (a duckdb shell, say) delays us but raises nothing."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
         "time.sleep(1.5); c.close()", str(workspace.db_path)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.monotonic()
    status = workspace_status(workspace.db)
    assert status["skills"]["total"] == 0
    assert time.monotonic() - t0 > 0.5  # it really had to wait
    holder.wait(timeout=10)
