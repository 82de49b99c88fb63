"""git-hook-guard in Docker: the tests commit through the solution's hook in a copy of the
repository; a hook that only knows `*.pem` lets `.key` files and `id_rsa` through and fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_hook_that_misses_key_files_fails():
    failed = oracle_passes_and_broken_fails(["table-filter-sort", "git-hook-guard"],
                                            "*.pem|*.key|id_rsa*)", "*.pem)")
    assert [n for n in failed if n.endswith("_keys")] and not [n for n in failed if n.endswith("_size")], failed
