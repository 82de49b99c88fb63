"""A reward is believed only together with the per-test outcomes it summarises."""
from pipeline.synth.test_sh import TEST_SH
from pipeline.verify.reward import REWARD_ONLY, contradiction, read_reward, read_tests, reward_only

PASS = {"name": "test_a", "outcome": "passed", "message": ""}
FAIL = {"name": "test_b", "outcome": "failed", "message": "assert"}
JUNIT_ONE_FAIL = b'<testsuite><testcase name="test_b"><failure message="no"/></testcase></testsuite>'


def test_reward_json_wins_and_garbage_is_no_reward():
    assert read_reward({"verifier/reward.txt": b"1\n"})[0] == 1.0
    assert read_reward({"verifier/reward.txt": b"0.5", "verifier/reward.json": b'{"a": 1, "b": 0.5}'})[0] == 0.5
    assert read_reward({"verifier/reward.txt": b"lots"})[0] is None
    assert read_reward({"verifier/reward.json": b"{not json"})[0] is None
    assert read_reward({})[0] is None


def test_a_reward_contradicting_its_tests_is_named():
    # A planted reward.json beside the run's own reward.txt and JUnit file (issue 11.1).
    files = {"verifier/reward.txt": b"0\n", "verifier/reward.json": b'{"reward": 1}', "verifier/junit.xml": JUNIT_ONE_FAIL}
    reward, extra = read_reward(files)
    tests = read_tests(files)
    assert reward == 1.0 and [t["outcome"] for t in tests] == ["failed"]
    why = contradiction(reward, tests, extra)
    assert "contradicts the per-test outcomes: 1 of 1 tests failed (test_b)" in why
    assert "reward.json gives 1.0, reward.txt gives 0.0" in contradiction(0.0, [FAIL], extra)


def test_zero_tests_or_only_skips_prove_nothing():
    assert "0 tests collected" in contradiction(1.0, [], {})   # issue 11.2: python3 replaced by `exit 0`
    assert "none of the 1 tests passed" in contradiction(1.0, [{**PASS, "outcome": "skipped"}], {})
    assert contradiction(1.0, [PASS], {}) is None and contradiction(0.0, [FAIL], {}) is None
    assert contradiction(None, [], {}) is None   # no reward at all is reported elsewhere


def test_ctrf_is_read_when_there_is_no_junit():
    files = {"verifier/ctrf.json": b'{"results": {"tests": [{"name": "t", "status": "passed"}]}}'}
    assert read_tests(files) == [{"name": "t", "outcome": "passed", "message": ""}]


REWARD_ONLY_SH = "#!/bin/bash\n[ \"$(cat /app/sum.txt)\" = 6 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"


def test_a_test_sh_that_never_asks_for_outcomes_is_believed_on_its_reward_alone():
    files = {"verifier/reward.txt": b"1\n"}
    assert reward_only(files, REWARD_ONLY_SH)
    reward, extra = read_reward(files)
    assert contradiction(reward, read_tests(files), {**extra, "reward_only": True}) is None
    assert "--junitxml=/logs/verifier/junit.xml" in REWARD_ONLY   # says how to emit outcomes


def test_a_test_sh_that_asks_for_outcomes_and_leaves_none_is_still_a_contradiction():
    # our own test.sh names JUnit: pytest stopped before writing it (a planted ini or conftest) proves nothing
    files = {"verifier/reward.txt": b"1\n"}
    assert not reward_only(files, TEST_SH)
    assert not reward_only({**files, "verifier/junit.xml": b"<testsuite/>"}, REWARD_ONLY_SH)  # a file naming no test
    assert not reward_only({}, REWARD_ONLY_SH)                                                # no reward either
    assert "0 tests collected" in contradiction(1.0, [], {})
