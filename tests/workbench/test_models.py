"""Typed check details: one shape for every check, old rows still readable."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from workbench.models import CheckDetails, CheckResult


def test_check_results_are_stored_in_one_typed_shape():
    oracle = CheckResult(name="oracle", passed=True, details={
        "reward": 1.0, "exit_code": 0, "solve_exit_code": 0,
        "tests": [{"name": "test_a", "outcome": "passed", "message": None}]})
    assert oracle.details == {"reward": 1.0, "exit_code": 0, "solve_exit_code": 0,
                              "tests": [{"name": "test_a", "outcome": "passed", "message": ""}]}
    rubric = CheckResult(name="rubric", passed=True, details=CheckDetails(problems=[], test_count=3))
    assert rubric.details == {"problems": [], "test_count": 3}
    build = CheckResult(name="build", passed=True, details={"image": "img", "cached": False})
    assert build.details == {"image": "img", "cached": False}  # nothing invented for a check that has no tests


def test_a_count_in_tests_is_read_as_the_test_count():
    """The rubric used to store its count of test functions under `tests`."""
    d = CheckDetails.model_validate({"problems": [], "tests": 2})
    assert d.tests == [] and d.test_count == 2
    assert CheckResult(name="rubric", passed=True, details={"tests": 4}).details == {"tests": [], "test_count": 4}


def test_details_that_do_not_fit_are_refused_with_the_place():
    with pytest.raises(ValidationError, match=r"tests\.0\.outcome"):
        CheckResult(name="noop", passed=False, details={"tests": [{"name": "t", "outcome": "maybe"}]})
    with pytest.raises(ValidationError, match="problems"):
        CheckDetails.model_validate({"problems": "one big string"})
