"""LLM-built tasks through Harbor: `run_synth(provider="llm")` against the replay server
(scripted replies) on three demo paths — one built right the first time with weighted tests
(our weighted runner), one whose Dockerfile was repaired, one whose tests were repaired —
then the accepted tasks exported and run by Harbor's oracle and nop agents: 1.0 and 0.0."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from pipeline.export.harbor import export_harbor
from pipeline.export.harbor_runner import ensure_harbor, run_harbor_job
from pipeline.synth.batch import run_synth
from pipeline.synth.llm.render import weights_of_test_sh
from pipeline.synth.llm.scripted import ScriptedSynthesis
from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
from tests.pipeline.synth.llm.demo_paths import batch_of, tool_paths
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name
from workbench.store import repairs
from workbench.store import tasks as store
from workbench.workspace import Workspace

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_llm_built_tasks_pass_harbor_oracle_and_fail_its_nop(graph_workspace_template, tmp_path, monkeypatch):
    ensure_harbor()
    root = tmp_path / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    clean, env_fix, tests_fix = tool_paths(ws, 3)
    scripted = ScriptedSynthesis(ws, {env_fix: "broken_dockerfile", tests_fix: "test_bug"},
                                 base_image=base_image_name(), weighted=[clean])
    with ReplayServer(latency_s=0.02) as srv:
        srv.add_rule(scripted.rule())
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv(SOLVE_TIMEOUT_ENV, "120")
        pids = [clean, env_fix, tests_fix]
        store.create_run(ws.db, "harbor-llm", "random-walk", 3, 0, "llm", 3, os.getpid())
        store.attach_paths(ws.db, "harbor-llm", batch_of(clean), pids)
        report = run_synth(ws, run_id="harbor-llm", provider="llm", concurrency=3)
    assert report.status == "finished" and report.accepted == 3, (report.as_dict(), store.run_failures(ws.db, "harbor-llm"))
    frame = store.tasks_frame(ws.db)
    accepted = frame[frame.verdict == "accepted"]
    assert set(accepted.provider) == {"llm"} and set(accepted.path_id) == set(pids)
    repaired = {r.path_id: set(repairs.attempts_for(ws.db, r.task_id).artifact) for r in accepted.itertuples()}
    assert repaired == {clean: set(), env_fix: {"environment"}, tests_fix: {"tests"}}

    out = tmp_path / "harbor-tasks"
    exported = export_harbor(ws, out)
    folders = sorted(p.name for p in out.iterdir() if (p / "task.toml").exists())
    assert len(folders) == 3, exported
    weighted = [f for f in folders if weights_of_test_sh((out / f / "tests" / "test.sh").read_text())]
    assert len(weighted) == 1                       # the clean path's weighted runner went along

    job = run_harbor_job(out, ["oracle", "nop"], n_concurrent=3, jobs_dir=tmp_path / "jobs", timeout_s=900)
    assert job.errors() == {}, job.errors()
    oracle, nop = job.rewards("oracle"), job.rewards("nop")
    assert {t: oracle[t] for t in folders} == {t: 1.0 for t in folders}
    assert {t: nop[t] for t in folders} == {t: 0.0 for t in folders}
    left = subprocess.run(["docker", "ps", "-a", "-q", "--filter", "label=com.docker.compose.project"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert left == []
