"""`workbench synth --provider llm` from the command line against `workbench replay-synthesis`
in another process, as a user without an API key tries it: real subprocesses, the real client
over HTTP, real Docker builds and checks, on a copy of the graph workspace."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

import pytest

from pipeline.synth.llm.scripted import FAULTS
from pipeline.synth.llm.scripted_faults import REPLAY_MODEL, ROUTE_FAULTS
from tests.helpers import cli
from workbench.store import repairs
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

pytestmark = pytest.mark.docker

SYNTH_TIMEOUT_S = 1500      # 10 paths, each built, run, verified and repaired in Docker on a shared machine


class ReplayCommand:
    """`workbench replay-synthesis` in a subprocess: the environment it prints, and the faults
    it prints per sample batch (read as they come, by a thread)."""

    def __init__(self, root, *args: str):
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith("WORKBENCH_LLM") and k not in ("OPENAI_API_KEY", "WORKBENCH_HOME")}
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--workspace", str(root),
                                      "replay-synthesis", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean)
        self.lines: list[str] = []
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C stops the server"):
                break
        else:
            raise AssertionError(f"replay-synthesis ended: {self.lines} {self.proc.stderr.read()}")
        self.env = dict(re.findall(r"^  export (WORKBENCH_LLM_\w+)=(\S+)$", "\n".join(self.lines), re.M))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        return self.proc.returncode

    def faults_of(self, batch_id: str) -> dict[str, str]:
        """{path_id: fault} as printed for a sample batch."""
        lines, out = list(self.lines), {}
        at = next(i for i, x in enumerate(lines) if x.startswith(f"faults for sample batch {batch_id} "))
        for line in lines[at + 1:]:
            if not line.startswith("  "):
                break
            pid, fault = line.split()
            out[pid] = fault
        return out


def _run_paths(ws: Workspace, run_id: str) -> list[dict]:
    with ws.db.read() as con:
        return con.execute("SELECT r.path_id, r.task_id, r.stage, r.error, t.verdict, t.repairs, t.cost_usd, "
                           "t.provider FROM run_tasks r LEFT JOIN tasks t USING (task_id) WHERE r.run_id = ? "
                           "ORDER BY r.path_id", [run_id]).df().to_dict("records")


@pytest.fixture(scope="module")
def llm_run(graph_workspace_template, tmp_path_factory):
    """One `synth --provider llm --paths 10` run against `replay-synthesis --faults routes`."""
    root = tmp_path_factory.mktemp("cli-llm") / "ws"
    shutil.copytree(graph_workspace_template, root)
    replay = ReplayCommand(root, "--faults", "routes", "--demo-price")
    try:
        r = cli("--workspace", str(root), "synth", "--provider", "llm", "--paths", "10", "--concurrency", "4",
                "--seed", "3", "--json", env=replay.env, timeout=SYNTH_TIMEOUT_S)
        yield Workspace.open(root), replay, r
    finally:
        replay.stop()


def test_the_replay_command_prints_the_environment_for_synth(llm_run):
    _, replay, _ = llm_run
    assert replay.env == {"WORKBENCH_LLM_BASE_URL": replay.env["WORKBENCH_LLM_BASE_URL"],
                          "WORKBENCH_LLM_MODEL": REPLAY_MODEL}
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", replay.env["WORKBENCH_LLM_BASE_URL"])
    assert any("test double" in line for line in replay.lines)
    assert any("synth --provider llm" in line for line in replay.lines)


def test_tasks_are_built_repaired_through_every_route_and_verified(llm_run):
    ws, replay, r = llm_run
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout)
    assert report["status"] == "finished" and report["provider"] == "llm" and report["cost_usd"] > 0
    run = task_store.get_run(ws.db, report["run_id"])
    faults = replay.faults_of(run["batch_id"])
    assert list(faults.values()) == list(ROUTE_FAULTS)     # every route got a path of the run's own batch
    paths = {p["path_id"]: p for p in _run_paths(ws, report["run_id"])}
    for pid, fault in faults.items():
        p = paths[pid]
        assert p["task_id"] and p["provider"] == "llm", (fault, p)
        attempts = repairs.attempts_for(ws.db, p["task_id"])
        fixed = attempts[attempts["artifact"] == FAULTS[fault]]
        assert len(fixed) >= 1, (fault, attempts[["artifact", "check_name", "reason"]].to_dict("records"))
        assert (fixed["diff"].str.len() > 0).all() and (fixed["reason"].str.len() > 0).all(), fault
        assert p["repairs"] == len(attempts) and p["cost_usd"] > 0, (fault, p)
        if fault != "exhaust":
            assert p["verdict"] == "accepted", (fault, p)
            checks = task_store.checks_for(ws.db, p["task_id"])
            passed = set(checks.loc[checks["passed"].astype(bool), "check_name"])
            assert {"build", "noop", "oracle", "rubric", "judge"} <= passed, (fault, checks.to_dict("records"))
    clean = [p for pid, p in paths.items() if pid not in faults and p["task_id"]]
    assert clean and all(p["verdict"] == "accepted" and p["repairs"] == 0 for p in clean), clean
    assert report["accepted"] >= len(faults) - 1 + len(clean)


def test_a_task_that_exhausts_its_repairs_is_rejected_with_the_reason(llm_run):
    ws, replay, r = llm_run
    report = json.loads(r.stdout)
    faults = replay.faults_of(task_store.get_run(ws.db, report["run_id"])["batch_id"])
    pid = next(p for p, f in faults.items() if f == "exhaust")
    p = next(x for x in _run_paths(ws, report["run_id"]) if x["path_id"] == pid)
    assert p["verdict"] == "rejected" and report["rejected"] >= 1
    assert p["error"].startswith("repairs exhausted: tests still fails"), p["error"]
    assert "5 of 5 task repairs used" in p["error"]
    attempts = repairs.attempts_for(ws.db, p["task_id"])
    assert (attempts["artifact"] == "tests").sum() == 5


def test_a_tiny_budget_cancels_the_run_and_resume_finishes_it(llm_run):
    ws, replay, _ = llm_run
    root = str(ws.root)
    cut = cli("--workspace", root, "synth", "--provider", "llm", "--paths", "2", "--concurrency", "1",
              "--seed", "4", "--budget-usd", "0.0001", "--json", env=replay.env,
              timeout=SYNTH_TIMEOUT_S)
    assert cut.returncode == 3, cut.stderr[-3000:]
    report = json.loads(cut.stdout)
    assert report["status"] == "cancelled"
    message = task_store.get_run(ws.db, report["run_id"])["message"]
    assert message.startswith("budget of $0.0001 spent; resume to finish"), message
    assert report["accepted"] + report["rejected"] < 2
    done = cli("--workspace", root, "synth", "--resume", "--run-id", report["run_id"], "--json",
               env=replay.env, timeout=SYNTH_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    finished = json.loads(done.stdout)
    assert finished["run_id"] == report["run_id"] and finished["status"] == "finished"
    assert finished["provider"] == "llm" and finished["verified"] + finished["failed"] == 2
    assert replay.stop() == 0 and replay.lines[-1].startswith("stopped after ")
