"""An evolve round on the local Ray cluster of the test suite (a head and a second node process,
each with one `docker` slot): the variant is verified and rolled out as Ray tasks, the driver alone
writes, and the stored variant is the one the operator makes locally (same bytes)."""
import pytest

from pipeline.evolve.offline_operator import OfflineOperator
from pipeline.evolve.run import run_evolve
from workbench.store import lineage as store
from workbench.store import rollouts as rollout_store
from workbench.store import tasks as task_store
from tests.pipeline.evolve.recipe_tasks import KEEP_P, parent, plant_rollouts, recipe_template, recipe_ws  # noqa: F401
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_an_easier_round_on_ray(recipe_ws, ray_cluster, engine):
    ws, ids = recipe_ws
    two = next(t for t in ids if len(parent(ws, t).record["recipes"]) == 2)
    plant_rollouts(ws, two, 0, 4)
    report = run_evolve(ws, task_ids=[two], k=1, keep_p=KEEP_P, engine=engine, executor="ray",
                        ray_address=ray_cluster.address)
    assert report.status == "done" and (report.made, report.accepted) == (1, 1), report.as_dict()
    vid = f"{two}__e1"
    local = OfflineOperator(ws).make(parent(ws, two, 0.0), "easier", 1)
    stored = task_store.tasks_frame(ws.db).set_index("task_id").loc[vid]
    assert stored["bundle_hash"] == local.bundle.content_hash() and stored["verdict"] == "accepted"
    rolled = rollout_store.rollouts_frame(ws.db)
    assert len(rolled[rolled.task_id == vid]) == 1
    assert store.get_run(ws.db, report.run_id)["params"]["executor"] == "ray"
