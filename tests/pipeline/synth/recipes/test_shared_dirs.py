"""shared-group-folder in Docker: the oracle makes a setgid group folder; one without the setgid
bit (mode 0770) fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_shared_folder_without_the_setgid_bit_fails():
    failed = oracle_passes_and_broken_fails(["table-filter-sort", "shared-group-folder"],
                                            "chmod 2770", "chmod 770")
    assert any(n.endswith("_folder") for n in failed) and any(n.endswith("_modes") for n in failed), failed
