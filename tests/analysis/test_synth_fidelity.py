"""Fidelity and coverage figures of a synthesis batch, from step records and category lists."""
from __future__ import annotations

import pytest

from analysis.synth_fidelity import (categories_due, category_coverage, exercise_gaps, fidelity_figures, rubric_figures,
                                     rubric_split_figure, step_rubric_rows)


def test_share_of_steps_using_their_skill_and_per_recipe():
    tasks = [[{"step": 1, "recipe": "json-convert", "fidelity": "tool"},
              {"step": 2, "recipe": "git-publish-tag", "fidelity": "category-only"}],
             [{"step": 1, "recipe": "json-convert", "fidelity": "artifact"},
              {"step": 2, "recipe": "git-publish-tag", "fidelity": "tool"}]]
    f = fidelity_figures(tasks)
    assert (f.tasks, f.steps) == (2, 4)
    assert f.levels == {"tool": 2, "artifact": 1, "category-only": 1}
    assert f.honoured_share == pytest.approx(0.75)
    assert f.by_recipe == {"git-publish-tag": 0.5, "json-convert": 1.0}
    assert fidelity_figures([]).honoured_share == 0.0


def test_an_unknown_fidelity_level_is_an_error_naming_the_task_and_step():
    with pytest.raises(ValueError, match=r"task 1, step 2: fidelity 'exact' is not one of tool, artifact"):
        fidelity_figures([[{"step": 1, "fidelity": "tool"}, {"step": 2, "fidelity": "exact"}]])


def test_category_coverage_counts_each_task_once_and_names_the_missing():
    cov = category_coverage([["git", "git", "databases"], ["databases"]], ["git", "databases", "log-analysis"])
    assert cov.covered == ("git", "databases") and cov.missing == ("log-analysis",)
    assert cov.tasks_per_category == {"git": 1, "databases": 2, "log-analysis": 0}


def test_categories_due_are_those_with_enough_accepted_skills():
    assert categories_due({"git": 15, "databases": 9, "log-analysis": 10}) == ("git", "log-analysis")


# --- the per-step rubric view (Tasks page) and the batch's exercise gaps (Synthesis page) ---

EXERCISED = {"step": 1, "skill_id": "s1", "skill_name": "funnel-report", "recipe": "skill-exercise", "score": 2,
             "evidence": {"via": "script", "uses": "scripts/funnel_report.py",
                          "skill_quote": "python3 scripts/funnel_report.py funnel.json --format json",
                          "solution_quote": "python3 /skills/funnel-report/scripts/funnel_report.py a.json",
                          "note": "runs the skill's bundled scripts/funnel_report.py"}}
CONNECTIVE = {"step": 2, "skill_id": "s2", "skill_name": "csv-tricks", "recipe": "table-filter-sort", "score": 1,
              "evidence": {"via": "kind", "uses": "csv-table", "note": "shares the state kind csv-table only"},
              "gap": "its SKILL.md runs no bundled script and documents no command of a tool it is about"}


def test_a_step_at_2_shows_both_quotes_and_a_connective_step_says_why():
    rows = step_rubric_rows([EXERCISED, CONNECTIVE])
    first, second = rows.iloc[0], rows.iloc[1]
    assert first["score"].startswith("2") and first["SKILL.md says"] == EXERCISED["evidence"]["skill_quote"]
    assert first["solution runs"].startswith("python3 /skills/funnel-report/")
    assert second["score"].startswith("1") and second["SKILL.md says"] == ""
    assert second["how"] == "connective; no step exercises it: " + CONNECTIVE["gap"]


def test_gaps_are_counted_per_skill_over_the_batch():
    gaps = exercise_gaps([[EXERCISED, CONNECTIVE], [dict(CONNECTIVE, step=1)], [EXERCISED]])
    assert gaps.to_dict("records") == [{"skill": "csv-tricks", "why not exercised": CONNECTIVE["gap"], "steps": 2}]
    assert exercise_gaps([[EXERCISED]]).empty


def test_the_split_figure_counts_every_score():
    fig = rubric_split_figure(rubric_figures([[EXERCISED, CONNECTIVE], [dict(CONNECTIVE, score=0)]]))
    assert list(fig.data[0].x) == [1, 1, 1] and fig.layout.xaxis.tickformat == "d"
