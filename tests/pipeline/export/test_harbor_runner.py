"""Exported bundles under real Harbor (0.26.0) on the real Docker engine: the task loads as
a Harbor `Task`, scores 1.0 with the oracle agent and 0.0 with the no-op agent, a broken
environment is reported with its error, and nothing is left behind in Docker."""
from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from pipeline.export.harbor import export_harbor
from pipeline.export.harbor_runner import ensure_harbor, harbor_venv, load_task, load_tasks, run_harbor, run_harbor_job
from tests.pipeline.export.test_harbor_export import add_task, sum_task
from workbench.sandbox.base_image import base_image_name

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _docker_lines(*args: str) -> set[str]:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=60, check=True)
    return set(proc.stdout.split())


@pytest.fixture(scope="module")
def harbor():
    """Harbor's own virtual environment (installed here when missing) and the base image."""
    ensure_harbor()   # scripts/setup-harbor.sh: a no-op when .harbor-venv is up to date
    assert (harbor_venv() / "bin" / "harbor").exists()
    subprocess.run(["docker", "compose", "version"], check=True, capture_output=True, timeout=60)
    import docker

    from workbench.sandbox.base_image import bootstrap
    bootstrap(docker.from_env(), log=lambda _m: None)   # no-op when the base image exists
    assert _docker_lines("images", "-q", base_image_name())


# Every image built from this module's tasks carries this label (the last Dockerfile line),
# so leftovers are found without confusing them with what other processes build meanwhile.
RUN_LABEL = f"workbench.test.harbor={uuid.uuid4().hex[:12]}"


def task(name: str, **kw):
    extra = kw.pop("dockerfile_extra", "")
    return sum_task(name, dockerfile_extra=extra + f"LABEL {RUN_LABEL}\n", **kw)


def _stopped_build_containers(before: set[str]) -> set[str]:
    """Stopped containers of failed build steps (they run from untagged images)."""
    out = set()
    for cid in _docker_lines("ps", "-a", "-q", "--no-trunc", "--filter", "status=exited") - before:
        image = subprocess.run(["docker", "inspect", "--format", "{{.Image}}", cid], capture_output=True,
                               text=True).stdout.strip()
        tags = subprocess.run(["docker", "image", "inspect", "--format", "{{len .RepoTags}}", image],
                              capture_output=True, text=True).stdout.strip()
        if tags == "0":
            out.add(cid)
    return out


@pytest.fixture
def docker_snapshot(harbor):
    """Fail when a test leaves Harbor's compose containers, its images or build leftovers behind."""
    containers = _docker_lines("ps", "-a", "-q", "--no-trunc")
    yield
    compose = _docker_lines("ps", "-a", "-q", "--filter", "label=com.docker.compose.project")
    assert not compose, f"compose containers left behind: {compose}"
    names = _docker_lines("images", "--format", "{{.Repository}}")
    assert not [n for n in names if n.endswith("__env-main")], names
    ours = _docker_lines("images", "-a", "-q", "--filter", f"label={RUN_LABEL}")
    assert not ours, f"images of this test's tasks left behind: {ours}"
    stale = _stopped_build_containers(containers)
    assert not stale, f"stopped build containers left behind: {stale}"


def test_exported_task_loads_and_scores_oracle_1_nop_0(workspace, tmp_path, docker_snapshot):
    add_task(workspace, "t-sum", task("workbench/sum-numbers"), name="workbench/sum-numbers")
    add_task(workspace, "t-broken", task("workbench/broken-env", dockerfile_extra="RUN false\n"),
             name="workbench/broken-env")
    out = tmp_path / "dataset"
    report = export_harbor(workspace, out)
    assert sorted(report.slugs) == ["broken-env", "sum-numbers"]

    loaded = load_task(out / "sum-numbers")
    assert loaded.ok and loaded.message == "workbench/sum-numbers", loaded
    (tmp_path / "not-a-task").mkdir()
    bad = load_tasks([tmp_path / "not-a-task"])[0]
    assert not bad.ok and "task.toml" in bad.message

    job = run_harbor_job(out, ["oracle", "nop"], n_concurrent=4, jobs_dir=tmp_path / "jobs", timeout_s=240)

    assert job.returncode == 0, job.output[-2000:]
    assert job.rewards("oracle")["sum-numbers"] == 1.0
    assert job.rewards("nop")["sum-numbers"] == 0.0
    assert job.errors().keys() == {"broken-env"}
    assert job.rewards("oracle")["broken-env"] is None
    assert "RUN false" in job.errors("oracle")["broken-env"] or "non-zero code" in job.errors("oracle")["broken-env"]
    assert len(job.trials) == 4 and all(t.seconds is not None for t in job.trials)
    # result.json is where the figures come from (harbor run exits 0 even when trials error).
    trial = next(t for t in job.trials if t.task == "sum-numbers" and t.agent == "oracle")
    assert json.loads((trial.trial_dir / "result.json").read_text())["verifier_result"]["rewards"]["reward"] == 1.0


def test_run_harbor_on_a_single_task_folder(tmp_path, docker_snapshot):
    from workbench.sandbox.bundle import write_bundle
    folder = write_bundle(task("workbench/sum-single", numbers="10\n20\n"), tmp_path / "sum-single")

    rewards = run_harbor(folder, "oracle", n_concurrent=1, jobs_dir=tmp_path / "jobs", timeout_s=180)

    assert dict(rewards) == {"sum-single": 1.0}
    assert rewards.errors == {}


def test_a_run_past_its_time_limit_is_stopped_and_cleaned_up(tmp_path, docker_snapshot):
    from workbench.sandbox.bundle import write_bundle
    bundle = task("workbench/sum-slow")
    bundle.files["solution/solve.sh"] = b"#!/bin/bash\nsleep 300\n"
    write_bundle(bundle, tmp_path / "tasks" / "sum-slow")

    rewards = run_harbor(tmp_path / "tasks", "oracle", n_concurrent=1, jobs_dir=tmp_path / "jobs", timeout_s=10)

    assert rewards.job.timed_out
    assert dict(rewards) == {"sum-slow": None}
    assert "10 s limit" in rewards.errors["sum-slow"]


def test_timing_seconds_reads_a_harbor_timing_and_refuses_what_is_not_one():
    from pipeline.export.harbor_runner import timing_seconds
    assert timing_seconds({"started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:02.5Z"}) == 2.5
    assert timing_seconds({"started_at": "2026-01-01T00:00:00Z"}) is None
    assert timing_seconds({"started_at": "yesterday", "finished_at": "today"}) is None
    assert timing_seconds(None) is None and timing_seconds("garbage") is None
