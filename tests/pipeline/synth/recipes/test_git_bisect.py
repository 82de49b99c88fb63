"""git-bisect-regression in Docker: the oracle bisects, tags and tabulates; a solution that tags
the last good commit instead of the first bad one fails."""
import pytest

from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_tagging_the_commit_before_the_first_bad_one_fails():
    failed = oracle_passes_and_broken_fails(["git-bisect-regression", "json-convert"],
                                            "bad=$(git rev-parse refs/bisect/bad)",
                                            "bad=$(git rev-parse refs/bisect/bad~1)")
    assert any(n.endswith("_tag") for n in failed) and any(n.endswith("_hash") for n in failed), failed
