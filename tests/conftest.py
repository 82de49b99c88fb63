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
