"""accounts-provision in Docker: real users, groups and homes from a staff table; a solution that
gives every user the same group fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_users_in_one_shared_group_fail():
    failed = oracle_passes_and_broken_fails(["accounts-provision", "json-convert"],
                                            '"-g", group,', '"-g", "users",')
    assert [n for n in failed if n.endswith("_users")] and not [n for n in failed if n.endswith("_homes")], failed
