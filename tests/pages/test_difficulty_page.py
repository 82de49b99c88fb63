"""The Difficulty page through AppTest, over the rollouts fixture (tests/pages/rollouts_fixture.py)."""
from __future__ import annotations

import json

import pytest

from tests.pages.rollouts_fixture import PLAN, UNSOLVED_TASK, make_rollouts_fixture
from pipeline.trajectories.atif import validate_with_harbor
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
    for rec in fx.records:
        folder = ws.root / rec["folder"]
        assert json.loads((folder / "result.json").read_text())["rollout_id"] == rec["rollout_id"]
        assert (folder / "recording.cast").exists() == (rec["agent"] == "terminus-2")
    # one trajectory of each agent config passes Harbor's own validator
    picked = {(r["agent"], r["model"], r["passed"], r["failure_class"]): r for r in fx.records}.values()
    assert validate_with_harbor([ws.root / r["folder"] / "trajectory.json" for r in picked]) == []

