"""Shared fixtures: throwaway workspaces and small corpora written on the fly."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.ingest.run import ingest
from workbench.config import DEMO_CORPUS
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


@pytest.fixture(scope="session", autouse=True)
def no_sandbox_container_outlives_the_suite():
    """After the whole run, no container made by the sandbox may be left on the engine."""
    yield
    from workbench.sandbox.engine import Engine
    left = Engine().orphaned_containers()
    assert not left, f"sandbox containers left after the suite: {[c['Names'] for c in left]}"
