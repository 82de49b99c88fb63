"""Terminus-2's reply parser: tolerant of a model's habits, strict where acting would go wrong."""
import pytest

from pipeline.agents.terminus2.parser import DEFAULT_DURATION_S, ReplyError, parse_reply

GOOD = '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 0.1}], "task_complete": false}'


def test_a_plain_reply():
    r = parse_reply(GOOD)
    assert (r.analysis, r.plan, r.task_complete, r.warnings) == ("a", "p", False, [])
    assert [(c.keystrokes, c.duration) for c in r.commands] == [("ls\n", 0.1)]


def test_json_in_a_fence_or_prose_is_found():
    assert parse_reply(f"```json\n{GOOD}\n```").warnings == []          # a fence is no extra text
    r = parse_reply(f"Here is my answer:\n{GOOD}\nHope that helps")
    assert r.commands[0].keystrokes == "ls\n"
    assert r.warnings == ["Extra text detected before JSON object", "Extra text detected after JSON object"]


def test_braces_inside_strings_do_not_end_the_object():
    r = parse_reply('{"analysis": "a } b", "plan": "{", "commands": [{"keystrokes": "echo \\"}\\"\\n"}]}')
    assert r.analysis == "a } b" and r.commands[0].keystrokes == 'echo "}"\n'


def test_missing_or_bad_duration_becomes_the_default_with_a_warning():
    r = parse_reply('{"analysis": "", "plan": "", "commands": [{"keystrokes": "a\\n"}, '
                    '{"keystrokes": "b\\n", "duration": "soon"}, {"keystrokes": "c\\n", "duration": -3}]}')
    assert [c.duration for c in r.commands] == [DEFAULT_DURATION_S] * 3
    assert r.warnings == ["Command 1: Missing duration field, using default 1.0",
                          "Command 2: Invalid duration value, using default 1.0",
                          "Command 3: Invalid duration value, using default 1.0"]


def test_task_complete_as_a_word_and_defaulting_to_false():
    assert parse_reply('{"analysis": "", "plan": "", "commands": [], "task_complete": "True"}').task_complete
    assert not parse_reply('{"analysis": "", "plan": "", "commands": []}').task_complete
    assert not parse_reply('{"analysis": "", "plan": "", "commands": [], "task_complete": "no"}').task_complete


def test_a_reply_cut_before_its_closing_brace_is_closed():
    r = parse_reply('{"analysis": "a", "plan": "p", "commands": []')
    assert r.commands == [] and r.warnings[0].startswith("AUTO-CORRECTED")


def test_unjoined_commands_and_unknown_keys_warn():
    r = parse_reply('{"analysis": "", "plan": "", "commands": [{"keystrokes": "cd /app", "duration": 1, "x": 1}, '
                    '{"keystrokes": "ls\\n", "duration": 1}]}')
    assert "Command 1: Unknown fields: x" in r.warnings
    assert any(w.startswith("Command 1 should end with newline") for w in r.warnings)


@pytest.mark.parametrize("text, error", [
    ("I will run ls now", "No valid JSON found"),
    ("", "No valid JSON found"),
    ('{"analysis": "a", "plan": "p", "commands": [', "No valid JSON found"),
    ('{"analysis": "a", "plan": "p", "commands": [}', "Invalid JSON"),
    ('{"analysis": ' + "[" * 100_000 + "]" * 100_000 + "}", "Invalid JSON: nested too deeply"),
    ('{"analysis": ' + "[" * 100_000, "No valid JSON found"),
    ('{"analysis": "a"}', "Missing required fields: plan, commands"),
    ('{"analysis": "a", "plan": "p", "commands": "ls"}', "Field 'commands' must be an array"),
    ('{"analysis": "a", "plan": "p", "commands": ["ls"]}', "Command 1 must be an object"),
    ('{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}', "Command 1 missing required 'keystrokes'"),
    ('{"analysis": "a", "plan": "p", "commands": [{"keystrokes": ["l", "s"]}]}', "Command 1 'keystrokes' must be a string"),
])
def test_errors_say_what_was_wrong(text, error):
    with pytest.raises(ReplyError) as info:
        parse_reply(text)
    assert str(info.value).startswith(error)


def test_a_completing_reply_with_broken_commands_completes_without_them():
    r = parse_reply('{"analysis": "done", "plan": "", "commands": "none", "task_complete": true}')
    assert r.task_complete and r.commands == [] and "Field 'commands' must be an array" in r.warnings
