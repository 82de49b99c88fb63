"""The evolve driver end to end in real Docker on demo recipe tasks: planted pass rates pick the
operator (4/4 harder, 1/4 context switch, 0/4 easier), each variant is stored, verified and rolled
out by the real noisy-oracle, with its lineage row; a second round evolves the accepted variants;
a run killed mid-verification continues with resume, nothing made twice; bad input is refused
before anything is recorded."""
import pytest

from pipeline.evolve.models import generation
from pipeline.evolve.run import run_evolve
from workbench.store import lineage as store
from workbench.store import rollouts as rollout_store
from workbench.store import tasks as task_store
from tests.pipeline.evolve.recipe_tasks import (KEEP_P, first_with, plant_rollouts, recipe_template,  # noqa: F401
                                                recipe_ws)

pytestmark = pytest.mark.docker


def _three(ws, ids):
    """(harder parent, context-switch parent, easier parent) with pass rates planted to choose them."""
    hard = first_with(ws, ids, "harder")
    easy = first_with(ws, ids, "easier", exclude=(hard,))
    switch = first_with(ws, ids, "context_switch", exclude=(hard, easy))
    for t, passed in ((hard, 4), (switch, 1), (easy, 0)):
        plant_rollouts(ws, t, passed, 4)
    return hard, switch, easy


def _variant_rollouts(ws, ids):
    frame = rollout_store.rollouts_frame(ws.db)
    return frame[frame.task_id.isin(ids)]


def test_a_round_makes_all_three_kinds_verified_and_rolled_out(recipe_ws, engine):
    ws, ids = recipe_ws
    hard, switch, easy = _three(ws, ids)
    seen = []
    report = run_evolve(ws, task_ids=[hard, switch, easy], rounds=1, k=2, keep_p=KEEP_P, engine=engine,
                        progress=seen.append)
    assert report.status == "done" and report.rounds_done == 1, report.as_dict()
    assert sorted(report.variants) == sorted([f"{hard}__d1", f"{switch}__b1", f"{easy}__e1"])
    assert (report.made, report.accepted) == (3, 3)
    lin = store.lineage_frame(ws.db, report.run_id).set_index("task_id")
    assert lin.loc[f"{hard}__d1", "operator"] == "harder" and lin.loc[f"{hard}__d1", "parent_pass_rate"] == 1.0
    assert lin.loc[f"{switch}__b1", "parent_pass_rate"] == 0.25 and lin.loc[f"{easy}__e1", "parent_rollouts"] == 4
    assert set(lin["status"]) == {"made"} and set(lin["verdict"]) == {"accepted"} and set(lin["round"]) == {1}
    assert (lin.loc[f"{hard}__d1", "n_steps"] == lin.loc[f"{hard}__d1", "parent_n_steps"] + 1)
    assert (lin.loc[f"{easy}__e1", "n_steps"] == lin.loc[f"{easy}__e1", "parent_n_steps"] - 1)
    assert all(lin["change"].str.len() > 10)
    rolled = _variant_rollouts(ws, report.variants)
    assert len(rolled) == 6 and set(rolled.agent) == {"noisy-oracle"} and rolled.agent_label.str.contains("p=0.8").all()
    rows = {r.operator: r for r in report.rows}
    assert set(rows) == {"harder", "context_switch", "easier"}
    assert rows["harder"].rate_before == 1.0 and rows["easier"].rate_before == 0.0
    assert all(r.rate_after is not None for r in report.rows)
    assert {p["phase"] for p in seen} >= {"rates", "make", "verify", "variant rollouts"}
    run = store.get_run(ws.db, report.run_id)
    assert run["status"] == "done" and run["rounds_done"] == 1 and run["params"]["progress"]["round"] == 1
    assert run["params"]["task_ids"] == [hard, switch, easy] and run["params"]["keep_p"] == KEEP_P


def test_a_killed_run_resumes_and_a_second_round_evolves_the_variants(recipe_ws, engine):
    ws, ids = recipe_ws
    hard, switch, easy = _three(ws, ids)

    def kill_at_verify(p):
        if p["phase"] == "verify" and p["done"] == 1:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run_evolve(ws, task_ids=[hard, easy], rounds=2, k=1, keep_p=KEEP_P, engine=engine, run_id="evolve-kill",
                   progress=kill_at_verify)
    run = store.get_run(ws.db, "evolve-kill")
    assert run["status"] == "cancelled" and "--resume evolve-kill" in run["message"]
    verdicts = task_store.tasks_frame(ws.db).set_index("task_id")["verdict"]
    assert sorted(verdicts[[f"{hard}__d1", f"{easy}__e1"]]) == ["accepted", "pending"]   # one verified, one cut short
    done_before = next(v for v in (f"{hard}__d1", f"{easy}__e1") if verdicts[v] == "accepted")
    created = store.get_lineage(ws.db, done_before)["created_at"]

    report = run_evolve(ws, resume=True, run_id="evolve-kill", engine=engine)
    assert report.status == "done" and report.rounds_done == 2, report.as_dict()
    assert report.reused == 1                          # the variant verified before the kill is not made again
    assert store.get_lineage(ws.db, done_before)["created_at"] == created
    assert task_store.task_verdict(ws.db, f"{hard}__d1") == task_store.task_verdict(ws.db, f"{easy}__e1") == "accepted"
    lin = store.lineage_frame(ws.db, "evolve-kill")
    second = lin[lin["round"] == 2]
    assert len(second) >= 1 and all(generation(t) == 2 for t in second.task_id)
    assert set(second.parent_id) <= {f"{hard}__d1", f"{easy}__e1"}
    n_rollouts = len(rollout_store.rollouts_frame(ws.db))
    again = run_evolve(ws, resume=True, run_id="evolve-kill", engine=engine)
    made = int((lin.status == "made").sum())
    assert again.reused == made and len(rollout_store.rollouts_frame(ws.db)) == n_rollouts   # nothing twice


def test_bad_input_is_refused_before_anything_is_recorded(recipe_ws, engine):
    ws, ids = recipe_ws
    for kwargs, message in (
        ({"task_ids": ["nope"]}, "unknown task id"),
        ({"task_ids": ids[:1], "rounds": 0}, "--rounds must be at least 1"),
        ({"task_ids": ids[:1], "k": 0}, "-k 0 but no noisy-oracle rollouts yet for"),
        ({"task_ids": ids[:1], "k": 0, "rounds": 2}, "need rollouts for the next round"),
        ({"task_ids": ids[:1], "agent": "oracle", "keep_p": 0.5}, "--p is noisy-oracle's"),
        ({"task_ids": []}, "no tasks given"),
        ({"resume": True, "run_id": "evolve-none"}, "nothing to resume"),
    ):
        with pytest.raises(ValueError, match=message):
            run_evolve(ws, engine=engine, **kwargs)
    with ws.db.write() as con:
        con.execute("UPDATE tasks SET verdict = 'rejected' WHERE task_id = ?", [ids[0]])
    with pytest.raises(ValueError, match=f"only accepted tasks evolve; not accepted .*{ids[0]} \\(rejected\\)"):
        run_evolve(ws, task_ids=ids[:2], engine=engine)
    assert store.evolve_runs_frame(ws.db).empty and store.lineage_frame(ws.db).empty
