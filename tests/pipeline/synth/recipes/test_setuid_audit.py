"""setuid-audit in Docker: the oracle reports and fixes special bits set at image build time; a fix
that also strips the allowlisted setuid helper fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_stripping_the_allowlisted_setuid_bit_fails():
    failed = oracle_passes_and_broken_fails(["setuid-audit", "json-convert"],
                                            "if stat.S_ISREG(os.lstat(p).st_mode) and rel not in allowed:",
                                            "if stat.S_ISREG(os.lstat(p).st_mode):")
    assert [n for n in failed if n.endswith("_special_bits")] and not [n for n in failed if n.endswith("_modes")], failed
