"""Evolve runs launched the way the Evolution page does: the row exists at once, a detached
`workbench evolve` process takes it over, logs, and ends done with its lineage; bad parameters
are refused before anything starts."""
import pytest

from pipeline.evolve import jobs
from workbench.store import lineage as store
from tests.pipeline.evolve.recipe_tasks import parent, plant_rollouts, recipe_template, recipe_ws  # noqa: F401
from tests.waiting import wait_until


@pytest.mark.docker
def test_a_launched_run_is_listed_at_once_and_ends_done(recipe_ws):
    ws, ids = recipe_ws
    two = next(t for t in ids if len(parent(ws, t).record["recipes"]) == 2)
    plant_rollouts(ws, two, 0, 4)
    run_id = jobs.launch(ws, jobs.EvolveParams(task_ids=(two,), k=1, keep_p=0.8))
    run = store.get_run(ws.db, run_id)
    assert run is not None and run["status"] in ("pending", "running") and run["pid"]
    assert wait_until(lambda: store.get_run(ws.db, run_id)["status"] not in ("pending", "running"), 300), \
        jobs.log_tail(ws, run_id)
    final = store.get_run(ws.db, run_id)
    assert final["status"] == "done", (final, jobs.log_tail(ws, run_id))
    assert final["params"]["task_ids"] == [two] and final["params"]["progress"]["phase"] == "variant rollouts"
    log = jobs.log_tail(ws, run_id)
    assert log.splitlines()[0].startswith(f"$ workbench evolve --workspace {ws.root} --tasks {two}")
    assert "progress round=1 phase=make" in log
    assert store.get_lineage(ws.db, f"{two}__e1")["status"] == "made"
    assert not jobs.cancel(ws, run_id)                 # nothing left to cancel


def test_bad_parameters_are_refused_before_anything_starts(workspace):
    for params, message in (
        (jobs.EvolveParams(rounds=0), "--rounds must be at least 1"),
        (jobs.EvolveParams(agent="claude"), "choose one of nop, oracle"),
        (jobs.EvolveParams(agent="oracle", keep_p=0.5), "--p is noisy-oracle's"),
        (jobs.EvolveParams(ray_address="auto"), "--ray-address 'auto' is only for --executor ray"),
        (jobs.EvolveParams(task_ids=("nope",)), "unknown task id"),
        (jobs.EvolveParams(), "no accepted tasks to evolve"),
    ):
        with pytest.raises(ValueError, match=message):
            jobs.launch(workspace, params)
    assert store.evolve_runs_frame(workspace.db).empty
