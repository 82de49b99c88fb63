"""Typed failures: the artifact at fault and the evidence of every failed check, and the
verdict rule. The Docker routes come from real verify_bundle runs on broken sum bundles;
the rubric from the real static rubric; the rest from CheckResults shaped as the checks
write them (docker_checks' early-return and test-phase shapes)."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.verify.decontam import check_decontam
from pipeline.verify.failures import CHECK_NAMES, Failure, failures_of, first_failed, verdict
from pipeline.verify.rubric import check_rubric
from pipeline.verify.run import verify_bundle
from tests.helpers import SUM_SENTENCE, sum_bundle
from workbench.models import CheckResult
from workbench.models import CHECK_NAMES as STORED_NAMES
from workbench.sandbox.engine import Engine


def _tests(body: str, doc: str = SUM_SENTENCE) -> dict:
    return {"tests/test_outputs.py": f'def test_sum():\n    """{doc}"""\n{body}'}


BROKEN = {
    "crashing-solve": sum_bundle("echo 'cannot parse numbers.txt' >&2; exit 3", name="workbench/crash"),
    "wrong-test": sum_bundle(name="workbench/wrong",
                             extra_files=_tests('    assert open("/app/sum.txt").read().strip() == "7"\n')),
    "passes-untouched": sum_bundle(name="workbench/untouched",
                                   extra_files=_tests('    assert open("/app/numbers.txt").read()\n')),
    "goal-holds": sum_bundle(name="workbench/holds", extra_files={"environment/app/sum.txt": "6\n"}),
    "collection-error": sum_bundle(name="workbench/collect",
                                   extra_files={"tests/test_outputs.py": "import no_such_module_here\n\n"
                                                + _tests("    assert True\n")["tests/test_outputs.py"]}),
    "broken-dockerfile": sum_bundle(dockerfile_extra="RUN echo 'no such package: jq-ultra' >&2 && exit 7\n",
                                    name="workbench/badbuild"),
}


@pytest.fixture(scope="module")
def verified() -> dict[str, list[CheckResult]]:
    engine = Engine()
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(BROKEN, pool.map(lambda b: verify_bundle(b, engine=engine), BROKEN.values())))


def _only(checks: list[CheckResult]) -> Failure:
    failures = failures_of(checks)
    assert len(failures) == 1, failures
    return failures[0]


@pytest.mark.docker
def test_a_crashing_solution_is_the_solutions_fault_with_its_output(verified):
    f = _only(verified["crashing-solve"])
    assert (f.check, f.artifact, f.repairable) == ("oracle", "solution", True)
    assert "exited with code 3" in f.reason
    assert "cannot parse numbers.txt" in f.evidence            # solve.sh's own output, not pytest's
    assert not any("pytest" in line for line in f.evidence)
    assert f.failing_tests == ["test_sum"]


@pytest.mark.docker
def test_tests_that_fail_after_a_clean_solution_are_the_tests_fault(verified):
    f = _only(verified["wrong-test"])
    assert (f.check, f.artifact) == ("oracle", "tests")
    assert f.failing_tests == ["test_sum"]
    assert any(line.startswith("test_sum: failed") and "assert" in line for line in f.evidence)
    assert any("FAILED" in line for line in f.evidence)       # the tail of the pytest run


@pytest.mark.docker
def test_tests_passing_untouched_are_the_tests_fault_unless_the_goal_already_holds(verified):
    checks = verified["passes-untouched"]
    f = _only(checks)
    assert (f.check, f.artifact) == ("noop", "tests") and "pass on the untouched environment" in f.reason
    # The environment ships /app/sum.txt with the answer: the constructor saw the reference solution
    # change nothing and says so (pipeline/synth/llm/repair_loop.goal_in_initial_state).
    checks = verified["goal-holds"]
    assert _only(checks).artifact == "tests"                  # without the hint
    noop = next(c for c in checks if c.name == "noop")
    hinted = [noop.model_copy(update={"details": {**noop.details, "goal_in_initial_state": True}})
              if c is noop else c for c in checks]
    f = _only(hinted)
    assert (f.check, f.artifact) == ("noop", "environment") and "already holds the goal" in f.reason


@pytest.mark.docker
def test_a_collection_error_is_the_tests_fault(verified):
    failures = failures_of(verified["collection-error"])
    assert failures and {f.artifact for f in failures} == {"tests"}
    assert any("no_such_module_here" in line for f in failures for line in f.evidence)


@pytest.mark.docker
def test_a_broken_dockerfile_is_the_environments_fault_with_the_build_log(verified):
    checks = verified["broken-dockerfile"]
    assert [c.name for c in checks] == ["build", "rubric", "decontam"]
    f = _only(checks)
    assert (f.check, f.artifact) == ("build", "environment")
    assert "no such package: jq-ultra" in f.evidence                   # colour codes gone
    assert f.evidence[-1].endswith("returned a non-zero code: 7")
    assert not any("--->" in line or "intermediate container" in line for line in f.evidence)
    assert len(f.evidence) <= 30


# ---------------------------------------------------------------- shapes of the oracle's early returns
def _oracle(reason: str, **details) -> CheckResult:
    return CheckResult(name="oracle", passed=False, reason=reason,
                       log="$ bash /solution/solve.sh\nforking...\nbash: fork: retry: Resource temporarily unavailable",
                       details=details)


@pytest.mark.parametrize("check, artifact", [
    # solve.sh stopped by a limit: no tests ran (docker_checks returns before the test phase)
    (_oracle("solution/solve.sh ran past its 30 s limit and was killed", solve_exit_code=None, timed_out=True,
             output_capped=False, tests=[]), "solution"),
    (_oracle("solution/solve.sh ran out of its 512 MB memory limit (killed by the kernel, exit 137)",
             solve_exit_code=137, timed_out=False, output_capped=False, tests=[]), "solution"),
    # processes solve.sh left behind kept forking and were killed before the tests
    (_oracle("solution/solve.sh left processes behind that kept forking (950 killed before the tests; the limit "
             "is 1024): process limit reached: something forks without end", reward=0.0, exit_code=0,
             tests=[{"name": "test_sum", "outcome": "failed"}], solve_exit_code=0), "solution"),
    (_oracle("the test phase could not start clean: 3 processes could not be stopped", reward=None, tests=[],
             exit_code=None), "solution"),
    # the test phase itself went wrong after a clean solution
    (_oracle("tests/test.sh wrote no readable reward to /logs/verifier/reward.txt or reward.json; exit code 2",
             reward=None, tests=[], exit_code=2, solve_exit_code=0), "tests"),
    (_oracle("tests/test.sh ran past its 30 s limit and was killed", reward=None, tests=[], exit_code=None,
             solve_exit_code=0), "tests"),
    (_oracle("the tests reported reward 1 but no per-test outcomes: 0 tests collected", reward=1.0, tests=[],
             exit_code=0, solve_exit_code=0), "tests"),
    (_oracle("the tests leave files behind that other tests could read: /app/out.txt", reward=1.0, exit_code=0,
             tests=[{"name": "test_sum", "outcome": "passed"}], solve_exit_code=0, test_writes=["/app/out.txt"]),
     "tests"),
])
def test_oracle_routes(check, artifact):
    f = _only([CheckResult(name="build", passed=True), check])
    assert f.artifact == artifact and f.check == "oracle" and f.reason == check.reason


def test_a_broken_verifier_toolchain_is_no_artifacts_fault():
    ours = CheckResult(name="noop", passed=False, reason="the verifier's own toolchain could not be used: "
                       "base image workbench/base:abc is missing: run `workbench images bootstrap`")
    theirs = CheckResult(name="oracle", passed=False, reason="the verifier's own toolchain could not be used: "
                         "the environment has its own /opt/wb-verifier (a link to /tmp); remove it")
    a, b = failures_of([ours, theirs])
    assert (a.check, a.repairable) == ("noop", False)
    assert (b.check, b.artifact, b.repairable) == ("oracle", "environment", True)


def test_a_noop_that_cannot_start_clean_blames_the_environment():
    f = _only([CheckResult(name="noop", passed=False, reason="the test phase could not start clean: exit code 1: x",
                           details={"reward": None, "tests": [], "exit_code": None})])
    assert f.artifact == "environment"


# ---------------------------------------------------------------- rubric, decontam, judge: split per artifact
def test_rubric_problems_are_split_per_artifact():
    solve_line = "python3 -c \"print(sum(int(x) for x in open('/app/numbers.txt')))\" > /app/sum.txt"
    leaky = sum_bundle(extra_files={
        "instruction.md": f"# Sum the numbers\n\n1. {SUM_SENTENCE}\n\nRun `{solve_line}`.\n",
        "tests/test_outputs.py": ('def test_sum():\n    """Check the sum."""\n'
                                  '    assert open("/app/sum.txt").read().strip() == "6"\n'
                                  'def test_log():\n    """' + SUM_SENTENCE + '"""\n'
                                  '    assert open("/app/run.log").read()\n')})
    rubric = check_rubric(leaky)
    failures = failures_of([rubric])
    assert [f.artifact for f in failures] == ["tests", "instruction"]
    tests, instruction = failures
    assert all(f.check == "rubric" for f in failures)
    assert len(tests.evidence) == 1 and "is not a sentence of instruction.md" in tests.evidence[0]
    assert any("gives away the solution" in p for p in instruction.evidence)
    assert any("reads /app/run.log, which instruction.md never mentions" in p for p in instruction.evidence)
    assert instruction.reason.startswith(f"{len(instruction.evidence)} rubric problem(s) about instruction")


def test_rubric_with_no_tests_and_environment_copies():
    b = sum_bundle(extra_files={"tests/test_outputs.py": "X = 1\n", "environment/app/solve.sh": "#!/bin/bash\n"})
    failures = failures_of([check_rubric(b)])
    assert [f.artifact for f in failures] == ["environment", "tests"]
    assert "no pytest test functions" in failures[1].evidence[0]


def test_decontam_blames_the_file_that_shares_the_ngram(tmp_path):
    from pipeline.verify.decontam import BenchmarkIndex
    copied = "Then print every word of the file in reverse order and count each line of it twice over"
    (tmp_path / "bench.md").write_text(f"Task: {copied}.")
    b = sum_bundle(extra_files={"instruction.md": f"# Sum\n\n{SUM_SENTENCE} {copied}.\n"})
    f = _only([check_decontam(b, BenchmarkIndex.build(tmp_path))])
    assert (f.check, f.artifact) == ("decontam", "instruction") and "bench.md" in f.evidence[0]
    # the same run in solve.sh is the solution's to lose
    b = sum_bundle(solve=f"echo '{copied}' > /dev/null")
    f = _only([check_decontam(b, BenchmarkIndex.build(tmp_path))])
    assert f.artifact == "solution"


def test_judge_failures_follow_each_criterions_artifact():
    judge = CheckResult(name="judge", passed=False, reason="requirements_tested failed", details={"criteria": [
        {"name": "requirements_tested", "passed": False, "evidence": "the sum is never checked", "artifact": "tests"},
        {"name": "tests_asked_for", "passed": False, "evidence": "test_log", "artifact": "tests",
         "note": "no sentence asks for a log", "where": "tests/test_outputs.py::test_log"},
        {"name": "no_solution_leak", "passed": True, "evidence": "", "artifact": "instruction"},
        {"name": "unambiguous", "passed": False, "evidence": "'the numbers' may mean either file",
         "artifact": "instruction"},
        {"name": "exercises_skills", "passed": False, "evidence": "jq never used", "artifact": "instruction"}]})
    tests, instruction = failures_of([judge])
    assert (tests.artifact, tests.evidence) == ("tests", ["requirements_tested: the sum is never checked",
                                                          "tests_asked_for: no sentence asks for a log "
                                                          "(evidence tests/test_outputs.py::test_log: 'test_log')"])
    assert instruction.artifact == "instruction" and len(instruction.evidence) == 2
    assert "unambiguous" in instruction.reason and "2 judge criteria failed about instruction" in instruction.reason
    unusable = CheckResult(name="judge", passed=False, reason="no usable verdict: made-up quote",
                           details={"criteria": [], "unusable": True})     # as pipeline/judge writes it
    assert [f.repairable for f in failures_of([unusable])] == [False]


# ---------------------------------------------------------------- the verdict rule
def test_verdict_needs_one_check_and_every_check_passed():
    ok = [CheckResult(name=n, passed=True) for n in ("build", "noop", "oracle", "rubric", "decontam")]
    assert verdict(ok) == "accepted" and first_failed(ok) is None and failures_of(ok) == []
    assert verdict([]) == "rejected" and first_failed([]) is None
    bad = ok + [CheckResult(name="judge", passed=False, reason="x", details={"criteria": [
        {"name": "unambiguous", "passed": False, "evidence": "e", "artifact": "instruction"}]})]
    assert verdict(bad) == "rejected" and first_failed(bad).name == "judge"


def test_first_failed_is_in_verification_order_whatever_the_list_order():
    checks = [CheckResult(name="rubric", passed=False), CheckResult(name="oracle", passed=False),
              CheckResult(name="build", passed=True), CheckResult(name="noop", passed=False)]
    assert first_failed(checks).name == "noop"
    assert [f.check for f in failures_of(checks)] == ["noop", "oracle", "rubric"]


def test_check_names_are_defined_once():
    assert CHECK_NAMES is STORED_NAMES
    assert CHECK_NAMES == ("build", "noop", "oracle", "redteam", "rubric", "decontam", "judge")


def test_evidence_is_bounded_but_every_failing_test_is_named():
    tests = [{"name": f"test_{i}", "outcome": "failed", "message": f"assert {i} == 0\nmore"} for i in range(50)]
    log = "$ bash /solution/solve.sh\n\n$ bash /tests/test.sh\n" + "".join(f"line {i} " + "x" * 500 + "\n"
                                                                       for i in range(100))
    f = _only([CheckResult(name="oracle", passed=False, reason="after the solution the tests still fail", log=log,
                           details={"tests": tests, "reward": 0.0, "exit_code": 0, "solve_exit_code": 0})])
    assert f.artifact == "tests" and len(f.failing_tests) == 50
    assert f.evidence[0] == "test_0: failed: assert 0 == 0" and len(f.evidence) == 20 + 30
    assert f.evidence[-1].startswith("line 99 ") and max(map(len, f.evidence)) == 300
