"""Synthesis and Tasks pages through AppTest: guidance, the funnel, filters, one task's files
and checks, runs followed live, a dead batch process, cancel and a real launch; the LLM provider
with and without an endpoint, and an LLM run's "accepted after N repairs"."""
from __future__ import annotations

import json
import shutil
import subprocess

from pipeline.synth import jobs
from tests.pages.apptest_helpers import (button, cancel_stops, chart, codes, frame, metric, open_page,
                                         plotly_array, stand_in_batch, wait_for_exit)
from tests.pages.synth_fixture import (CANCELLED_RUN_ID, FUNNEL, ORACLE_FAILURE, RUN_ID, add_cancelled_run,
                                      make_synth_fixture)
from workbench.store import tasks as store



def _shown(at) -> int:
    text = next(m.value for m in at.markdown if m.value.startswith("**") and " tasks**" in m.value)
    return int(text.strip("*").split()[0])


def _progress(at) -> list[str]:
    return [el.proto.text for el in at.get("progress")]


# --- empty workspace ---------------------------------------------------------------------------------

def test_both_pages_say_what_to_do_on_an_empty_workspace(workspace, monkeypatch):
    at = open_page(workspace, monkeypatch, "tasks.py")
    assert any("No tasks yet" in i.value and "Synthesis page" in i.value for i in at.info)
    assert not at.dataframe
    at = open_page(workspace, monkeypatch, "synthesis.py")
    assert any("No scenario graph yet" in w.value and "workbench graph build" in w.value for w in at.warning)
    assert any("No synthesis runs yet" in i.value for i in at.info)
    assert any("keeps going when you close this tab" in m.value for m in at.markdown)
    # offline only: the LLM synthesizer is shown but cannot be picked without an endpoint, and the
    # page says why and where to set one
    provider = at.radio(key="synth_provider")
    assert provider.options == ["offline", "llm"] and provider.value == "offline" and provider.disabled
    assert provider.help == "No LLM endpoint configured (Settings page)."
    assert any("needs an endpoint, and none is configured" in i.value and "[Settings page](settings)" in i.value
               for i in at.info)
    assert at.number_input(key="synth_budget").disabled
    assert at.selectbox(key="synth_sampler").options[0] == "inverse-frequency"
    assert button(at, "synth_launch").label == "Launch"


# --- Tasks page --------------------------------------------------------------------------------------

def test_tasks_page_shows_the_funnel_and_filters_narrow_the_list(graph_workspace, monkeypatch):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    at = open_page(ws, monkeypatch, "tasks.py")
    assert metric(at, "Paths sampled") == "4" and metric(at, "Tasks synthesized") == "3"
    assert metric(at, "Tasks accepted") == "1" and metric(at, "Verified / sampled") == "25%"
    funnel = chart(at, "funnel")
    assert funnel["data"][0]["x"] == [FUNNEL[k] for k in store.FUNNEL]
    assert funnel["layout"]["title"]["text"] == "1 verified of 4 sampled (25% yield)"
    failures = chart(at, "failures")["data"][0]
    assert list(failures["y"]) == ["oracle passes", "rubric"] and plotly_array(failures["x"]).tolist() == [1, 1]
    # one run picked: the same numbers (every task came from it)
    at.selectbox(key="yield_run").set_value(RUN_ID).run()
    assert metric(at, "Tasks accepted") == "1" and metric(at, "Paths sampled") == "4"

    assert _shown(at) == 3
    at.pills(key="f_verdict").set_value(["rejected"]).run()
    table = frame(at, "name", "verdict", "failed_check")
    assert _shown(at) == 2 and set(table["verdict"]) == {"rejected"}
    assert set(table["failed_check"]) == {"oracle", "rubric"}
    at.multiselect(key="f_category").select("text-processing").run()
    assert frame(at, "name", "verdict")["name"].tolist() == [made[2].name]
    at.pills(key="f_verdict").set_value([]).run()
    at.multiselect(key="f_category").set_value([]).run()
    assert _shown(at) == 3
    # path length: the shortest path only
    shortest = min(made, key=lambda t: t.n_steps)
    at.slider(key="f_steps").set_value((shortest.n_steps, shortest.n_steps)).run()
    names = frame(at, "name", "verdict")["name"].tolist()
    assert shortest.name in names and len(names) == sum(t.n_steps == shortest.n_steps for t in made) < 3
    steps = at.slider(key="f_steps")
    steps.set_value((steps.min, steps.max)).run()
    assert _shown(at) == 3
    # source skills: a skill only one task was made from; labels carry names
    only = next(s for t in made for s in t.skill_ids if sum(s in u.skill_ids for u in made) == 1)
    owner = next(t for t in made if only in t.skill_ids)
    box = at.multiselect(key="f_skills")
    assert box.format_func(only).startswith(owner.skill_names[owner.skill_ids.index(only)] + " · 1 task")
    box.select(only).run()
    shown = frame(at, "name", "verdict", "skill_names")
    assert shown["name"].tolist() == [owner.name]
    assert list(shown.iloc[0]["skill_names"]) == owner.skill_names


def test_selecting_a_task_shows_its_files_and_check_logs(graph_workspace, monkeypatch):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    target = made[1]  # rejected at the oracle check
    at = open_page(ws, monkeypatch, "tasks.py")
    table = frame(at, "name", "verdict", "failed_check")
    row = table["name"].tolist().index(target.name)
    at.session_state["tasks_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="detail_task").value == target.task_id
    assert any(m.value == f"### {target.name}" for m in at.markdown)
    assert any("Rejected at **oracle**" in e.value and ORACLE_FAILURE in e.value for e in at.error)
    # every file of the bundle, listed and shown with a language
    tree = frame(at, "path", "size", "kind", "language")
    assert sorted(tree["path"]) == sorted(target.files)
    assert tree["path"].tolist()[:3] == ["instruction.md", "task.toml", "environment/Dockerfile"]
    langs = {c.value: c.language for c in at.code}  # st.code drops the final newline
    for path, text in target.files.items():
        assert text.rstrip("\n") in langs, path
    assert langs[target.files["environment/Dockerfile"].rstrip()] == "docker"
    assert langs[target.files["tests/test_outputs.py"].rstrip()] == "python"
    assert langs[target.files["solution/solve.sh"].rstrip()] == "bash"
    # every check with its log; the failed oracle's per-test outcomes, failures first
    logs = [c for c in codes(at) if "NOISY-ORACLE-LOG" in c]
    assert len(logs) == 1 and "1 failed, 1 passed" in logs[0]
    assert any("Step 1/4 : FROM workbench-base" in c for c in codes(at))
    outcomes = [df.value for df in at.dataframe if "outcome" in df.value.columns]
    assert len(outcomes) == 2  # build reports no tests; no-op and oracle do
    noop, oracle = outcomes
    assert noop["outcome"].tolist() == ["failed", "failed"]  # the no-op check passes when the tests fail
    assert oracle["outcome"].tolist() == ["failed", "passed"]
    assert oracle.iloc[0]["test"] == "test_outputs.py::test_count"
    assert oracle.iloc[0]["message"] == "assert '41' == '42'"
    assert any(c.value.startswith("Tests: 1 failed, 1 passed, reward 0.0") for c in at.caption)
    assert any(m.value.startswith("**Failed** in 1.90 s") for m in at.markdown)


def test_rubric_problems_are_listed_and_a_missing_bundle_is_reported(graph_workspace, monkeypatch):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(made[2].task_id).run()
    problems = frame(at, "problems")
    assert problems["problems"].tolist() == ["instruction never mentions /app/out.txt"]
    # a bundle deleted on disk: the page says so instead of failing
    shutil.rmtree(ws.root / "tasks" / made[0].task_id)
    at.selectbox(key="detail_task").set_value(made[0].task_id).run()
    assert not at.exception, at.exception
    assert any("The bundle cannot be shown" in w.value for w in at.warning)
    assert any("Accepted: every check passed." in s.value for s in at.success)


def _tab_labels(at) -> list[str]:
    return [t.label for t in at.tabs]


def test_every_tab_of_a_verified_task_renders(graph_workspace, monkeypatch):
    """The accepted task's checks as the real verifier writes them (the rubric's own details
    included): Files, Checks and Path all render, and each check shows what it reported."""
    ws = graph_workspace
    made = make_synth_fixture(ws)
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(made[0].task_id).run()
    assert not at.exception, at.exception
    assert _tab_labels(at) == [f"Files ({len(made[0].files)})", "Checks (5)", "Repairs (0)", "Path"]
    # Checks: one expander per check, the rubric's count of test functions among its details
    titles = [e.label for e in at.expander]
    assert [t.split(" · ")[0] for t in titles if " s" in t][:5] == ["build", "no-op fails", "oracle passes",
                                                                   "rubric", "decontamination"]
    assert any(j.value and '"test_count": 2' in j.value for j in at.json), [j.value for j in at.json]
    assert any(c.value.startswith("Tests: 2 passed, reward 1.0") for c in at.caption)
    assert any(c.value == "2 test function(s) found in tests/" for c in at.caption)
    # Path: one row per step of the task's path
    path = frame(at, "step", "skill", "from scenario")
    assert path["skill"].tolist() == made[0].skill_names


def test_the_path_tab_says_which_recipe_each_step_used_and_what_of_its_skill(graph_workspace, monkeypatch):
    """The store and task.toml kept each step's recipe and skill fidelity, but the page showed
    only skill names: a step built for its skill's category alone could not be seen."""
    ws = graph_workspace
    made = make_synth_fixture(ws)
    task = made[0]
    fidelity = [{"step": i + 1, "skill_id": f"s{i}", "skill_name": n, "recipe": f"family-{i}",
                 "fidelity": "tool" if i == 0 else "category-only", "tools_used": ["jq"] if i == 0 else [],
                 "kinds_used": []} for i, n in enumerate(task.skill_names)]
    with ws.db.write() as con:
        con.execute("UPDATE tasks SET skill_fidelity = ? WHERE task_id = ?", [json.dumps(fidelity), task.task_id])
    assert store.skill_fidelity(ws.db, task.task_id) == fidelity
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(task.task_id).run()
    assert not at.exception, at.exception
    path = frame(at, "step", "skill", "recipe", "uses of the skill")
    assert path["recipe"].tolist() == [f"family-{i}" for i in range(len(task.skill_names))]
    assert path["uses of the skill"].tolist()[:2] == ["tool: jq", "category only"]


RUBRIC_STEPS = [
    {"step": 1, "skill_id": "s0", "skill_name": "funnel-report", "recipe": "skill-exercise", "fidelity": "category-only",
     "score": 2, "evidence": {"via": "script", "uses": "scripts/funnel_report.py",
                              "skill_quote": "python3 scripts/funnel_report.py funnel.json --format json",
                              "solution_quote": "python3 /skills/funnel-report/scripts/funnel_report.py in.json",
                              "note": "runs the skill's bundled scripts/funnel_report.py"}},
    {"step": 2, "skill_id": "s1", "skill_name": "csv-tricks", "recipe": "table-filter-sort", "fidelity": "artifact",
     "kinds_used": ["csv-table"], "score": 1, "evidence": {"via": "kind", "uses": "csv-table", "note": "shares csv"},
     "gap": "its SKILL.md runs no bundled script and documents no command of a tool it is about"}]


def test_a_task_shows_each_steps_rubric_score_with_both_quotes_and_the_run_its_gaps(graph_workspace, monkeypatch):
    """Issue 24.6: the Tasks page shows per step the skill, score and evidence beside the SKILL.md line;
    the Synthesis page the batch's score split and the skills no step exercised."""
    ws = graph_workspace
    made = make_synth_fixture(ws)
    with ws.db.write() as con:
        for t in made:
            con.execute("UPDATE tasks SET skill_fidelity = ? WHERE task_id = ?", [json.dumps(RUBRIC_STEPS), t.task_id])
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(made[0].task_id).run()
    assert not at.exception, at.exception
    rubric = frame(at, "step", "score", "SKILL.md says", "solution runs")
    assert rubric["score"].tolist() == ["2 · exercises the skill", "1 · shares a tool or format"]
    assert rubric["SKILL.md says"].tolist()[0] == "python3 scripts/funnel_report.py funnel.json --format json"
    assert rubric["how"].tolist()[1].startswith("connective; no step exercises it: its SKILL.md runs no")
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert not at.exception, at.exception
    split = chart(at, f"synth_rubric_{RUN_ID}")
    assert list(plotly_array(split["data"][0]["x"])) == [len(made), len(made), 0]
    gaps = frame(at, "skill", "why not exercised", "steps")
    assert gaps.to_dict("records") == [{"skill": "csv-tricks", "why not exercised": RUBRIC_STEPS[1]["gap"],
                                        "steps": len(made)}]


def test_checks_stored_in_an_older_shape_still_display(graph_workspace, monkeypatch):
    """Rows written before details had one typed shape: the rubric's `tests` was a count (the
    page crashed with "'int' object is not iterable"); a row that fits no shape is shown raw."""
    ws = graph_workspace
    made = make_synth_fixture(ws)
    with ws.db.write() as con:
        con.execute("UPDATE task_checks SET details = ? WHERE task_id = ? AND check_name = 'rubric'",
                    [json.dumps({"problems": [], "tests": 2, "mapped": []}), made[0].task_id])
        con.execute("UPDATE task_checks SET details = ? WHERE task_id = ? AND check_name = 'decontam'",
                    [json.dumps({"matches": "not a list"}), made[0].task_id])
    at = open_page(ws, monkeypatch, "tasks.py")
    at.selectbox(key="detail_task").set_value(made[0].task_id).run()
    assert not at.exception, at.exception
    shown = [json.loads(j.value) for j in at.json]
    assert {"test_count": 2, "mapped": []} in shown
    raw = next(d for d in shown if "stored_details" in d)
    assert raw["stored_details"] == {"matches": "not a list"} and raw["details_problem"].startswith("matches:")


def test_a_cancelled_runs_task_reads_cancelled_and_the_page_opens_on_a_verified_task(graph_workspace,
                                                                                    monkeypatch):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    cancelled = add_cancelled_run(ws, made)  # the newest task: first in the table
    at = open_page(ws, monkeypatch, "tasks.py")
    # unverified tasks are hidden by default, and the page says so
    assert at.pills(key="f_verdict").value == ["accepted", "rejected"]
    assert _shown(at) == 3 and cancelled.name not in frame(at, "name", "verdict")["name"].tolist()
    assert any(c.value.startswith("1 unverified task(s) (pending, or cancelled with their run) are hidden")
               for c in at.caption)
    opened = at.selectbox(key="detail_task").value
    assert opened in {t.task_id for t in made} and not any(t.label == "Checks (0)" for t in at.tabs)
    # shown on request, as cancelled (not pending), with no image rather than "nan"
    at.pills(key="f_verdict").select("cancelled").run()
    assert _shown(at) == 4
    row = frame(at, "name", "verdict").set_index("name").loc[cancelled.name]
    assert row["verdict"] == "cancelled"
    at.selectbox(key="detail_task").set_value(cancelled.task_id).run()
    assert not at.exception, at.exception
    assert any(w.value.startswith(f"Cancelled: its run `{CANCELLED_RUN_ID}` was cancelled before this task "
                                  "was verified") and f"--resume --run-id {CANCELLED_RUN_ID}" in w.value
               for w in at.warning)
    caption = next(c.value for c in at.caption if c.value.startswith(f"`{cancelled.task_id}`"))
    assert "image `—`" in caption and "nan" not in caption


# --- Synthesis page ----------------------------------------------------------------------------------

def test_synthesis_page_lists_runs_and_the_progress_of_a_finished_run(graph_workspace, monkeypatch):
    ws = graph_workspace
    make_synth_fixture(ws)
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert not any("No scenario graph yet" in w.value for w in at.warning)
    runs = frame(at, "run_id", "status", "sampler")
    assert runs["run_id"].tolist() == [RUN_ID] and runs["status"].tolist() == ["finished"]
    assert at.selectbox(key="synth_run").value == RUN_ID
    assert any(s.value.startswith("Finished. 3 tasks synthesized, 1 accepted") for s in at.success)
    assert _progress(at) == ["paths sampled: 4 / 4", "paths through synthesis: 4 / 4",
                             "paths through verification: 4 / 4", "tasks accepted: 1 / 4",
                             "synthesis failures: 1 / 4"]
    assert [metric(at, store.FUNNEL_LABELS[k]) for k in store.FUNNEL] == [str(FUNNEL[k]) for k in store.FUNNEL]
    assert not [b for b in at.button if b.key == "synth_cancel"]  # nothing to cancel
    # The fixture's run has no log file (as a demo-build or CLI run): the page says so instead of
    # showing an empty log as if output were still to come.
    assert "(no output yet)" not in codes(at)
    assert any("keeps no log file" in c.value and "runs/demo-build.log" in c.value for c in at.caption)
    # the path that gave no task is listed with why
    failures = frame(at, "path_id", "error")
    assert failures["error"].tolist() == ["recipe 'git' found no repository to work on"]
    assert any(m.value.startswith("**Paths that gave no task (1)**") for m in at.markdown)


def test_a_run_whose_process_died_is_shown_interrupted_with_the_resume_hint(workspace, monkeypatch):
    ws = workspace
    proc = subprocess.Popen(["true"])  # its pid is free again once reaped
    proc.wait()
    store.create_run(ws.db, "synth-dead01", "inverse-frequency", 10, 0, "offline", 2, proc.pid)
    at = open_page(ws, monkeypatch, "synthesis.py")
    assert frame(at, "run_id", "status")["status"].tolist() == ["interrupted"]
    assert any(w.value.startswith(f"Interrupted: the batch process ({proc.pid}) is gone") for w in at.warning)
    assert f"workbench synth --workspace {ws.root} --resume --run-id synth-dead01" in codes(at)
    assert store.get_run(ws.db, "synth-dead01")["status"] == "running"  # the page only reads


def test_a_running_run_shows_live_progress_and_cancel_stops_its_process(workspace, monkeypatch):
    ws = workspace
    with stand_in_batch() as proc:
        store.create_run(ws.db, "synth-live01", "random-walk", 5, 0, "offline", 2, proc.pid)
        store.attach_paths(ws.db, "synth-live01", "b", ["p1", "p2", "p3", "p4", "p5"])
        store.set_path_stage(ws.db, "synth-live01", "p1", "synthesized", "t-p1")
        store.set_path_stage(ws.db, "synth-live01", "p2", "failed", error="recipe failed")
        (ws.runs_dir / "synth-live01").mkdir()
        (ws.runs_dir / "synth-live01" / "synth.log").write_text("synthesizing path p1\nLIVE-LOG-LINE\n")
        at = open_page(ws, monkeypatch, "synthesis.py")
        assert frame(at, "run_id", "status")["status"].tolist() == ["running"]
        assert any(i.value.startswith(f"Running (process {proc.pid}). It continues if you close this tab")
                   for i in at.info)
        assert _progress(at)[:3] == ["paths sampled: 5 / 5", "paths through synthesis: 2 / 5",
                                     "paths through verification: 1 / 5"]
        assert any("LIVE-LOG-LINE" in c for c in codes(at))
        cancel_stops(at, "synth_cancel", proc)


def test_launch_starts_a_background_batch_and_the_page_shows_its_failure(workspace, monkeypatch):
    """A real launch through the form: with no graph to sample from the batch process ends
    at once, and the page says so and shows its log."""
    ws = workspace
    at = open_page(ws, monkeypatch, "synthesis.py")
    at.selectbox(key="synth_sampler").set_value("random-walk")
    at.number_input(key="synth_paths").set_value(3)
    at.number_input(key="synth_seed").set_value(5)
    button(at, "synth_launch").click().run()
    assert not at.exception, at.exception
    runs = store.runs(ws.db)
    assert len(runs) == 1
    run = runs.iloc[0]
    assert (run["sampler"], int(run["n_paths"]), int(run["seed"]), run["provider"]) == ("random-walk", 3, 5, "offline")
    assert any(s.value == f"Started run {run['run_id']} in the background." for s in at.success)
    assert at.selectbox(key="synth_run").value == run["run_id"]
    wait_for_exit(ws, run)
    at.run()
    assert not at.exception, at.exception
    status = frame(at, "run_id", "status")["status"].iloc[0]
    assert status in ("failed", "interrupted")
    if status == "failed":
        assert any(e.value.startswith("Failed: ") for e in at.error)
    else:
        assert f"workbench synth --workspace {ws.root} --resume --run-id {run['run_id']}" in codes(at)
    log = jobs.log_tail(ws, run["run_id"])
    assert log.strip() and log.rstrip("\n") in codes(at)


def test_a_batch_launched_on_ray_passes_the_executor_and_address_to_its_process(workspace, monkeypatch):
    """Local is the default; ray with an address goes to the detached `workbench synth`, which
    says on the run that no cluster answers there (nothing listens on port 9)."""
    at = open_page(workspace, monkeypatch, "synthesis.py")
    executor = at.radio(key="synth_executor")
    assert executor.options == ["local", "ray"] and executor.value == "local"
    executor.set_value("ray")
    at.text_input(key="synth_ray_address").set_value("127.0.0.1:9")
    at.number_input(key="synth_paths").set_value(2)
    button(at, "synth_launch").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run = store.runs(workspace.db).iloc[0]
    wait_for_exit(workspace, run)
    assert "--executor ray --ray-address 127.0.0.1:9" in jobs.log_tail(workspace, run["run_id"]).splitlines()[0]
    final = store.get_run(workspace.db, run["run_id"])
    assert final["status"] == "failed" and "no Ray cluster answers at '127.0.0.1:9'" in final["message"], final


def test_a_batch_launched_without_skill_packages_says_so_to_its_process(workspace, monkeypatch):
    """Issue 24.2: the batch option reaches `workbench synth` (packages ship by default)."""
    at = open_page(workspace, monkeypatch, "synthesis.py")
    ship = at.checkbox(key="synth_ship_skills")
    assert ship.value is True
    ship.uncheck()
    at.number_input(key="synth_paths").set_value(1)
    button(at, "synth_launch").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run = store.runs(workspace.db).iloc[0]
    wait_for_exit(workspace, run)
    assert "--no-skill-packages" in jobs.log_tail(workspace, run["run_id"]).splitlines()[0]
