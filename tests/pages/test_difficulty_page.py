"""The Difficulty page through AppTest, over the rollouts fixture (tests/pages/rollouts_fixture.py)."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.pages.rollouts_fixture import PLAN, UNSOLVED_TASK, make_rollouts_fixture
from workbench.config import REPO_ROOT
from workbench.store import rollouts as ro_store


@pytest.fixture
def rollouts_ws(graph_workspace):
    return graph_workspace, make_rollouts_fixture(graph_workspace)


def test_the_fixture_stores_every_planned_rollout_with_its_files(rollouts_ws):
    ws, fx = rollouts_ws
    frame = ro_store.rollouts_frame(ws.db)
    assert len(frame) == sum(len(v) for v in PLAN.values()) == len(fx.records)
    assert not frame[frame["task_id"] == UNSOLVED_TASK]["passed"].any()
    assert set(frame["sampler"]) == {"random-walk", "inverse-frequency"}
    tests = ro_store.test_outcomes(ws.db)
    assert len(tests) == sum(len(t) for t in fx.tests.values())
    for rec in fx.records[::7]:
        folder = ws.root / rec["folder"]
        assert json.loads((folder / "result.json").read_text())["rollout_id"] == rec["rollout_id"]
        assert (folder / "recording.cast").exists() == (rec["agent"] == "terminus-2")
        harbor = REPO_ROOT / ".harbor-venv" / "bin" / "python"
        if harbor.exists():
            done = subprocess.run([str(harbor), "-m", "harbor.utils.trajectory_validator",
                                   str(folder / "trajectory.json")], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr

