"""Filtering, funnel, check breakdowns, per-test outcomes and bundle listings."""
from __future__ import annotations


import numpy as np
import pandas as pd

from analysis import tasks_view as tv
from pipeline.graph.sample_run import SAMPLERS
from workbench.store.tasks import FUNNEL, FUNNEL_LABELS


def _tasks() -> pd.DataFrame:
    rows = [
        # task_id, name, category, n_steps, skill_ids, verdict, failed_check, reason, checks (build..decontam)
        ("t1", "org/count-errors", "log-analysis", 2, ["s1", "s2"], "accepted", None, None, (1, 1, 1, 1, 1)),
        ("t2", "org/csv-sum", "data", 3, ["s2", "s3", "s4"], "rejected", "oracle", "count off by one",
         (1, 1, 0, None, None)),
        ("t3", "org/git-log", "git", 4, ["s5", "s3", "s5", "s1"], "rejected", "oracle", "count off by one",
         (1, 1, 0, None, None)),
        ("t4", "org/cron-job", "data", 1, ["s4"], "rejected", "build", "apt-get failed", (0, None, None, None, None)),
        ("t5", "org/perm-fix", "files", 2, ["s6", "s6"], "pending", None, None, (None,) * 5),
    ]
    out = []
    for tid, name, cat, n, skills, verdict, failed, reason, checks in rows:
        row = {"task_id": tid, "name": name, "category": cat, "n_steps": n,
               "skill_ids": np.array(skills, dtype=object),  # DuckDB lists come back as arrays
               "verdict": verdict, "failed_check": failed, "reason": reason}
        for check, ok in zip(("build", "noop", "oracle", "rubric", "decontam"), checks):
            row[f"{check}_ok"] = None if ok is None else bool(ok)
        out.append(row)
    return pd.DataFrame(out)


def _skills() -> pd.DataFrame:
    return pd.DataFrame({"id": ["s1", "s2", "s3", "s4", "s5"],
                         "name": ["grep-logs", "csv-tools", "awk-report", "cron-edit", "git-history"]})


def test_the_funnel_stages_and_samplers_match_their_sources():
    assert tv.FUNNEL == FUNNEL and tv.FUNNEL_LABELS == FUNNEL_LABELS
    assert tv.SAMPLERS == SAMPLERS


def test_skill_names_are_joined_in_path_order():
    t = tv.with_skill_names(_tasks(), _skills()).set_index("task_id")
    assert t.loc["t3", "skill_names"] == ["git-history", "awk-report", "git-history", "grep-logs"]
    assert t.loc["t5", "skill_names"] == ["s6", "s6"]  # a skill no longer in the store keeps its id
    opts = tv.skill_options(_tasks(), _skills())
    # most used first (a skill counted once per task, however often the path repeats it)
    assert list(opts) == ["s3", "s4", "s2", "s1", "s5", "s6"]  # ties by name
    assert opts["s5"] == "git-history · 1 task" and opts["s3"] == "awk-report · 2 tasks"
    assert opts["s6"].startswith("s6 · 1 task")


def test_task_path_pairs_skills_with_their_start_scenarios():
    t = tv.with_skill_names(_tasks(), _skills()).set_index("task_id")
    row = t.loc["t2"].to_dict() | {"scenario_ids": np.array(["a0", "a1"], dtype=object)}
    path = tv.task_path(row)
    assert path["skill"].tolist() == ["csv-tools", "awk-report", "cron-edit"]
    assert path["from scenario"].tolist() == ["a0", "a1", ""]  # fewer scenarios than steps: padded
    assert path["step"].tolist() == [0, 1, 2]


def test_task_path_says_per_step_which_recipe_and_what_of_its_skill_it_uses():
    t = tv.with_skill_names(_tasks(), _skills()).set_index("task_id")
    row = t.loc["t2"].to_dict() | {"scenario_ids": np.array(["a0", "a1", "a2"], dtype=object)}
    fidelity = [{"step": 1, "recipe": "csv-filter", "fidelity": "tool", "tools_used": ["awk"], "kinds_used": []},
                {"step": 2, "recipe": "json-convert", "fidelity": "artifact", "tools_used": [],
                 "kinds_used": ["json-document", "csv-table"]},
                {"step": 3, "recipe": "cron-schedule", "fidelity": "category-only", "tools_used": [], "kinds_used": []}]
    path = tv.task_path(row, fidelity)
    assert path["recipe"].tolist() == ["csv-filter", "json-convert", "cron-schedule"]
    assert path["uses of the skill"].tolist() == ["tool: awk", "artifact: json-document, csv-table", "category only"]
    assert "recipe" not in tv.task_path(row, None).columns   # a task made before fidelity was stored


def test_filters_narrow_by_verdict_category_length_skills_and_words():
    t = tv.with_skill_names(_tasks(), _skills())
    ids = lambda f: tv.filter_tasks(t, f)["task_id"].tolist()  # noqa: E731
    assert ids(tv.TaskFilter()) == ["t1", "t2", "t3", "t4", "t5"]
    assert ids(tv.TaskFilter(verdicts=("rejected",))) == ["t2", "t3", "t4"]
    assert ids(tv.TaskFilter(verdicts=("rejected",), categories=("data",))) == ["t2", "t4"]
    assert ids(tv.TaskFilter(steps=(2, 3))) == ["t1", "t2", "t5"]
    assert ids(tv.TaskFilter(skill_ids=("s3",))) == ["t2", "t3"]
    assert ids(tv.TaskFilter(skill_ids=("s1", "s4"))) == ["t1", "t2", "t3", "t4"]
    assert ids(tv.TaskFilter(query="GIT")) == ["t3"]             # task name
    assert ids(tv.TaskFilter(query="awk report")) == ["t2", "t3"]  # source skill names, every word
    assert ids(tv.TaskFilter(verdicts=("accepted",), steps=(3, 4))) == []
    assert tv.steps_range(t) == (1, 4) and tv.steps_range(t.iloc[0:0]) == (0, 0)


def test_funnel_figure_and_yield():
    funnel = {"sampled": 20, "synthesized": 18, "built": 17, "noop": 15, "oracle": 12, "redteam": 11, "rubric": 11,
              "decontam": 11, "judge": 10, "accepted": 10}
    assert tv.yield_ratio(funnel) == 0.5
    assert tv.yield_ratio(dict.fromkeys(FUNNEL, 0)) == 0.0
    fig = tv.funnel_figure(funnel)
    trace = fig.data[0]
    assert trace.type == "funnel"
    assert list(trace.y) == ["sampled", "synthesized", "built", "no-op ok", "oracle ok", "red-team ok", "rubric ok",
                             "decontam ok", "judge ok", "accepted"]
    assert list(trace.x) == [20, 18, 17, 15, 12, 11, 11, 11, 10, 10]
    assert fig.layout.title.text == "10 verified of 20 sampled (50% yield)"


def test_pass_rates_and_failure_breakdown():
    t = _tasks()
    rates = tv.check_pass_rates(t).set_index("check")
    assert rates.loc["build", ["ran", "passed"]].tolist() == [4, 3]
    assert rates.loc["oracle", ["ran", "passed"]].tolist() == [3, 1]
    assert abs(rates.loc["oracle", "pass_rate"] - 1 / 3) < 1e-12
    assert rates.loc["decontam", "ran"] == 1
    fig = tv.pass_rate_figure(tv.check_pass_rates(t))
    assert list(fig.data[0].y) == ["build", "no-op fails", "oracle passes", "rubric", "decontamination"]
    b = tv.failure_breakdown(t)
    assert b["failed_check"].tolist() == ["build", "oracle"]  # verification order, not alphabetical by chance
    assert b["tasks"].tolist() == [1, 2]
    assert b.set_index("failed_check").loc["oracle", "top_reason"] == "count off by one"
    assert abs(b["share"].sum() - 1.0) < 1e-12
    assert list(tv.failure_figure(b).data[0].x) == [1, 2]
    ticks = tv.failure_figure(b).layout.xaxis  # the walk: "Why rejected" ticked 0.5 tasks
    assert (ticks.tick0, ticks.dtick, ticks.tickformat) == (0, 1, ",d")
    assert tv.failure_breakdown(t[t["verdict"] != "rejected"]).empty


def test_per_test_outcomes_and_other_details():
    details = {"tests": [{"name": "test_a", "outcome": "passed", "message": None},
                         {"name": "test_b", "outcome": "failed", "message": "assert 41 == 42"},
                         {"name": "test_c", "outcome": "skipped"},
                         {"name": "test_d", "outcome": "error", "message": "fixture missing"}],
               "reward": 0.0, "exit_code": 1}
    df = tv.per_test_outcomes(details)
    assert df["test"].tolist() == ["test_b", "test_d", "test_a", "test_c"]  # failures first
    assert df.set_index("test").loc["test_b", "message"] == "assert 41 == 42"
    assert df.set_index("test").loc["test_a", "message"] == ""
    assert tv.outcome_summary(details) == "1 failed, 1 error, 1 passed, 1 skipped, reward 0.0"
    assert tv.other_details(details) == {"reward": 0.0, "exit_code": 1}
    assert tv.per_test_outcomes({}).empty and tv.per_test_outcomes(None).empty
    assert tv.outcome_summary({"reward": 1.0}) == "reward 1.0"


def test_check_details_read_old_and_broken_rows_without_failing():
    old_rubric = {"problems": [], "tests": 3, "mapped": []}  # `tests` was the rubric's count
    assert tv.per_test_outcomes(old_rubric).empty and tv.outcome_summary(old_rubric) == ""
    assert tv.other_details(old_rubric) == {"test_count": 3, "mapped": []}
    broken = {"tests": [{"name": "t", "outcome": "passed"}, "not a test"], "reward": 1.0}
    d = tv.check_details(broken)
    assert d.tests == [] and d.details_problem.startswith("tests.1:")
    assert tv.other_details(broken)["stored_details"] == broken  # kept whole, shown raw
    assert tv.check_details("not even a mapping").stored_details == "not even a mapping"


def test_rubric_problems_and_decontam_matches_as_tables():
    problems = tv.detail_items({"problems": ["solution leaked in instruction", "test checks unnamed file"]},
                               "problems")
    assert problems["problems"].tolist() == ["solution leaked in instruction", "test checks unnamed file"]
    matches = tv.detail_items({"matches": [{"benchmark": "tb2", "task": "count-lines", "ngram": "a b c",
                                            "where": ["instruction.md"]}]}, "matches")
    assert matches.iloc[0]["task"] == "count-lines" and matches.iloc[0]["where"] == "['instruction.md']"
    assert tv.detail_items({"matches": []}, "matches").empty


def test_check_title():
    ok = {"check_name": "oracle", "passed": True, "seconds": 1.234, "reason": "tests pass"}
    bad = {"check_name": "noop", "passed": False, "seconds": 0.5, "reason": ""}
    assert tv.check_title(ok) == "oracle passes · 1.2 s — tests pass"
    assert tv.check_title(bad) == "no-op fails · 0.5 s"
    assert tv.check_icon(True) != tv.check_icon(False)


def test_file_tree_orders_kinds_and_guesses_languages():
    files = {"tests/test_outputs.py": b"def test_x(): pass\n", "solution/solve.sh": b"#!/bin/bash\n",
             "environment/app/data.csv": b"a,b\n1,2\n", "environment/Dockerfile": b"FROM base\n",
             "task.toml": b"[task]\n", "instruction.md": b"# Do it\n", "tests/test.sh": b"#!/bin/bash\n",
             "environment/app/blob.bin": bytes(range(256)), "environment/app/notes.txt": "café\n".encode()}
    tree = tv.file_tree(files)
    assert tree["path"].tolist() == ["instruction.md", "task.toml", "environment/Dockerfile",
                                     "environment/app/blob.bin", "environment/app/data.csv",
                                     "environment/app/notes.txt", "solution/solve.sh", "tests/test.sh",
                                     "tests/test_outputs.py"]
    by = tree.set_index("path")
    assert by.loc["environment/app/blob.bin", "binary"] and not by.loc["environment/app/notes.txt", "binary"]
    assert by.loc["environment/app/blob.bin", "size"] == 256
    assert by["kind"].tolist()[:3] == ["instruction", "task config", "environment"]
    assert by.loc["environment/Dockerfile", "language"] == "docker"
    assert by.loc["tests/test_outputs.py", "language"] == "python"
    assert by.loc["solution/solve.sh", "language"] == "bash"
    assert by.loc["task.toml", "language"] == "toml" and by.loc["instruction.md", "language"] == "markdown"
    assert tv.language_for("environment/app/crontab") == "bash"
    assert tv.language_for("environment/app/Dockerfile.base") == "docker"
    assert tv.language_for("environment/app/README") == "text"
    assert tv.file_tree({}).empty


def test_text_files_cut_at_a_cap_and_binary_detection_at_the_boundary():
    text, cut = tv.file_text(b"x" * 10, cap=4)
    assert (text, cut) == ("xxxx", True)
    assert tv.file_text("héllo".encode()) == ("héllo", False)
    # a multi-byte character split by the 8 KiB sniffing window is still text
    assert not tv.is_binary(b"a" * 8191 + "é".encode())
    assert tv.is_binary(b"\xff\xfe\x00a")


def test_pending_tasks_of_an_ended_run_read_cancelled_and_verified_ones_come_first():
    t = pd.DataFrame({"task_id": ["new", "mid", "old", "live", "lone"],
                      "verdict": ["pending", "rejected", "accepted", "pending", "pending"],
                      "run_status": ["cancelled", "finished", "finished", "running", None]})
    shown = tv.with_shown_verdicts(t)
    assert shown["verdict"].tolist() == ["cancelled", "rejected", "accepted", "pending", "pending"]
    assert tv.with_shown_verdicts(t.assign(run_status="failed"))["verdict"].tolist()[0] == "cancelled"
    assert tv.default_verdicts(shown) == ["accepted", "rejected"]
    assert tv.default_verdicts(shown[shown["verdict"] == "pending"]) == []  # nothing verified: show all
    assert tv.default_task(shown) == "mid"            # the first verified task, not the newest row
    assert tv.default_task(shown.iloc[[0, 3]]) == "new" and tv.default_task(shown.iloc[:0]) is None
    assert tv.hidden_unverified(shown, ["rejected", "accepted"]) == 3
    assert tv.hidden_unverified(shown, ["accepted"]) == 0   # a filter the user chose says nothing extra


def test_a_withdrawn_accepted_task_reads_withdrawn_and_is_listed_by_default():
    t = pd.DataFrame({"task_id": ["a", "w", "r", "p"], "verdict": ["accepted", "accepted", "rejected", "pending"],
                      "run_status": ["finished"] * 4, "withdrawn": [False, True, None, None]})
    shown = tv.with_shown_verdicts(t)
    assert shown["verdict"].tolist() == ["accepted", "withdrawn", "rejected", "pending"]
    assert tv.default_verdicts(shown) == ["accepted", "rejected", "withdrawn"]
    assert tv.default_verdicts(tv.with_shown_verdicts(t.assign(withdrawn=False))) == ["accepted", "rejected"]
    assert tv.hidden_unverified(shown, ["accepted", "rejected", "withdrawn"]) == 1   # only the pending one



def test_a_task_made_by_a_test_double_says_so_in_its_provider_and_cost_header():
    """Issue 22.4: the demo's scripted replay tasks read as provider `llm` with an "LLM cost" at a
    made-up price; the provider now names the double and the cost header says whose it is."""
    tasks = pd.DataFrame({"task_id": ["a", "b", "c"], "provider": ["llm", "llm", "offline"],
                          "llm_model": ["scripted-replay (demo price)", "gpt-x", None]})
    labelled = tv.with_provider_labels(tasks).set_index("task_id")
    assert labelled["provider_label"].to_dict() == {"a": "llm · scripted-replay (demo price, test double)",
                                                    "b": "llm · gpt-x", "c": "offline"}
    assert labelled["provider"].tolist() == ["llm", "llm", "offline"]        # as stored: rules read it
    assert tv.made_by_double(tasks).tolist() == [True, False, False]
    assert "test double" in tv.cost_column_label(tasks) and "made-up price" in tv.cost_column_label(tasks)
    assert tv.cost_column_label(tasks.iloc[1:]) == "LLM cost"
    assert tv.cost_column_label(tasks.drop(columns="llm_model")) == "LLM cost"
