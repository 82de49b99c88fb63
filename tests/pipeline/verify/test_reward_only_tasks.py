"""Issue 22.6b: a foreign Harbor task whose tests/test.sh writes only reward.txt (no JUnit, no CTRF),
which Harbor runs fine, is verified on its reward in the sealed test phase, with a warning naming the
missing per-test outcomes; its no-op and a wrong solution still fail. Real containers."""
from __future__ import annotations

import pytest

from pipeline.verify.reward import REWARD_ONLY
from pipeline.verify.run import verify_bundle
from tests.helpers import sum_bundle
from tests.pipeline.verify.test_reward import REWARD_ONLY_SH
from workbench.sandbox.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _checks(solve: str) -> dict:
    bundle = sum_bundle(solve, extra_files={"tests/test.sh": REWARD_ONLY_SH})
    return {c.name: c for c in verify_bundle(bundle, engine=Engine())}


def test_a_reward_only_task_is_accepted_with_a_warning_and_still_catches_a_wrong_solution():
    good = _checks("echo 6 > /app/sum.txt")
    assert all(c.passed for c in good.values()), {n: c.reason for n, c in good.items() if not c.passed}
    assert REWARD_ONLY in good["oracle"].reason and REWARD_ONLY in good["noop"].reason
    assert good["oracle"].details["reward"] == 1.0 and good["noop"].details["reward"] == 0.0
    wrong = _checks("echo 7 > /app/sum.txt")
    assert not wrong["oracle"].passed and "still fail" in wrong["oracle"].reason
