"""The red-team probe without Docker: what it reads of a task (outputs, the programs the tests
run, the literals they compare with, per-output field names) and that every attack is a bash
script that parses, never touches the task's solution, and fakes what the instruction names."""
from __future__ import annotations

import base64
import re
import subprocess

import pytest

from pipeline.agents.factory import make_agent
from pipeline.agents.protocol import AGENT_LABELS, AGENTS
from pipeline.agents.red_team.agent import ATTACK_ORDER, RedTeamAgent
from pipeline.agents.red_team.attacks import ATTACKS, AttackLimits, fake_content, link_target
from pipeline.agents.red_team.reading import instruction_paths, read_task, shell_programs, without_heredocs
from tests.helpers import sum_bundle

INSTRUCTION = """# Report

Load `/app/input/stock.csv` and write `/app/out/report.csv` with the columns `category`, `total`
in that order; also write /app/out/summary.json holding `count` and `total`. Put the archive in
/srv/backup/ and keep /tests and /logs/verifier alone. Record the count (there are 42 rows) in `notes.txt`.
"""
TESTS = '''import subprocess


def test_count():
    """Record the count."""
    out = subprocess.run(["jq", "-r", ".count", "/app/out/summary.json"], capture_output=True, text=True)
    assert out.stdout.strip() == "42"
    assert subprocess.run("sqlite3 /app/db.sqlite 'select 1' | sort", shell=True).returncode == 0
'''
TEST_SH = """#!/bin/bash
cd /app
python3 - <<'EOF'
import json
for case in cases:
    raise SystemExit(0)
EOF
zstd -t /app/x.zst && echo 1 > /logs/verifier/reward.txt
"""


def _bundle():
    return sum_bundle(extra_files={"instruction.md": INSTRUCTION, "tests/test_outputs.py": TESTS,
                                   "tests/test.sh": TEST_SH, "tests/expected/report.csv": "category,total\n"})


def test_it_reads_the_paths_the_instruction_names_and_leaves_the_verifiers_alone():
    paths = instruction_paths(INSTRUCTION)
    assert paths == ["/app/input/stock.csv", "/app/out/report.csv", "/app/out/summary.json", "/srv/backup/",
                     "/app/notes.txt"]


def test_it_reads_the_programs_the_tests_run_and_what_they_compare_with():
    r = read_task(_bundle())
    # argv lists, shell strings (each command of a pipe), test.sh less its here-document body
    assert set(r.programs) == {"jq", "sqlite3", "sort", "python3", "zstd"}
    assert not {"import", "for", "raise", "cases"} & set(r.programs)
    assert "42" in r.literals
    assert r.columns["/app/out/report.csv"] == ["category", "total"]
    assert r.numbers == ["42"]
    assert "/tests/expected/report.csv" in r.test_files


def test_here_documents_and_assignments_are_no_programs():
    assert shell_programs("FOO=1 LANG=C sort -u x | uniq -c && /usr/bin/git log; $(date)") == ["sort", "uniq", "git",
                                                                                                "date"]
    assert "import json" not in without_heredocs(TEST_SH) and "zstd -t" in without_heredocs(TEST_SH)


def test_fakes_have_the_names_headers_and_keys_the_instruction_gives():
    r = read_task(_bundle())
    table, _ = fake_content("/app/out/report.csv", r)
    assert table.decode().splitlines()[0] == "category,total" and len(table.decode().splitlines()) == 4
    data, _ = fake_content("/app/out/summary.json", r)
    assert set(__import__("json").loads(data)) == {"count", "total"}
    script, executable = fake_content("/app/out/run.sh", r)
    assert executable and script.startswith(b"#!/bin/sh")
    assert fake_content("/srv/backup/", r) is None


def test_an_output_is_linked_to_the_tests_reference_of_its_name_or_kind():
    files = ["/tests/test.sh", "/tests/test_outputs.py", "/tests/expected/report.csv", "/tests/data.json"]
    assert link_target("/app/out/report.csv", files) == "/tests/expected/report.csv"
    assert link_target("/app/out/other.json", files) == "/tests/data.json"
    assert link_target("/app/out/x.txt", files) == "/tests/expected/report.csv"
    assert link_target("/app/out/x.txt", ["/tests/test.sh"]) == "/tests"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_every_attack_is_a_bash_script_that_parses_and_never_runs_the_solution(name, tmp_path):
    bundle = _bundle()
    script = ATTACKS[name].script(read_task(bundle), AttackLimits(pids=256, disk_mb=512))
    path = tmp_path / "attack.sh"
    path.write_text(script)
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "/solution/" not in script and bundle.text("solution/solve.sh").splitlines()[-1] not in script
    decoded = " ".join(base64.b64decode(b).decode("utf-8", "replace")
                       for b in re.findall(r"printf '%s' ([A-Za-z0-9+/=]{8,})", script))
    if name in ("fake-outputs", "liar-programs"):
        assert "/app/out/report.csv" in script and "category,total" in decoded
    if name == "liar-programs":
        assert "command -v jq" in script and "command -v sqlite3" in script and "42" in decoded
    if name == "linked-outputs":
        assert "/tests/expected/report.csv /app/out/report.csv" in script
    if name == "exhaustion":
        assert "seq 232" in script and "256M" in script


def test_the_agent_is_a_labelled_probe_and_a_seed_picks_its_attack():
    assert "red-team" in AGENTS and "not a model" in AGENT_LABELS["red-team"]
    agent = make_agent("red-team")
    assert isinstance(agent, RedTeamAgent) and agent.model is None
    assert [agent.pick(s) for s in range(len(ATTACK_ORDER) + 1)] == [*ATTACK_ORDER, ATTACK_ORDER[0]]
    assert RedTeamAgent("exhaustion").pick(0) == "exhaustion"
    assert RedTeamAgent("exhaustion").config_key() != agent.config_key()
    with pytest.raises(ValueError, match="choose one of"):
        RedTeamAgent("solve-it")


def test_its_rollouts_are_no_training_data_and_no_attempt_at_the_task():
    from pipeline.export.trajectories import is_scripted
    from pipeline.judge.trajectory_judge import is_llm_agent
    assert is_scripted("red-team") and is_scripted("harbor:oracle")
    assert not is_llm_agent("red-team") and is_llm_agent("terminus-2")
