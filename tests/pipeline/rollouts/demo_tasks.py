"""A workspace with verified, accepted demo tasks (offline synthesis in real Docker, once per
test module that imports the fixtures); each test gets its own copy."""
from __future__ import annotations

import shutil
import uuid

import pytest

from pipeline.synth.batch import run_synth
from workbench.store import tasks as task_store
from workbench.workspace import Workspace


@pytest.fixture(scope="module")
def tasks_template(graph_workspace_template, tmp_path_factory):
    """(workspace root, two accepted task ids, both with at least two solution steps)."""
    root = tmp_path_factory.mktemp("rollouts") / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    report = run_synth(ws, n_paths=3, seed=1, concurrency=2)
    accepted = task_store.accepted_tasks(ws.db)
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    ids = [t for t in accepted.task_id if frame.loc[t, "n_steps"] >= 2][:2]
    assert len(ids) == 2, report.as_dict()
    return root, ids


@pytest.fixture
def tasks_ws(tasks_template, tmp_path):
    src, ids = tasks_template
    dst = tmp_path / "ws"
    shutil.copytree(src, dst)
    return Workspace.open(dst), list(ids)


def touch_environment(ws: Workspace, task_id: str) -> str:
    """Give a task an environment no image has yet (a unique comment in its Dockerfile), so a
    batch must build it; returns the mark (the image is named by the new content hash)."""
    mark = f"# rollout-test {uuid.uuid4().hex}"
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    dockerfile = ws.root / frame.loc[task_id, "bundle_dir"] / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + f"\n{mark}\n")
    return mark
