"""loopback-api-probe in Docker: the oracle runs the shipped service on 127.0.0.1 with no network
and probes it with curl; a health-check script that says 'healthy' whatever the service answers
fails, and so does a probe that follows redirects (curl -L reports the 301's target)."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_health_check_that_always_passes_fails():
    failed = oracle_passes_and_broken_fails(["loopback-api-probe", "group-aggregate"],
                                            "/health\")\" = 200 ]", "/health\")\" = 200 ] || true")
    assert [n for n in failed if n.endswith("_health_script")], failed


def test_a_probe_that_follows_redirects_fails():
    failed = oracle_passes_and_broken_fails(["loopback-api-probe", "group-aggregate"],
                                            "curl -s -o /dev/null -w", "curl -sL -o /dev/null -w")
    assert [n for n in failed if n.endswith("_probe")] and not [n for n in failed if n.endswith("_health_script")], failed
