"""The Difficulty page through AppTest over the rollouts fixture (tests/pages/rollouts_fixture.py):
every filter and tab, pass@k at another k, the export, the empty workspace. Expectations are
worked out from the fixture's PLAN, not from the page's own functions."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from analysis import difficulty as d
from analysis.difficulty import BANDS, DIMENSIONS, LLM_FAMILY
from pipeline.agents.protocol import AGENT_LABELS
from pipeline.trajectories.atif import validate_with_harbor
from tests.pages.apptest_helpers import chart, codes, frame, metric, open_page, plotly_array
from tests.pages.rollouts_fixture import (MODELS, NO_ROLLOUTS_TASK, PLAN, RUNS, TASKS, UNSOLVED_TASK,
                                          expected_check_rate, expected_passes, make_rollouts_fixture)
from workbench.store import rollouts as ro_store
from workbench.store import task_events

T2 = "terminus-2"


@pytest.fixture
def rollouts_ws(graph_workspace):
    return graph_workspace, make_rollouts_fixture(graph_workspace)


@pytest.fixture
def page(rollouts_ws, monkeypatch):
    ws, fx = rollouts_ws
    return open_page(ws, monkeypatch, "difficulty.py"), fx


def _label(agent: str, model: str | None) -> str:
    return AGENT_LABELS[agent] + (f" · {model}" if model else "")


def _table(at) -> pd.DataFrame:
    return frame(at, "task_id", "pass@1", "pass@k", "band")


def _expected_band(c: int, n: int) -> str:
    """The bands by hand for k = 3 (every group of the fixture has 3 rollouts)."""
    assert n == 3
    return ["unsolved", "hard", "easy", "solved"][c]


def test_the_fixture_stores_every_planned_rollout_with_its_files(rollouts_ws):
    ws, fx = rollouts_ws
    frame_ = ro_store.rollouts_frame(ws.db)
    assert len(frame_) == sum(len(v) for v in PLAN.values()) == len(fx.records) == 57
    assert not frame_[frame_["task_id"] == UNSOLVED_TASK]["passed"].any()
    assert NO_ROLLOUTS_TASK not in set(frame_["task_id"])
    assert set(frame_["sampler"]) == {"random-walk", "inverse-frequency"}
    assert len(ro_store.test_outcomes(ws.db)) == sum(len(t) for t in fx.tests.values())
    for rec in fx.records:
        folder = ws.root / rec["folder"]
        assert json.loads((folder / "result.json").read_text())["rollout_id"] == rec["rollout_id"]
        assert (folder / "recording.cast").exists() == (rec["agent"] == T2)
    # one trajectory of each agent config and ending passes Harbor's own validator
    picked = {(r["agent"], r["model"], r["passed"], r["failure_class"]): r for r in fx.records}.values()
    assert validate_with_harbor([ws.root / r["folder"] / "trajectory.json" for r in picked]) == []


def test_the_empty_workspace_says_how_to_make_rollouts(workspace, monkeypatch):
    at = open_page(workspace, monkeypatch, "difficulty.py")
    info = " ".join(i.value for i in at.info)
    assert "No rollouts yet" in info and "workbench rollout --accepted --agent oracle -k 3" in info
    assert "Rollouts page" in info
    assert not at.tabs and not at.dataframe


def test_every_task_and_agent_config_with_its_pass_rates_and_band(page):
    at, _ = page
    assert [t.label for t in at.tabs] == ["Bands", "Distributions", "Checks vs tasks", "Task table"]
    table = _table(at)
    assert len(table) == len(PLAN)
    assert metric(at, "Tasks") == str(len(TASKS) - 1) and metric(at, "Rollouts") == "57"
    unsolved = sum(expected_passes(t, a, m)[0] == 0 for t, a, m in PLAN)
    assert metric(at, "Unsolved (task × agent)") == str(unsolved)
    for (task, agent, model) in PLAN:
        c, n = expected_passes(task, agent, model)
        row = table[(table["task_id"] == task) & (table["agent_label"] == _label(agent, model))]
        assert len(row) == 1, (task, agent, model)
        row = row.iloc[0]
        assert (row["rollouts"], row["passed"], row["k"]) == (n, c, 3)
        assert row["pass@1"] == pytest.approx(c / n) and row["pass@k"] == (1.0 if c else 0.0)
        assert row["band"] == _expected_band(c, n)
    assert set(table[table["task_id"] == UNSOLVED_TASK]["band"]) == {"unsolved"}


def test_agent_options_say_what_the_scripted_agents_are(page):
    at, _ = page
    agents = at.multiselect(key="diff_agents")
    assert agents.options == [AGENT_LABELS[a] for a in ("nop", "oracle", "ablation", T2)]
    assert "verifier probe, not a model" in agents.options[2]
    assert "ablation is the oracle with one solution step left out" in at.caption[0].value
    assert at.multiselect(key="diff_models").options == ["(no model)", *MODELS]


def test_filters_by_agent_model_run_category_and_band(page):
    at, _ = page
    at.multiselect(key="diff_agents").set_value([T2]).run()
    assert set(_table(at)["agent_label"]) == {_label(T2, m) for m in MODELS}
    at.multiselect(key="diff_models").set_value([MODELS[1]]).run()
    assert set(_table(at)["agent_label"]) == {_label(T2, MODELS[1])}
    at.multiselect(key="diff_agents").set_value([]).run()
    at.multiselect(key="diff_models").set_value(["(no model)"]).run()
    assert {lab for lab in _table(at)["agent_label"]} == {AGENT_LABELS[a] for a in ("nop", "oracle", "ablation")}
    at.multiselect(key="diff_models").set_value([]).run()
    # a run: its labels say the agent and model; only its rollouts count
    runs = at.multiselect(key="diff_runs")
    assert f"{RUNS[(T2, MODELS[0])]} · terminus-2 {MODELS[0]} · 12 rollouts" in runs.options
    runs.set_value([RUNS[("ablation", None)]]).run()
    table = _table(at)
    assert set(table["agent_label"]) == {AGENT_LABELS["ablation"]} and len(table) == 4
    at.multiselect(key="diff_runs").set_value([]).run()
    at.multiselect(key="diff_categories").set_value(["data-processing"]).run()
    assert set(_table(at)["task_id"]) == {UNSOLVED_TASK}
    at.multiselect(key="diff_categories").set_value([]).run()
    at.multiselect(key="diff_bands").set_value(["unsolved"]).run()
    table = _table(at)
    assert set(zip(table["task_id"], table["agent_label"])) == {
        (t, _label(a, m)) for t, a, m in PLAN if expected_passes(t, a, m)[0] == 0}
    at.multiselect(key="diff_bands").set_value(["medium"]).run()      # none at k = 3
    assert not at.exception and "No rollouts match these filters." in [w.value for w in at.warning]


def test_a_withdrawn_task_is_left_out_until_asked_for(rollouts_ws, monkeypatch):
    ws, _ = rollouts_ws
    task_events.withdraw(ws.db, UNSOLVED_TASK, "trajectory_judge", "design flaw: the tests expect an unstated format")
    at = open_page(ws, monkeypatch, "difficulty.py")
    assert UNSOLVED_TASK not in set(_table(at)["task_id"])
    box = at.checkbox(key="diff_withdrawn")
    assert box.label == "Include the 1 task(s) withdrawn from the accepted set" and not box.value
    box.check().run()
    assert not at.exception and UNSOLVED_TASK in set(_table(at)["task_id"])


def test_no_withdrawn_task_no_checkbox(page):
    at, _ = page
    assert not [c for c in at.checkbox if c.key == "diff_withdrawn"]


def test_pass_at_another_k(page):
    at, _ = page
    assert at.number_input(key="diff_k").value == 3 and at.number_input(key="diff_k").max == 3
    at.number_input(key="diff_k").set_value(2).run()
    assert not at.exception, at.exception
    table = _table(at)
    for (task, agent, model) in PLAN:
        c, n = expected_passes(task, agent, model)
        row = table[(table["task_id"] == task) & (table["agent_label"] == _label(agent, model))].iloc[0]
        by_hand = {0: 0.0, 1: 2 / 3, 2: 1.0, 3: 1.0}[c]            # 1 - C(3-c, 2) / C(3, 2)
        assert row["k"] == 2 and row["pass@k"] == pytest.approx(by_hand), (task, agent, model)


def _bars(fig: dict) -> dict[str, float]:
    """Total bar length per band name across the figure's traces."""
    out: dict[str, float] = {}
    for trace in fig["data"]:
        values = plotly_array(trace.get("x") if trace.get("orientation") == "h" else trace.get("y"))
        out[trace["name"]] = out.get(trace["name"], 0) + float(values.sum())
    return out


def test_the_bands_tab(page):
    at, _ = page
    totals = _bars(chart(at, "bands_fig"))
    by_hand = {}
    for key in PLAN:
        b = _expected_band(*expected_passes(*key))
        by_hand[b] = by_hand.get(b, 0) + 1
    assert {b: v for b, v in totals.items() if v} == by_hand
    assert set(totals) <= set(BANDS)


def test_the_distributions_tab_breaks_down_by_every_dimension(page):
    at, _ = page
    at.multiselect(key="diff_agents").set_value([T2]).run()
    assert at.radio(key="diff_dimension").options == list(DIMENSIONS)
    n_rows = sum(1 for _, a, _ in PLAN if a == T2)
    for dimension in DIMENSIONS:
        at.radio(key="diff_dimension").set_value(dimension).run()
        assert not at.exception, (dimension, at.exception)
        fig = chart(at, "dist_fig")
        total = sum(_bars(fig).values())
        if dimension == "recipe family":
            # each task counts once per family of its steps: the two LLM tasks share one family
            per_task = {t.task_id: len({LLM_FAMILY if r.startswith("llm:") else r for r in t.recipes}) for t in TASKS}
            assert total == sum(per_task[t] for t, a, _ in PLAN if a == T2)
            assert LLM_FAMILY in json.dumps(fig) and any(LLM_FAMILY in c.value for c in at.caption)
        else:
            assert total == n_rows, dimension
    at.radio(key="diff_dimension").set_value("category").run()
    xs = {str(x) for trace in chart(at, "dist_fig")["data"] for x in plotly_array(trace["x"])}
    assert xs == {t.category for t in TASKS if t.task_id != NO_ROLLOUTS_TASK}


def test_the_checks_vs_tasks_tab(page):
    at, _ = page
    rates = frame(at, "agent_label", "check_rate", "task_rate")
    assert rates["agent_label"].tolist() == [AGENT_LABELS[a] for a in ("nop", "oracle", "ablation")] + \
        [_label(T2, m) for m in MODELS]
    for agent in ("nop", "oracle", "ablation", T2):
        passed, run = expected_check_rate(agent)
        mine = rates[rates["agent_label"].str.startswith(AGENT_LABELS[agent])]
        assert (mine["checks_passed"].sum(), mine["checks_run"].sum()) == (passed, run), agent
        rollouts = [o for (_, a, _), outs in PLAN.items() if a == agent for o in outs]
        assert mine["rollouts_passed"].sum() == sum(o == "pass" for o in rollouts)
    qwen = rates[rates["agent_label"] == _label(T2, MODELS[1])].iloc[0]
    assert qwen["rollouts_without_tests"] == 1                 # the crashed rollout
    names = {t["name"] for t in chart(at, "checks_fig")["data"]}
    assert names == {"tests passed (check level)", "rollouts passed whole (task level)"}
    assert any("89.4% of checks but 20.9% of tasks" in c.value for c in at.caption)


def _serves(at, label: str, data: bytes, mimetype: str, filename: str) -> bool:
    """Whether the download button serves exactly `data`: Streamlit names a served file by a hash
    of its bytes, mimetype and file name (its media storage is gone once AppTest's run ends)."""
    from streamlit.runtime.memory_media_file_storage import _calculate_file_id
    button = next(b for b in at.get("download_button") if b.label == label)
    return button.proto.url.rsplit("/", 1)[-1].split(".")[0] == _calculate_file_id(data, mimetype, filename)


def test_export_of_a_selection(rollouts_ws, page):
    ws, _ = rollouts_ws
    at, _ = page
    at.multiselect(key="diff_agents").set_value([T2]).run()
    at.multiselect(key="diff_bands").set_value(["unsolved", "hard"]).run()
    table = _table(at)
    ids = list(dict.fromkeys(table["task_id"]))
    by_hand = {t for t, a, m in PLAN if a == T2 and expected_passes(t, a, m)[0] <= 1}
    assert set(ids) == by_hand
    assert [b.label for b in at.get("download_button")] == ["CSV", "JSON", "Task ids (one a line)"]
    assert codes(at)[-1] == f"workbench rollout --tasks {' '.join(ids)} --agent terminus-2 -k 3"
    at.selectbox(key="diff_rerun_agent").set_value("ablation").run()
    assert codes(at)[-1] == f"workbench rollout --tasks {' '.join(ids)} --agent ablation -k 3"
    assert _serves(at, "Task ids (one a line)", ("\n".join(ids) + "\n").encode(), "text/plain", "task_ids.txt")
    # the CSV and JSON of this selection: the rows shown, nothing else
    shown = d.filter_bands(d.task_difficulty(d.filter_rollouts(ro_store.rollouts_frame(ws.db),
                                                               d.DifficultyFilter(agents=(T2,))), 3),
                           ["unsolved", "hard"])
    csv = d.export_csv(shown)
    assert pd.read_csv(io.BytesIO(csv))["task_id"].tolist() == table["task_id"].tolist()
    assert _serves(at, "CSV", csv, "text/csv", "difficulty.csv")
    assert json.loads(d.export_json(shown))["task_ids"] == ids
    assert _serves(at, "JSON", d.export_json(shown), "application/json", "difficulty.json")
    assert not _serves(at, "CSV", d.export_csv(shown.iloc[:1]), "text/csv", "difficulty.csv")
