"""`workbench evolve`: bad arguments are refused with exit 2 before anything is recorded; in
real Docker an easier round prints its closing table (pass rate before → after) and its JSON,
and a run where no variant can be made exits 1, saying why on its lineage row."""
import json

import pytest

from pipeline.evolve.models import NoVariant
from pipeline.evolve.offline_operator import OfflineOperator
from workbench.cli import main
from workbench.store import lineage as store
from tests.pipeline.evolve.recipe_tasks import parent, plant_rollouts, recipe_template, recipe_ws  # noqa: F401


def _run(capsys, *argv):
    code = main(["evolve", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("argv, says", [
    ([], "say which tasks: --tasks ID… or --accepted"),
    (["--accepted", "--tasks", "t1"], "--tasks and --accepted exclude each other"),
    (["--accepted", "--rounds", "0"], "--rounds must be at least 1, got 0"),
    (["--accepted", "-k", "-1"], "-k must be 0 or more, got -1"),
    (["--accepted", "-k", "0", "--rounds", "2"], "need rollouts for the next round"),
    (["--accepted", "--agent", "oracle", "--p", "0.5"], "--p is noisy-oracle's probability"),
    (["--accepted", "--p", "1.5"], "--p must be between 0 and 1, got 1.5"),
    (["--accepted", "--ray-address", "auto"], "--ray-address 'auto' is only for --executor ray"),
    (["--resume", "evolve-x", "--tasks", "t1"], "--tasks cannot be given with it"),
    (["--tasks", "nope"], "unknown task id(s): nope"),
    (["--accepted"], "no accepted tasks to evolve"),
    (["--resume", "evolve-x"], "nothing to resume: no evolve run 'evolve-x'"),
])
def test_bad_arguments_are_refused_with_exit_2(workspace, capsys, argv, says):
    code, _, err = _run(capsys, "--workspace", str(workspace.root), *argv)
    assert code == 2 and says in err.replace("\n", " ")
    assert store.evolve_runs_frame(workspace.db).empty


@pytest.mark.docker
def test_an_easier_round_prints_its_table_and_nothing_made_exits_1(recipe_ws, capsys):
    ws, ids = recipe_ws
    op = OfflineOperator(ws)
    two = next(t for t in ids if len(parent(ws, t).record["recipes"]) == 2)
    plant_rollouts(ws, two, 0, 4)                # r = 0: easier
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--tasks", two, "-k", "1", "--p", "0.8",
                          "--no-progress")
    assert code == 0, err
    assert "1 variant(s) made, 1 accepted" in out and "easier" in out and "0.00 →" in out
    assert "progress round=1 phase=verify done=1 total=1" in out

    stuck = []
    for t in ids:
        try:
            op.make(parent(ws, t), "harder", 1)
        except NoVariant:
            stuck.append(t)
    assert stuck, "every demo task has a harder variant: pick another way to make nothing"
    plant_rollouts(ws, stuck[0], 4, 4)          # r = 1: harder, which this task has none of
    code, out, err = _run(capsys, "--workspace", str(ws.root), "--tasks", stuck[0], "-k", "1", "--p", "0.8",
                          "--json")
    assert code == 1, (out, err)
    report = json.loads(out)
    assert report["made"] == 0 and report["rows"][0]["no_variant"] == 1
    row = store.get_lineage(ws.db, f"{stuck[0]}__d1")
    assert row["status"] == "no_variant" and row["error"]


def test_the_summary_says_whose_rates_drove_the_round(capsys):
    """Issue 22.4: the summary named the agent bare ("noisy-oracle"); its rates are simulated, and a
    terminus-2 run against the scripted replay played a test double: the one rule labels both."""
    from types import SimpleNamespace

    from workbench.cli_evolve import print_report
    for agent, model, says in (("noisy-oracle", None, "simulated, not a model"),
                               ("terminus-2", "scripted-terminus:oracle (test double)", "terminus-2 · test double")):
        print_report(SimpleNamespace(run_id="e1", status="done", agent=agent, model=model, rows=[], notes=[],
                                     message="", seconds=1.0, summary=lambda: "1 variant(s) made"))
        text = " ".join(capsys.readouterr().out.split())
        assert says in text and "LLM agent" not in text
