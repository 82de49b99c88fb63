"""The Tasks page's Repairs tab through AppTest, on rows written by the real store: an LLM
task repaired twice (each attempt with its diff, the task's LLM cost per stage), an LLM task
built right the first time, an offline task; the task list's provider, repairs and cost;
the "accepted after N repairs" funnel."""
from __future__ import annotations

import pytest

from pipeline.repair.attempts import RepairAttempt
from tests.pages.apptest_helpers import chart, frame, open_page, plotly_array
from tests.pages.repairs_fixture import CALLS, ENV_DIFF, PULL_DENIED, TESTS_DIFF, add_llm_run, stage_cost
from tests.pages.synth_fixture import make_synth_fixture
from workbench.store import repairs as repair_store


@pytest.fixture
def page(graph_workspace, monkeypatch):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    llm = add_llm_run(ws, made)
    at = open_page(ws, monkeypatch, "tasks.py")
    return at, made, llm


def _open(at, task_id: str):
    at.selectbox(key="detail_task").set_value(task_id).run()
    assert not at.exception, at.exception
    return {t.label.split(" (")[0]: t for t in at.tabs}


def test_an_llm_task_shows_each_repair_with_its_diff_and_its_cost_per_stage(page):
    at, _, llm = page
    tabs = _open(at, llm.repaired.task_id)
    assert [t.label for t in at.tabs] == [f"Files ({len(llm.repaired.files)})", "Checks (5)", "Repairs (2)", "Path"]
    repairs = tabs["Repairs"]
    assert [m.value for m in repairs.markdown][0] == "**2 repairs (1 fixed what failed); accepted after them**"
    history = next(d.value for d in repairs.dataframe if "artifact" in d.value.columns)
    assert history["artifact"].tolist() == ["environment", "tests"]
    assert history["check"].tolist() == ["build", "oracle"] and history["outcome"].tolist() == ["moved_on", "fixed"]
    assert history["reason"].iloc[0] == PULL_DENIED and history["tokens"].tolist() == [1700, 1650]
    # each attempt's diff as a diff, with its evidence
    diffs = {c.value: c.language for c in repairs.code}
    assert diffs[ENV_DIFF.rstrip("\n")] == "diff" and diffs[TESTS_DIFF.rstrip("\n")] == "diff"
    assert "Step 1/3 : FROM ubuntu:22.04\npull access denied for ubuntu" in diffs
    titles = [e.label for e in repairs.expander]
    assert titles == ["#1 · environment · after build · moved on · 1,700 tokens · $0.0004",
                      "#2 · tests · after oracle · fixed · 1,650 tokens · $0.0004"]
    # its LLM calls per stage, in the order made, with a total
    costs = next(d.value for d in repairs.dataframe if "stage" in d.value.columns)
    assert costs["stage"].tolist() == [*CALLS, "total"]
    assert costs["calls"].tolist() == [1, 1, 1, 1, 2, 6]
    assert costs["cost_usd"].iloc[-1] == pytest.approx(stage_cost(list(CALLS)))
    tokens = sum(n * (pt + ct) for n, pt, ct, _ in CALLS.values())
    assert tokens == 10_450
    assert any(c.value == f"6 LLM call(s), 10,450 tokens, ${stage_cost(list(CALLS)):.4f} in all"
               for c in repairs.caption)
    # the other tabs still render for an LLM task
    assert any("Count the errors (llm-marker-0)" in c.value for c in tabs["Files"].code)
    assert len(tabs["Checks"].expander) == 5 + 1        # the checks and verifier strength
    assert frame(at, "step", "skill")["skill"].tolist() == llm.repaired.skill_names


def test_an_llm_task_with_no_repairs_and_an_offline_task_say_so(page):
    at, made, llm = page
    tabs = _open(at, llm.first_time.task_id)
    assert "Repairs (0)" in [t.label for t in at.tabs]
    repairs = tabs["Repairs"]
    assert repairs.markdown[0].value == "**no repairs: built right the first time**"
    assert not repairs.expander and not [c for c in repairs.code if c.language == "diff"]
    costs = next(d.value for d in repairs.dataframe if "stage" in d.value.columns)
    assert costs["stage"].tolist() == ["synth_plan", "synth_environment", "task_judge", "total"]

    tabs = _open(at, llm.given_up.task_id)
    assert tabs["Repairs"].markdown[0].value == "**1 repair (0 fixed what failed); rejected after it**"

    tabs = _open(at, made[0].task_id)
    repairs = tabs["Repairs"]
    assert repairs.markdown[0].value == "**offline task: made from recipes, never repaired**"
    assert not repairs.dataframe and not repairs.expander
    assert not any("LLM cost per stage" in m.value for m in repairs.markdown)
    assert [t.label for t in at.tabs] == [f"Files ({len(made[0].files)})", "Checks (5)", "Repairs (0)", "Path"]


def test_the_list_shows_provider_repairs_and_cost_and_the_yield_shows_accepted_after_n_repairs(page):
    at, made, llm = page
    table = frame(at, "name", "provider_label", "repairs", "cost_usd").set_index("name")
    assert table.loc[llm.repaired.name, "provider_label"] == "llm · gpt-4o-mini"     # the model that answered it
    assert table.loc[made[0].name, "provider_label"] == "offline"
    assert table.loc[llm.repaired.name, "repairs"] == 2 and table.loc[llm.first_time.name, "repairs"] == 0
    assert table.loc[llm.repaired.name, "cost_usd"] == pytest.approx(stage_cost(list(CALLS)))
    fig = chart(at, "repairs_funnel")
    accepted, rejected = fig["data"]
    assert accepted["x"] == ["0", "1", "2"]
    assert plotly_array(accepted["y"]).tolist() == [1, 0, 1] and plotly_array(rejected["y"]).tolist() == [0, 1, 0]
    assert fig["layout"]["title"]["text"] == "Accepted after N repairs: 2 accepted, 1 of them with none"
    # the offline run alone: its tasks are never repaired, so there is no such figure
    from tests.pages.synth_fixture import RUN_ID
    at.selectbox(key="yield_run").set_value(RUN_ID).run()
    assert not [el for el in at.get("plotly_chart") if "repairs_funnel" in el.proto.id]


def test_a_task_made_by_the_scripted_replay_reads_as_a_test_doubles_with_its_cost_labelled(graph_workspace,
                                                                                           monkeypatch):
    """Issue 22.4: the demo's scripted replay tasks showed as provider `llm` with an "LLM cost" at a
    made-up price. The provider names the double, the cost header and the task's cost line say so."""
    from tests.pages.repairs_fixture import LLM_RUN_ID
    ws = graph_workspace
    llm = add_llm_run(ws, make_synth_fixture(ws))
    with ws.db.write() as con:       # the first-time task's calls were the demo's scripted replay's
        con.execute("UPDATE llm_calls SET model = 'scripted-replay (demo price)' WHERE item = ?",
                    [llm.first_time.task_id])
    at = open_page(ws, monkeypatch, "tasks.py")
    table = frame(at, "name", "provider_label", "cost_usd").set_index("name")
    assert table.loc[llm.first_time.name, "provider_label"] == "llm · scripted-replay (demo price, test double)"
    assert table.loc[llm.repaired.name, "provider_label"] == "llm · gpt-4o-mini"
    header = next(d for d in at.dataframe if "provider_label" in d.value.columns).proto.columns
    assert "test doubles' at a made-up price" in header
    tabs = _open(at, llm.first_time.task_id)
    assert any("made by the llm · scripted-replay (demo price, test double) synthesizer" in c.value
               for c in at.caption)
    assert any("in all by scripted-replay (demo price, test double): a test double's cost" in c.value
               for c in tabs["Repairs"].caption)
    runs = open_page(ws, monkeypatch, "synthesis.py")
    listed = frame(runs, "run_id", "provider").set_index("run_id")
    assert listed.loc[LLM_RUN_ID, "provider"] == "llm · gpt-4o-mini, scripted-replay (demo price, test double)"


@pytest.mark.docker
def test_a_real_llm_batchs_repaired_task_shows_its_stored_attempt_and_cost(graph_workspace, monkeypatch):
    """Rows made by `run_synth(provider="llm")` itself (real client over HTTP to the scripted
    replay server, real Docker builds and checks): a path whose first tests have a bug is
    repaired once; the Repairs tab shows that attempt with the diff the constructor stored,
    and the task's cost per stage is the call log's."""
    from pipeline.synth.batch import run_synth
    from pipeline.synth.llm.scripted import ScriptedSynthesis
    from tests.pipeline.synth.llm.demo_paths import batch_of, tool_paths
    from workbench.llm.replay_server import ReplayServer
    from workbench.sandbox.base_image import base_image_name
    from workbench.store import repairs
    from workbench.store import tasks as store
    ws = graph_workspace
    buggy, clean = list(tool_paths(ws, 2))
    scripted = ScriptedSynthesis(ws, {buggy: "test_bug"}, base_image=base_image_name())
    with ReplayServer(latency_s=0.01) as srv:
        srv.add_rule(scripted.rule())
        monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", srv.base_url)
        store.create_run(ws.db, "pages-llm", "random-walk", 2, 0, "llm", 2, None)
        store.attach_paths(ws.db, "pages-llm", batch_of(buggy), [buggy, clean])
        run_synth(ws, run_id="pages-llm", provider="llm", concurrency=2)
    tasks = store.tasks_frame(ws.db).set_index("path_id")
    repaired, first = tasks.loc[buggy], tasks.loc[clean]
    assert (repaired["verdict"], int(repaired["repairs"])) == ("accepted", 1), repaired["reason"]
    stored = repairs.attempts_for(ws.db, repaired["task_id"]).iloc[0]
    assert stored["artifact"] == "tests" and stored["diff"].startswith("---")
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL")
    at = open_page(ws, monkeypatch, "tasks.py")
    tabs = _open(at, repaired["task_id"])
    panel = tabs["Repairs"]
    assert panel.label == "Repairs (1)"
    assert panel.markdown[0].value == "**1 repair (1 fixed what failed); accepted after it**"
    assert stored["diff"].rstrip("\n") in [c.value for c in panel.code if c.language == "diff"]
    costs = next(d.value for d in panel.dataframe if "stage" in d.value.columns)
    assert {"synth_plan", "synth_tests", "synth_repair_tests"} <= set(costs["stage"])
    assert costs["cost_usd"].iloc[-1] == pytest.approx(float(repaired["cost_usd"]))
    tabs = _open(at, first["task_id"])
    assert tabs["Repairs"].markdown[0].value == "**no repairs: built right the first time**"



def test_a_task_whose_repairs_ran_out_says_so_and_its_build_log_reads_without_colour_codes(graph_workspace,
                                                                                          monkeypatch):
    """Docker's builder colours a RUN step's stderr: the attempt's evidence and the failed check's
    log read as plain text. A task rejected with no repair left says so beside its failed check."""
    ws = graph_workspace
    llm = add_llm_run(ws, make_synth_fixture(ws))
    coloured = ["Step 5/6 : RUN cp /app/seed/a.ini /etc/a.ini", "\x1b[91mcp: cannot stat '/app/seed/a.ini'",
                "\x1b[0mRemoving intermediate container 030bac288665"]
    spent = [RepairAttempt(n=n, artifact="environment", check="build", reason="build failed: cp returned 1",
                           diff="--- a/environment.json\n+++ b/environment.json\n", evidence=coloured,
                           outcome="still_failing" if n < 3 else "exhausted").model_dump() for n in (1, 2, 3)]
    repair_store.save_attempts(ws.db, llm.given_up.task_id, spent)
    with ws.db.write() as con:   # the failed check's own log, as the build check stores it
        con.execute("UPDATE task_checks SET log = ? WHERE task_id = ? AND NOT passed",
                    ["\n".join(coloured), llm.given_up.task_id])
    at = open_page(ws, monkeypatch, "tasks.py")
    tabs = _open(at, llm.given_up.task_id)
    assert at.error[0].value.endswith(" Repairs exhausted: 3 made, none left to try (see the Repairs tab).")
    panel = tabs["Repairs"]
    assert panel.markdown[0].value == ("**3 repairs (0 fixed what failed); rejected: the repairs allowed were all "
                                       "spent and the last one still failed**")
    plain = "Step 5/6 : RUN cp /app/seed/a.ini /etc/a.ini\ncp: cannot stat '/app/seed/a.ini'\n" \
            "Removing intermediate container 030bac288665"
    assert [c.value for c in panel.code if c.language == "text"] == [plain] * 3
    assert plain in [c.value for c in tabs["Checks"].code]
    assert not any("\x1b" in c.value for c in at.code)


def test_the_path_tab_of_an_llm_task_names_no_recipe(page):
    """An LLM task has no recipes (its steps come from the plan): the caption said 'Recipes:  · …'
    for it, or listed 'llm:<skill>' as if they were recipe families."""
    at, made, llm = page
    tabs = _open(at, llm.repaired.task_id)
    assert tabs["Path"].caption[0].value == \
        "No recipes: the LLM synthesizer planned each step from its skill · difficulty medium · " \
        f"category {llm.repaired.category}"
    tabs = _open(at, made[0].task_id)
    assert tabs["Path"].caption[0].value.startswith("Recipes: ")
