"""Fidelity and coverage figures of a synthesis batch, from step records and category lists."""
from __future__ import annotations

import pytest

from analysis.synth_fidelity import categories_due, category_coverage, fidelity_figures


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
