"""The issue's bar, end to end: `workbench synth --paths 20` on the demo workspace accepts at
least 90 % of the sampled paths, and every accepted task, exported, passes Harbor's oracle
agent and fails its no-op agent."""
import json
import subprocess

import pytest

from pipeline.export.harbor_runner import ensure_harbor, run_harbor_job
from tests.helpers import cli
from workbench.store import tasks as store

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_synth_20_then_harbor_oracle_and_nop(graph_workspace, tmp_path):
    ensure_harbor()
    ws = graph_workspace
    r = cli("synth", "--workspace", str(ws.root), "--paths", "20", "--concurrency", "2", "--json", timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["sampled"] == 20 and report["accepted"] >= 18, report

    out = tmp_path / "harbor-tasks"
    r = cli("export", "harbor", str(out), "--workspace", str(ws.root), "--json")
    assert r.returncode == 0, r.stderr
    accepted = store.accepted_tasks(ws.db)
    folders = sorted(p.name for p in out.iterdir() if (p / "task.toml").exists())
    assert len(folders) == len(accepted) >= 18

    job = run_harbor_job(out, ["oracle", "nop"], n_concurrent=4, jobs_dir=tmp_path / "jobs", timeout_s=900)
    oracle, nop = job.rewards("oracle"), job.rewards("nop")
    assert job.errors() == {}, job.errors()
    assert {t: oracle[t] for t in folders} == {t: 1.0 for t in folders}
    assert {t: nop[t] for t in folders} == {t: 0.0 for t in folders}
    left = subprocess.run(["docker", "ps", "-a", "-q", "--filter", "label=com.docker.compose.project"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert left == []
