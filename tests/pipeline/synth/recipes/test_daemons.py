"""daemon-control in Docker: the tests run the control script against a pristine worker; a stop
that leaves the pidfile behind fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_stop_that_leaves_the_pidfile_fails():
    failed = oracle_passes_and_broken_fails(["archive-extract-verify", "daemon-control"],
                                            '    rm -f "$pidfile"\n', "    :\n")
    assert [n for n in failed if n.endswith("_stop")] and not [n for n in failed if n.endswith("_start")], failed
