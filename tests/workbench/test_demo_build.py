"""The demo build: only what is missing, its progress in the status file, and what it lacks
(here: a machine with no Docker engine) said there."""
from __future__ import annotations

import subprocess

from workbench.demo_build import demo_todo, ensure_demo
from workbench.demo_status import new_status, read_status, write_status


def test_a_demo_without_docker_finishes_and_says_what_it_lacks(graph_workspace, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")   # no engine answers
    assert demo_todo(graph_workspace) == ["tasks"]
    ensure_demo(str(graph_workspace.root))
    status = read_status(graph_workspace.root)
    assert status.state == "done" and not status.running
    assert [(s.key, s.state) for s in status.stages] == [("tasks", "skipped")]
    assert "no Docker engine answers" in status.stage("tasks").detail
    assert len(status.missing) == 1 and "`workbench doctor`" in status.missing[0]


def test_an_ingest_cut_short_is_run_again(demo_workspace):
    assert "ingest" not in demo_todo(demo_workspace)
    dead = subprocess.Popen(["true"])
    dead.wait()
    status = new_status(["ingest", "scenarios"], demo_workspace.runs_dir / "demo-build.log")
    status.pid = dead.pid
    status.stage("ingest").state = "running"
    write_status(demo_workspace.root, status)
    assert read_status(demo_workspace.root).interrupted
    assert demo_todo(demo_workspace)[0] == "ingest"


def test_a_second_build_does_not_start_while_one_runs(demo_workspace):
    status = new_status(["scenarios"], demo_workspace.runs_dir / "demo-build.log")
    write_status(demo_workspace.root, status)   # this test's own pid: alive
    ensure_demo(str(demo_workspace.root))
    assert read_status(demo_workspace.root).started == status.started   # untouched
    assert "scenarios" in demo_todo(demo_workspace)


def test_a_failed_docker_set_up_is_said_with_the_end_of_its_log(graph_workspace, monkeypatch, tmp_path):
    """The real scripts/setup-docker.sh installs system packages and starts dockerd, so a
    stand-in that fails as it does on a machine without root runs here."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    script = tmp_path / "setup-docker.sh"
    script.write_text("echo checking docker\necho 'no Docker engine answers; start one' >&2\nexit 1\n")
    ensure_demo(str(graph_workspace.root), docker_setup=script)
    status = read_status(graph_workspace.root)
    assert status.state == "done"
    assert [(s.key, s.state) for s in status.stages] == [("docker", "failed"), ("tasks", "skipped")]
    docker = status.stage("docker").detail
    assert "Docker set-up failed (exit 1" in docker and "no Docker engine answers; start one" in docker
