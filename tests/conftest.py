"""Shared fixtures: throwaway workspaces and small corpora written on the fly."""
from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from pipeline.ingest.run import ingest
from workbench.config import DEMO_CORPUS
from workbench.sandbox.engine import SESSION_ENV, Engine, SandboxError, connect
from workbench.workspace import Workspace


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.open(tmp_path / "ws")


@pytest.fixture(scope="session")
def demo_workspace_template(tmp_path_factory) -> tuple[Path, object]:
    """The bundled corpus ingested once per test session; copy it before changing it."""
    root = tmp_path_factory.mktemp("demo") / "ws"
    ws = Workspace.open(root)
    report = ingest(ws, [DEMO_CORPUS])
    return root, report


@pytest.fixture
def demo_workspace(demo_workspace_template, tmp_path) -> Workspace:
    src, _ = demo_workspace_template
    dst = tmp_path / "demo-ws"
    shutil.copytree(src, dst)
    return Workspace.open(dst)


@pytest.fixture(scope="session")
def graph_workspace_template(demo_workspace_template, tmp_path_factory) -> Path:
    """The demo workspace with offline scenarios, a built graph and two sample batches."""
    from pipeline.graph.build import BuildOptions, build_graph
    from pipeline.graph.sample_run import sample
    from pipeline.scenarios.run import infer_offline
    src, _ = demo_workspace_template
    root = tmp_path_factory.mktemp("graph") / "ws"
    shutil.copytree(src, root)
    ws = Workspace.open(root)
    infer_offline(ws)
    build_graph(ws, BuildOptions())
    sample(ws, "inverse-frequency", 200, seed=1)
    sample(ws, "random-walk", 200, seed=1)
    return root


@pytest.fixture
def graph_workspace(graph_workspace_template, tmp_path) -> Workspace:
    dst = tmp_path / "graph-ws"
    shutil.copytree(graph_workspace_template, dst)
    return Workspace.open(dst)


@pytest.fixture(scope="session")
def built_demo_workspace(graph_workspace_template, tmp_path_factory) -> Path:
    """The whole demo as `workbench demo` builds it (tasks, LLM-built tasks, rollouts, one round of
    evolution), built once per session with no LLM endpoint or key in the environment; returns
    its root — copy it before changing it. Needs Docker (~15 min on the loaded 2-core machine),
    so only tests marked `docker` (with a timeout that covers the build) use it."""
    from workbench.demo_build import ensure_demo
    root = tmp_path_factory.mktemp("built-demo") / "ws"
    shutil.copytree(graph_workspace_template, root)
    with pytest.MonkeyPatch.context() as mp:
        for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "OPENAI_API_KEY"):
            mp.delenv(var, raising=False)
        ensure_demo(str(root))
    return root


# ------------------------------------------------------------ the Docker engine
# Every container this run makes (here or in a subprocess) carries this run's session label,
# so the leftover check below counts only this run's containers, not those of another
# process (a build, another suite) on the same engine.
_SESSION = f"pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}"
os.environ[SESSION_ENV] = _SESSION
# The red-team probe adds six trials to every verification whose oracle passes (a few seconds
# per task, ~10 minutes over the suite): off here, and on, explicitly, in the tests of the probe
# (tests/pipeline/verify/test_red_team.py and the batch that runs it end to end).
os.environ.setdefault("WORKBENCH_RED_TEAM", "0")
_NO_ENGINE: list[str] = []     # why no engine answers, once probed and found missing


def pytest_collection_modifyitems(config, items):
    """Tests marked `docker` are skipped, with the reason, only where no engine answers at
    all; on CI (where there always is one) a missing engine is an error, not a skip."""
    docker_items = [i for i in items if i.get_closest_marker("docker")]
    if not docker_items:
        return
    try:
        connect(timeout_s=10).close()
        return
    except SandboxError as exc:
        reason = str(exc)
    if os.environ.get("CI"):
        raise pytest.UsageError(f"CI is set but no Docker engine answers, so the docker tests cannot run: {reason}")
    _NO_ENGINE.append(reason)
    skip = pytest.mark.skip(reason=f"no Docker engine on this machine: {reason}")
    for item in docker_items:
        item.add_marker(skip)


@pytest.fixture(scope="module")
def engine():
    """A real Docker engine shared by a module's tests; none of their containers may outlive them."""
    e = Engine()
    yield e
    assert e.orphaned_containers() == []


@pytest.fixture(scope="session", autouse=True)
def no_sandbox_container_outlives_the_suite():
    """After the whole run, no container made by this run may be left on the engine (those
    being removed get a moment to go)."""
    yield
    if _NO_ENGINE:
        return    # nothing could have been made
    try:
        engine = Engine(connect(timeout_s=10), sweep=False)   # a sweep would hide the leftovers looked for
    except SandboxError:
        return    # no engine answers (and none did for this run's tests)
    deadline = time.monotonic() + 15
    while (left := engine.session_containers(_SESSION)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"sandbox containers left after the suite: {[c['Names'] for c in left]}"


@pytest.fixture(scope="session")
def dev_corpus() -> Path:
    """The real public skill corpus (skips with a reason when it is not on this machine)."""
    from tests.dev_corpus import require_dev_corpus
    return require_dev_corpus()


@pytest.fixture(scope="session")
def dev_workspace_template(dev_corpus, tmp_path_factory) -> Path:
    """The dev corpus ingested (and filtered) once per session; copy it before changing it."""
    root = tmp_path_factory.mktemp("dev") / "ws"
    ws = Workspace.open(root)
    ingest(ws, [dev_corpus])
    return root


@pytest.fixture(scope="session")
def dev_graph_template(dev_workspace_template, tmp_path_factory) -> Path:
    """The dev corpus with offline scenarios and a graph built as `workbench graph build` does
    (once per session); copy it before changing it."""
    from pipeline.graph.build import BuildOptions, build_graph
    from pipeline.scenarios.run import infer_offline
    root = tmp_path_factory.mktemp("dev-graph") / "ws"
    shutil.copytree(dev_workspace_template, root)
    ws = Workspace.open(root)
    infer_offline(ws)
    build_graph(ws, BuildOptions())
    return root
