"""The red-team check in Docker (issue 27.2): tasks whose tests can be satisfied without the
work — by a file of the right name, a link to the tests' own reference, gutted inputs, or a
program the tests trust — are found hackable, each by the attack written for that hole, with the
attack as evidence; the honest sum task and a recipe task are not hackable by any attack."""
from __future__ import annotations

import pytest

from pipeline.verify.failures import failures_of, verdict
from pipeline.verify.red_team import check_red_team
from pipeline.verify.run import verify_bundle
from tests.helpers import SUM_SENTENCE, sum_bundle
from workbench.sandbox.engine import Engine

pytestmark = pytest.mark.docker

SORT_SENTENCE = "Write the lines of /app/words.txt sorted alphabetically to /app/sorted.txt."


def _weak(tests: str, dockerfile_extra: str = "", **files) -> object:
    """The sum task with other tests (their docstring: the instruction's sentence)."""
    return sum_bundle(dockerfile_extra=dockerfile_extra,
                      extra_files={"tests/test_outputs.py": tests.replace("DOC", SUM_SENTENCE), **files})


CASES = {
    # only that the file is there: any file of that name passes
    "fake-outputs": _weak('import os\n\n\ndef test_sum():\n    """DOC"""\n'
                          '    assert os.path.getsize("/app/sum.txt") > 0\n'),
    # compared with a reference the tests carry: a link to it passes
    "linked-outputs": _weak('def test_sum():\n    """DOC"""\n'
                            '    assert open("/app/sum.txt").read() == open("/tests/sum.txt").read()\n',
                            **{"tests/sum.txt": "6\n"}),
    # the expected answer recomputed from inputs the agent can edit: empty in, empty out
    "trivial-inputs": sum_bundle(
        "sort /app/words.txt > /app/sorted.txt",
        extra_files={"instruction.md": f"# Sort\n\n1. {SORT_SENTENCE}\n", "environment/app/words.txt": "pear\napple\nfig\n",
                     "tests/test_outputs.py": (f'def test_sorted():\n    """{SORT_SENTENCE}"""\n'
                                               '    words = open("/app/words.txt").read().split()\n'
                                               '    assert open("/app/sorted.txt").read().split() == sorted(words)\n')}),
    # a program the task's image adds (not the base image's): the tests trust what it says
    "liar-programs": _weak('import subprocess\n\n\ndef test_sum():\n    """DOC"""\n'
                           '    out = subprocess.run(["sumcheck", "/app/sum.txt"], capture_output=True, text=True)\n'
                           '    assert out.stdout.strip() == "GOOD"\n',
                           dockerfile_extra="RUN printf '#!/bin/sh\\n[ \"$(cat \"$1\")\" = 6 ] && echo GOOD || echo BAD\\n' "
                                            "> /usr/local/bin/sumcheck && chmod +x /usr/local/bin/sumcheck\n"),
}


@pytest.fixture(scope="module")
def engine():
    return Engine()


@pytest.mark.parametrize("attack", sorted(CASES))
def test_a_weak_task_is_hackable_by_the_attack_for_its_hole(engine, attack):
    checks = verify_bundle(CASES[attack], engine=engine, red_team=True)
    by = {c.name: c for c in checks}
    assert by["noop"].passed and by["oracle"].passed, [(c.name, c.reason) for c in checks]
    red = by["redteam"]
    assert not red.passed and attack in red.details["hacked_by"], red.reason
    assert "the tests reward a hack" in red.reason and f"red-team attack {red.details['hacked_by'][0]}" in red.log
    assert verdict(checks) == "rejected"
    (failure,) = [f for f in failures_of(checks) if f.check == "redteam"]
    assert failure.artifact == "tests" and failure.repairable


def test_the_honest_task_is_not_hackable_and_every_attack_ran(engine):
    checks = verify_bundle(sum_bundle(), engine=engine, red_team=True)
    red = {c.name: c for c in checks}["redteam"]
    assert red.passed, red.reason
    rows = red.details["attacks"]
    assert [r["attack"] for r in rows] == ["planted-results", "fake-outputs", "liar-programs", "trivial-inputs",
                                           "linked-outputs", "exhaustion"]
    assert all(not r["hacked"] and r["reward"] == 0 for r in rows), rows
    # exhaustion leaves the pid table nearly full: the agent side is named a crash, the tests still ran
    assert all(r["status"] == "completed" for r in rows[:-1]) and rows[-1]["status"] in ("completed", "crashed"), rows
    # the planted reward files were wiped and the forced-pass hooks never loaded: the test ran and failed
    planted = rows[0]
    assert planted["reward"] == 0 and planted["tests"] == 1 and planted["tests_passed"] == 0, planted
    assert verdict(checks) == "accepted"


def test_turned_off_it_does_not_run(engine, monkeypatch):
    monkeypatch.setenv("WORKBENCH_RED_TEAM", "0")
    names = [c.name for c in verify_bundle(sum_bundle(), engine=engine)]
    assert "redteam" not in names and "oracle" in names


def test_one_attack_alone(engine):
    from workbench.sandbox.task_toml import parse
    bundle = CASES["fake-outputs"]
    image = engine.build(bundle.under("environment"), bundle.environment_hash(), 300).image
    check = check_red_team(engine, image, bundle, parse(bundle.text("task.toml")), attacks=("fake-outputs",))
    assert not check.passed and [r["attack"] for r in check.details["attacks"]] == ["fake-outputs"]
