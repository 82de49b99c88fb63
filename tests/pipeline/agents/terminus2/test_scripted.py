"""The scripted Terminus-2 models: which move each makes from the conversation alone, the
solution split into steps, and keystrokes that reach an interactive bash unharmed."""
import base64
import json
import re
import subprocess

import pytest

from pipeline.agents.terminus2 import messages as msg
from pipeline.agents.terminus2.parser import parse_reply
from pipeline.agents.terminus2.scripted import (BEHAVIOURS, scripted_terminus_rules, solution_steps,
                                                step_keystrokes)

SOLVE = """#!/bin/bash
set -euo pipefail
cd /app

# --- step 1 (csv-dedupe) ---
sort -u in.csv > out.csv
cd /app

# --- step 2 (archive-pack) ---
tar -cf out.tar out.csv
cd /app
"""
INSTRUCTION = "Deduplicate /app/in.csv, then pack it."


def _body(*turns: tuple[str, str], instruction: str = INSTRUCTION) -> dict:
    first = [{"role": "system", "content": "You are an AI assistant tasked with solving command-line tasks."},
             {"role": "user", "content": f"Task Description:\n{instruction}\n\nCurrent terminal state:\n$ "}]
    return {"messages": first + [{"role": r, "content": c} for r, c in turns]}


def _play(behaviour: str, n_turns: int, tasks=None, confirm_after=None):
    """Replies of `behaviour` over n turns, answering each as the loop would (a confirmation
    question after a reply that completes)."""
    rule = scripted_terminus_rules({INSTRUCTION: SOLVE} if tasks is None else tasks, behaviour)[0]
    turns, replies = [], []
    for _ in range(n_turns):
        text = rule.reply(_body(*turns))
        text = text if isinstance(text, str) else json.dumps(text)
        replies.append(text)
        try:
            complete = parse_reply(text).task_complete
        except ValueError:
            complete = False
        turns += [("assistant", text), ("user", msg.confirmation("$ ") if complete else "New Terminal Output:\n$ ")]
    return replies


def test_the_solution_is_split_at_step_markers_with_the_head_kept():
    steps = solution_steps(SOLVE)
    assert len(steps) == 2 and all(s.startswith("#!/bin/bash\nset -euo pipefail\ncd /app\n") for s in steps)
    assert "sort -u" in steps[0] and "tar -cf" not in steps[0] and "tar -cf" in steps[1]
    assert solution_steps("echo hi\n") == ["echo hi\n"]              # no markers: one step


def test_the_oracle_looks_runs_each_step_completes_and_confirms():
    replies = [parse_reply(t) for t in _play("oracle", 5)]
    assert replies[0].commands[0].keystrokes == "pwd && ls\n"
    assert "sort -u in.csv" in replies[1].plan and "tar -cf" in replies[2].plan
    assert "tar -cf" in base64.b64decode(re.search(r"echo (\S+) \|", replies[2].commands[0].keystrokes)[1]).decode()
    assert [r.task_complete for r in replies] == [False, False, False, True, True]


def test_early_complete_asks_first_then_does_the_work():
    replies = [parse_reply(t) for t in _play("early_complete", 7)]
    assert replies[0].task_complete and not replies[0].commands
    assert not replies[1].task_complete                              # answers the question by working
    assert "sort -u" in replies[2].plan and "tar -cf" in replies[3].plan
    assert [r.task_complete for r in replies[4:]] == [True, True, True]


def test_malformed_never_parses_and_never_completes_never_completes():
    for text in _play("malformed", 6):
        with pytest.raises(ValueError):
            parse_reply(text)
    replies = [parse_reply(t) for t in _play("never_completes", 6)]
    assert not any(r.task_complete for r in replies) and all(r.commands for r in replies)


def test_floods_prints_megabytes_then_completes():
    replies = [parse_reply(t) for t in _play("floods", 4)]
    assert "seq 1 3000000" in replies[0].commands[0].keystrokes
    assert [r.task_complete for r in replies] == [False, False, True, True]


def test_the_task_is_found_by_its_instruction_the_longest_key_winning():
    tasks = {"pack it": "echo short\n", INSTRUCTION: SOLVE, "Something else": "echo other\n"}
    assert "sort -u" in parse_reply(_play("oracle", 2, tasks=tasks)[1]).plan
    unknown = parse_reply(_play("oracle", 1, tasks={"nothing like it": SOLVE})[0])
    assert unknown.task_complete and "no solution" in unknown.analysis


def test_an_unknown_behaviour_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="choose one of " + ", ".join(BEHAVIOURS)):
        scripted_terminus_rules({}, "sloppy")


@pytest.mark.parametrize("script", [
    "#!/bin/bash\ncd /app\necho 'a;b' \"$HOME\" > x\n",
    "if [ 1 != 2 ]; then echo ok; fi\n",                # `!`: history expansion in an interactive shell
    "printf 'a\\tb'\n\tindented\n",                    # a Tab would complete
])
def test_step_keystrokes_write_the_script_exactly_in_two_enters(tmp_path, script):
    keys = step_keystrokes(3, script)
    assert keys.count("\n") == 2 and keys.endswith('echo "step 3 exit $?"\n')
    blob = re.search(r"echo (\S+) \| base64 -d", keys).group(1)
    assert base64.b64decode(blob).decode() == script
    first_line = keys.split("\n")[0].replace("/tmp/scripted-oracle", str(tmp_path))
    out = subprocess.run(["bash", "-c", first_line], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "step3.sh").read_text() == script
