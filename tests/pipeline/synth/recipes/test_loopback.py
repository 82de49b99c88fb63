"""loopback-api-probe in Docker: the oracle runs the shipped service on 127.0.0.1 with no network;
a health-check script that says 'healthy' whatever the service answers fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_health_check_that_always_passes_fails():
    failed = oracle_passes_and_broken_fails(["loopback-api-probe", "group-aggregate"],
                                            "except Exception:\n    sys.exit(1)", "except Exception:\n    sys.exit(0)")
    assert [n for n in failed if n.endswith("_health_script")], failed
