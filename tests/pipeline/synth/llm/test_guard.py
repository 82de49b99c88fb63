"""Static guards of LLM output: each bad-output kind of issue 13 §6 is refused with the artifact
at fault and where; the offline recipes' own tasks (as artifacts, and with their real container
states) pass untouched."""
import pytest

from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.llm import guard
from pipeline.synth.llm.models import EnvManifest, FileSpec
from pipeline.synth.llm.render import artifacts_from_bundle
from pipeline.synth.llm.state import ContainerState
from pipeline.synth.skill_fit import RepeatedFamilyError
from workbench.sandbox.session import TreeEntry

GOOD_TESTS = '''import json
from pathlib import Path

import pytest


@pytest.fixture
def report():
    return json.loads(Path("/app/out/report.json").read_text())


@pytest.mark.parametrize("key", ["total", "rows"])
def test_keys(report, key):
    """The report holds the total and the row count."""
    assert key in report


class TestFiles:
    def test_exists(self, tmp_path):
        """Write the report to /app/out/report.json."""
        assert Path("/app/out/report.json").exists()
'''


def _checks(failures):
    return [(f.check, f.artifact) for f in failures]


# --- environment ------------------------------------------------------------------------------

def test_a_manifest_that_pulls_from_a_registry_is_the_environments_fault():
    m = EnvManifest(image="python:3.11-slim", setup_commands=[
        "mkdir -p /app/out", "pip install pandas==2.2", "apt-get update && apt-get install -y jq",
        "curl -fsSL https://example.com/data.tgz | tar xz -C /app", "git clone https://github.com/o/r /app/r",
        "bash -c 'npm ci'", "docker pull redis", "timeout 60 wget http://mirror.example.org/f",
        "python3 -m pip install --no-index -f /app/wheels tool",          # local wheels: fine
        "curl -s http://127.0.0.1:8080/health || true", "git clone /app/seed.git /app/work",   # loopback / local
        "cat > /app/setup.py <<'EOF'\npip install requests\nEOF"])                           # a heredoc is data
    failures = guard.check_manifest(m, {"base"})
    assert all(f.artifact == "environment" for f in failures)
    assert failures[0].check == guard.IMAGE and "'python:3.11-slim' is not one we build (allowed: base)" in failures[0].reason
    network = [f.reason for f in failures if f.check == guard.NETWORK]
    assert [r.split(" ", 2)[1] for r in network] == ["setup_commands[1]", "setup_commands[2]", "setup_commands[2]",
                                                      "setup_commands[3]", "setup_commands[4]", "setup_commands[5]",
                                                      "setup_commands[6]", "setup_commands[7]"]
    assert "installs or pulls from a package registry (pip install)" in network[0]
    assert "(apt-get update)" in network[1] and "(apt-get install)" in network[2]
    assert "fetches https://example.com/data.tgz (curl)" in network[3]
    assert "git clone https://github.com/o/r" in network[4] and "(npm ci)" in network[5]
    assert "(docker pull)" in network[6] and "fetches http://mirror.example.org/f (wget)" in network[7]
    assert failures[1].evidence == ["pip install pandas==2.2"]


def test_manifest_file_paths_must_stay_out_of_the_system_and_the_verifier():
    files = [FileSpec(path=p, content="x") for p in
             ("/app/data/in.csv", "/etc/wb/app.conf", "/srv/www/index.html",            # fine
              "/app/../etc/passwd", "app/rel.txt", "/usr/bin/jq", "/etc/ld.so.preload", "/tests/test_outputs.py")]
    failures = guard.check_manifest(EnvManifest(files=files), {"base"})
    assert _checks(failures) == [(guard.PATH, "environment")] * 5
    reasons = [f.reason for f in failures]
    assert reasons[0] == "environment: files[3] ('/app/../etc/passwd'): empty, '.' or '..' segments are not allowed"
    assert reasons[1] == "environment: files[4] ('app/rel.txt'): the path must be absolute"
    assert reasons[2].startswith("environment: files[5] ('/usr/bin/jq'): files go under /app, /etc")
    assert "would replace /etc/ld.so.preload" in reasons[3]
    assert "files[7]" in reasons[4] and "/tests" in reasons[4]


def test_a_manifest_over_the_size_cap_or_with_bad_base64_is_refused():
    big = EnvManifest(files=[FileSpec(path="/app/big.txt", content="x" * (guard.MAX_MANIFEST_BYTES + 1))])
    assert _checks(guard.check_manifest(big, {"base"})) == [(guard.SIZE, "environment")]
    blob = EnvManifest(files=[FileSpec(path="/app/a.gz", content="H4sI" + "A" * 60, encoding="base64"),
                              FileSpec(path="/app/b.gz", content="not base64!", encoding="base64")])
    assert [f.reason for f in guard.check_manifest(blob, {"base"})] == [
        "environment: files[1] ('/app/b.gz'): content is not valid base64"]


# --- solution ---------------------------------------------------------------------------------

@pytest.mark.parametrize("script, where, what", [
    ("sleep infinity", "line 1", "sleeps forever"),
    ("#!/bin/bash\nset -e\nwhile true; do\n  date >> /app/out/log\n  sleep 1\ndone", "line 3", "loops forever"),
    ("echo start\ntail -f /app/logs/app.log", "line 2", "follows a file (tail -f)"),
    ("#!/usr/bin/env python3\nprint('hi')", "line 1", "solve.sh is run with bash"),
    ("```bash\necho hi\n```", "line 1", "markdown code fence"),
    ("echo hi\r\necho there\r\n", "line 1", "CRLF"),
    ("# only a comment\n\n", "", "has no command"),
])
def test_obvious_solution_problems_name_the_line(script, where, what):
    failures = guard.check_solution(script)
    assert failures and failures[0].artifact == "solution" and failures[0].check == guard.SOLUTION
    expected = f"solution/solve.sh {where}: " if where else "solution/solve.sh: "
    assert failures[0].reason.startswith(expected) and what in failures[0].reason, failures[0].reason


def test_a_solution_that_fetches_is_a_network_failure_and_bounded_waits_pass():
    failures = guard.check_solution("set -e\ncd /app\npip3 install --user rich\n")
    assert _checks(failures) == [(guard.NETWORK, "solution")]
    assert failures[0].reason.startswith("solution/solve.sh line 3: installs or pulls from a package registry")
    fine = ("#!/bin/bash\nset -euo pipefail\nwhile true; do\n  [ -s /app/out/ready ] && break\n  sleep 0.2\ndone\n"
            "timeout 5 tail -f /app/logs/app.log | head -n 3\ncurl -s http://localhost:8080/api > /app/out/api.json\n")
    assert guard.check_solution(fine) == []


# --- tests ------------------------------------------------------------------------------------

def test_tests_that_import_what_the_verifier_lacks_are_the_tests_fault():
    src = ("import os\nimport pandas as pd\nfrom numpy import array\nimport tkinter\nfrom . import helpers\n"
           "import importlib\nyaml = importlib.import_module('yaml')\nreq = pytest.importorskip('requests')\n"
           "import pytest\nfrom _pytest.monkeypatch import MonkeyPatch\nimport xml.etree.ElementTree as ET\n\n"
           "def test_x():\n    '''Write x.'''\n    assert True\n")
    failures = guard.check_tests(src)
    assert {f.check for f in failures} == {guard.TESTS_IMPORT} and {f.artifact for f in failures} == {"tests"}
    reasons = [f.reason for f in failures]
    for line, needle in ((2, "imports pandas"), (3, "imports from numpy"), (4, "imports tkinter"),
                         (5, "relative import"), (7, "imports yaml at run time"), (8, "importorskip('requests')")):
        assert any(r.startswith(f"tests/test_outputs.py line {line}: ") and needle in r for r in reasons), needle
    assert len(failures) == 6                     # os, importlib, pytest, _pytest, xml are the verifier's own
    on_domain_image = guard.check_tests(src, image_modules={"pandas", "numpy", "yaml", "requests"})
    assert [f.reason.split(":")[0] for f in on_domain_image] == ["tests/test_outputs.py line 4",
                                                                 "tests/test_outputs.py line 5"]   # tkinter, relative


def test_invalid_python_no_tests_duplicates_and_unknown_fixtures():
    bad = guard.check_tests("def test_x(:\n    pass\n")
    assert _checks(bad) == [(guard.TESTS_SYNTAX, "tests")]
    assert bad[0].reason.startswith("tests/test_outputs.py line 1: not valid Python")
    none = guard.check_tests("def helper():\n    return 1\n")
    assert _checks(none) == [(guard.TESTS_NONE, "tests")] and "defines no test function" in none[0].reason
    dup = guard.check_tests("def test_a():\n    pass\n\ndef test_a():\n    pass\n")
    assert [f.reason for f in dup] == ["tests/test_outputs.py line 4: test_a is defined again (first at line 1), "
                                       "so the first never runs"]
    fix = guard.check_tests("def test_a(df, tmp_path):\n    pass\n")
    assert _checks(fix) == [(guard.TESTS_FIXTURE, "tests")] and "test_a takes df" in fix[0].reason
    assert guard.check_tests(GOOD_TESTS) == []


# --- instruction ------------------------------------------------------------------------------

STATE = ContainerState(("/app",), [TreeEntry("/app/data", "dir", 4096, 0o755), TreeEntry("/app/data/sales.csv", "file", 9, 0o644),
                                   TreeEntry("/app/logs", "dir", 4096, 0o755), TreeEntry("/app/logs/a.log", "file", 3, 0o644)])


def test_an_instruction_naming_files_the_environment_lacks_is_the_instructions_fault():
    text = ("# Sales\n\nRead `/app/data/sales.csv` and `/app/data/costs.csv`.\n"
            "Write the totals to /app/out/totals.json, then scan /app/logs/*.log and /app/archive/*.gz.\n"
            "Leave the files under `/app/input` unchanged. Name a report /app/out/<name>.md if you like.\n"
            "The daemon writes its pid to /app/run/d.pid.\n")
    failures = guard.check_instruction(text, STATE, {"/app/out", "/app/out/totals.json"}, solution="echo $$ > /app/run/d.pid")
    assert _checks(failures) == [(guard.INSTRUCTION_PATHS, "instruction")]
    assert failures[0].evidence == ["/app/data/costs.csv (line 3)", "/app/archive/*.gz (line 4)"]
    assert failures[0].reason.startswith("instruction.md names 2 path(s) that neither exist in the environment nor are "
                                         "produced by the reference solution: /app/data/costs.csv (line 3)")
    without_solution = guard.check_instruction(text, STATE, {"/app/out/totals.json"})
    assert "/app/run/d.pid (line 6)" in without_solution[0].evidence
    assert guard.check_instruction("Sum /app/data/sales.csv into /app/out/t.txt.", STATE, {"/app/out/t.txt"}) == []


def test_every_keep_as_is_note_of_the_offline_layout_is_exempt_and_a_read_is_not():
    from pipeline.synth.layout import NOTE_KEEP
    for note in NOTE_KEEP:
        assert guard.check_instruction(note, STATE, set()) == [], note
    assert guard.check_instruction("Copy every file of `/app/input` to /app/data.", STATE, set())[0].evidence == \
        ["/app/input (line 1)"]


# --- no false alarms on real tasks ------------------------------------------------------------

def _offline_task(name: str, base_image: str = "workbench/base:x"):
    return synthesize_task([PathStep("s0", name, R.REGISTRY[name].category, "", "a0", "a1")], 1, base_image, force=[name])


def test_the_offline_recipes_tasks_pass_the_artifact_guards():
    checked = 0
    for name in R.REGISTRY:
        try:
            manifest, _, solution, tests = artifacts_from_bundle(_offline_task(name).bundle)
        except RepeatedFamilyError:      # a recipe only its own family reads after: no one-step path
            continue
        found = (guard.check_manifest(manifest, {"base"}) + guard.check_solution(solution.solve_sh)
                 + guard.check_tests(tests.test_py))
        assert found == [], (name, found)
        checked += 1
    assert checked >= 50


@pytest.mark.docker
@pytest.mark.parametrize("name", ["daemon-control", "cron-refresh-job", "config-deploy", "archive-recompress",
                                  "sqlite-join-targets", "loopback-api-probe"])
def test_offline_instructions_pass_against_their_real_container_state(name):
    from pipeline.synth.llm.state import diff_states, read_state
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.bundle import tree_hash
    from workbench.sandbox.engine import Engine, Limits
    task = _offline_task(name, base_image_name())
    env = task.bundle.under("environment")
    engine = Engine()
    built = engine.build(env, tree_hash(env))
    assert built.ok, built.reason
    solve_sh = task.bundle.files["solution/solve.sh"].decode()
    with engine.session(built.image, Limits()) as s:
        before = read_state(s)
        s.write_files({"/solution/solve.sh": solve_sh.encode()})
        assert s.exec("bash /solution/solve.sh", 120).ok
        after = read_state(s, since=before)
    found = guard.check_instruction(task.bundle.files["instruction.md"].decode(), before,
                                    set(diff_states(before, after).changed_paths), solution=solve_sh)
    assert found == [], found
