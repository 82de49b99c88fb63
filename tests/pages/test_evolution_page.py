"""The Evolution page through AppTest over the planted evolve run (tests/pages/evolution_fixture.py):
the empty state, the run and agent filters, every tab, the variants table's filters and the drill
into one variant. Expected numbers are worked out by hand from the fixture's plan."""
from __future__ import annotations

import time

import pandas as pd
import pytest

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.evolve import jobs
from tests.pages.apptest_helpers import (button, cancel_stops, chart, frame, metric, open_page, plotly_array,
                                         stand_in_batch)
from tests.pages.evolution_fixture import (AGENT, LABEL, LABEL_P05, RUN_ID, T2, T2_MODEL, VARIANTS,
                                          make_evolution_fixture)
from workbench.store import lineage as lineage_store


@pytest.fixture
def page(workspace, monkeypatch):
    make_evolution_fixture(workspace)
    return open_page(workspace, monkeypatch, "evolution.py")


def test_the_empty_workspace_says_how_to_get_evolution(workspace, monkeypatch):
    at = open_page(workspace, monkeypatch, "evolution.py")
    info = " ".join(i.value for i in at.info)
    assert "No evolution yet" in info and "workbench evolve --accepted --rounds 1 --agent noisy-oracle" in info
    assert "demo" in info
    assert not at.tabs and not at.get("plotly_chart")


def test_the_run_with_its_counts_and_every_tab(page):
    at = page
    assert [t.label for t in at.tabs] == ["Lineage tree", "Before → after", "Productive zone", "Variants"]
    run = at.selectbox(key="evo_run")
    assert run.options == ["all runs", f"{RUN_ID} · {AGENT} · round 2/2 · 6 made, 5 accepted · done"]
    assert metric(at, "Variants tried") == "9" and metric(at, "Made") == "6" and metric(at, "Accepted") == "5"
    assert metric(at, "Productive, last round") == "100%"
    # noisy-oracle's rates are the default (the run's agent) and say they are simulated
    agent = at.selectbox(key="evo_agent")
    assert agent.value.stored_label == LABEL                   # the run's p, not p = 0.5's rollouts
    assert agent.options == [LABEL_P05, LABEL, f"{AGENT_LABELS[T2]} · {T2_MODEL}"]
    assert any("simulated, not a model" in c.value for c in at.caption)

    tree = chart(at, "evo_tree_fig")
    assert at.selectbox(key="evo_root").options[0] == "evo00 · skillgraph/evo00 · 2 tried"   # the most tried
    texts = [t for trace in tree["data"] if trace.get("mode") == "markers+text" for t in trace["text"]]
    assert texts == ["original · r=1.00", "d1 · r=0.50", "b1 · r=0.25"]

    summary = frame(at, "operator", "tried", "made", "accepted", "r_before", "r_after").set_index("operator")
    assert summary.loc["harder", ["tried", "made", "accepted", "failed"]].tolist() == [3, 2, 2, 1]
    assert summary.loc["harder", "r_before"] == pytest.approx(0.875)
    assert summary.loc["harder", "r_after"] == pytest.approx(0.375)
    assert summary.loc["easier", ["r_before", "r_after", "no_variant"]].tolist() == [0.0, 0.75, 1]
    fig = chart(at, "evo_before_after_fig")
    assert "harder lowers the pass rate, easier raises it" in " ".join(c.value for c in at.caption)
    assert "simulated, not a model" in fig["layout"]["xaxis"]["title"]["text"]

    zone = frame(at, "round", "tasks", "productive", "share")
    assert zone[["round", "tasks", "productive"]].values.tolist() == [[0, 5, 2], [1, 4, 4], [2, 1, 1]]
    bars = chart(at, "evo_zone_fig")["data"][0]
    assert plotly_array(bars["y"]).tolist() == pytest.approx([0.4, 1.0, 1.0])
    assert bars["text"] == ["2/5", "4/4", "1/1"]

    table = frame(at, "task_id", "parent_id", "operator", "outcome", "r_before", "r_after")
    assert sorted(table["task_id"]) == sorted(v.task_id for v in VARIANTS)


def test_another_agent_gives_other_rates(page):
    at = page
    agent = at.selectbox(key="evo_agent")
    agent.select_index(agent.options.index(f"{AGENT_LABELS[T2]} · {T2_MODEL}")).run()
    assert not at.exception, at.exception
    assert not any("simulated, not a model" in c.value for c in at.caption)
    table = frame(at, "task_id", "r_before", "r_after").set_index("task_id")
    # terminus-2 ran evo00 (2 of 3) and its variant evo00__d1 (0 of 3) only
    assert table.loc["evo00__d1", "r_before"] == pytest.approx(2 / 3)
    assert table.loc["evo00__d1", "r_after"] == 0.0
    assert table["r_after"].notna().sum() == 1


def test_the_variants_table_filters_and_the_drill(page):
    at = page
    at.multiselect(key="evo_outcomes").set_value(["no variant", "failed"]).run()
    table = frame(at, "task_id", "outcome", "change")
    assert sorted(table["task_id"]) == ["evo01__d1__b1", "evo03__e1__d1", "evo04__e1"]
    assert "not made: one step left: nothing to drop" in set(table["change"])
    at.multiselect(key="evo_outcomes").set_value([]).run()
    at.multiselect(key="evo_operators").set_value(["easier"]).run()
    assert sorted(frame(at, "task_id", "outcome")["task_id"]) == ["evo03__e1", "evo04__e1"]
    at.multiselect(key="evo_operators").set_value([]).run()
    at.selectbox(key="evo_drill").set_value("evo00__d1__b1").run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "**evo00__d1__b1** · context_switch of `evo00__d1` in round 2 · accepted · r 0.50 → 0.25" in text
    assert "step 2 served by sed-replace instead of jq-filter" in text
    drill = chart(at, "evo_drill_tree_fig")
    nodes = next(t for t in drill["data"] if t.get("mode") == "markers+text")
    widths = plotly_array(nodes["marker"]["line"]["width"]).tolist()
    assert widths[plotly_array(nodes["customdata"]).tolist().index("evo00__d1__b1")] == 4   # ringed


def test_a_running_run_shows_its_progress_and_cancel_stops_it(page, workspace, monkeypatch):
    with stand_in_batch() as proc:
        lineage_store.create_run(workspace.db, "evofix-run2", rounds=1, agent=AGENT, model=None, k=4, params={})
        lineage_store.set_run_status(workspace.db, "evofix-run2", "running", pid=proc.pid)
        lineage_store.set_run_progress(workspace.db, "evofix-run2", {"round": 1, "phase": "verify", "done": 3,
                                                                     "total": 4}, "verifying variants")
        at = open_page(workspace, monkeypatch, "evolution.py")
        bars = at.get("progress")
        assert len(bars) == 1 and bars[0].proto.text == "round 1 · verify: 3/4"
        assert any(m.value == "**evofix-run2** · running · verifying variants" for m in at.markdown)
        cancel_stops(at, "evo_cancel", proc)
    # the run filter: only the chosen run's variants
    at.selectbox(key="evo_run").set_value(RUN_ID).run()
    assert not at.exception and metric(at, "Variants tried") == "9"


def test_a_launch_the_driver_refuses_says_why_and_starts_nothing(page, workspace):
    at = page
    at.selectbox(key="evo_launch_agent").set_value(T2)
    at.selectbox(key="evo_launch_executor").set_value("ray")
    button(at, "evo_launch").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("The run was not started: ") and "Ray" in errors[0]
    assert lineage_store.evolve_runs_frame(workspace.db)["run_id"].tolist() == [RUN_ID]


def test_a_launch_starts_a_background_evolve_run(page, workspace):
    """A real launch through the form of one task the offline operator cannot evolve (the fixture's
    tasks lie on no stored path), so the process ends by itself, starting no container."""
    at = page
    at.multiselect(key="evo_launch_tasks").set_value(["evo04"])
    at.number_input(key="evo_launch_k").set_value(2)
    button(at, "evo_launch").click().run()
    assert not at.exception, at.exception
    runs = lineage_store.evolve_runs_frame(workspace.db)
    new = runs[runs["run_id"] != RUN_ID]
    assert len(new) == 1
    run = new.iloc[0]
    assert (run["agent"], int(run["k"]), int(run["rounds"])) == (AGENT, 2, 1)
    assert any(s.value == f"Started evolve run {run['run_id']} in the background." for s in at.success)
    _wait_for_exit(workspace, run["run_id"])
    at.run()
    assert not at.exception, at.exception
    assert lineage_store.get_run(workspace.db, run["run_id"])["status"] in ("done", "failed")


def _wait_for_exit(ws, run_id: str) -> None:
    """The launched process ends by itself; cancelled if it does not, so no test leaves it running."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = lineage_store.get_run(ws.db, run_id)
        if run["pid"] is not None and not pd.isna(run["pid"]) and not jobs.is_alive(int(run["pid"])):
            return
        time.sleep(0.5)
    jobs.cancel(ws, run_id)
    raise AssertionError(f"the evolve process of {run_id} did not end: {jobs.log_tail(ws, run_id)}")
