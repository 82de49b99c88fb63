"""The suite's own Docker handling (tests/conftest.py), run as pytest subprocesses: docker
tests skip with a reason only where no engine answers, and the leftover check counts only
the containers of its own run."""
import os
import re
import subprocess
import sys

import docker.errors
import pytest

from workbench.config import REPO_ROOT

PYTEST = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"]
LEAK = """
import os
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import LABEL, SESSION_ENV, SESSION_LABEL, Engine

def test_leaves_a_container():
    c = Engine(sweep=False).client.containers.create(
        base_image_name(), ["sleep", "120"], auto_remove=True,
        labels={LABEL: "1", SESSION_LABEL: os.environ[SESSION_ENV], "e2.leak": "1"})
    c.start()
"""
PASSES = "def test_nothing():\n    assert True\n"


def _pytest(args, tmp_path, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("CI", "DOCKER_HOST")}
    full.update(env)
    return subprocess.run(PYTEST + args, cwd=REPO_ROOT, env=full, capture_output=True, text=True, timeout=300)


def test_docker_tests_skip_with_a_reason_where_no_engine_answers(tmp_path):
    dead = f"unix://{tmp_path}/no-engine.sock"
    r = _pytest(["tests/workbench/sandbox/test_engine.py", "tests/workbench/sandbox/test_task_toml.py"], tmp_path,
                DOCKER_HOST=dead)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out                             # no teardown error either
    assert "SKIPPED" in out and "no Docker engine on this machine: no Docker engine answers" in out
    assert re.search(r"\d+ passed, 7 skipped in", out) and "ERROR" not in out   # the Docker tests of test_engine.py


def test_on_ci_a_missing_engine_is_an_error_not_a_skip(tmp_path):
    r = _pytest(["tests/workbench/sandbox/test_engine.py"], tmp_path, DOCKER_HOST=f"unix://{tmp_path}/x.sock", CI="1")
    assert r.returncode != 0 and "CI is set but no Docker engine answers" in r.stdout + r.stderr


@pytest.mark.docker
def test_with_an_engine_no_docker_test_is_skipped(tmp_path):
    r = _pytest(["tests/workbench/sandbox/test_lifetime.py::test_the_next_command_sweeps_what_a_defeated_keeper_left"],
                tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout and "skipped" not in r.stdout, r.stdout + r.stderr


@pytest.mark.docker
def test_leftover_check_counts_only_this_runs_containers(tmp_path):
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import LABEL, Engine
    (tmp_path / "test_passes.py").write_text(PASSES)
    (tmp_path / "test_leak.py").write_text(LEAK)
    plugin = ["-c", "pyproject.toml", "--rootdir", ".", "-p", "tests.conftest"]
    engine = Engine(sweep=False)
    # Another process's work on the same engine: a build step's container has the image's
    # label and no owner; it is not this run's leftover.
    foreign = engine.client.containers.create(base_image_name(), ["sleep", "120"], labels={LABEL: "1"})
    foreign.start()
    try:
        clean = _pytest(plugin + [str(tmp_path / "test_passes.py")], tmp_path)
        assert clean.returncode == 0 and "1 passed" in clean.stdout, clean.stdout + clean.stderr
        leaky = _pytest(plugin + [str(tmp_path / "test_leak.py")], tmp_path)
        assert leaky.returncode != 0 and "sandbox containers left after the suite" in leaky.stdout, leaky.stdout
    finally:
        for c in [foreign] + engine.client.containers.list(all=True, filters={"label": "e2.leak=1"}):
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
