"""The terminal's pure rules: keystroke strings into tmux calls (text literal, tmux's ';'
separator escaped, key names as keys, calls under tmux's message size), the head+tail cap,
finding where new output starts in a capture, and the asciinema v2 recording."""
from __future__ import annotations

import json

from workbench.sandbox.terminal_text import (TMUX_CALL_BUDGET, Mark, Pane, asciinema, cap_head_tail, locate,
                                             tmux_key_commands)


def sends(calls: list[list[str]]) -> list[list[str]]:
    """The send-keys commands of tmux calls, split at the ';' separators."""
    out: list[list[str]] = []
    for call in calls:
        cur: list[str] = []
        for arg in call:
            if arg == ";":
                out.append(cur)
                cur = []
            else:
                cur.append(arg)
        out.append(cur)
    return out


def test_text_is_typed_literally_and_newlines_are_enter():
    calls = tmux_key_commands("echo 'a;b' $HOME;\nls -la\n", "T")
    assert sends(calls) == [["send-keys", "-t", "T", "-l", "--", "echo 'a;b' $HOME\\;"],
                            ["send-keys", "-t", "T", "Enter"],
                            ["send-keys", "-t", "T", "-l", "--", "ls -la"],
                            ["send-keys", "-t", "T", "Enter"]]
    # text that looks like an option or a key name inside text stays text
    assert sends(tmux_key_commands("-n C-c\n", "T"))[0][-1] == "-n C-c"
    assert sends(tmux_key_commands("q", "T")) == [["send-keys", "-t", "T", "-l", "--", "q"]]
    assert tmux_key_commands("", "T") == []


def test_key_names_are_keys():
    assert sends(tmux_key_commands("C-c", "T")) == [["send-keys", "-t", "T", "C-c"]]
    assert sends(tmux_key_commands("C-d\n", "T")) == [["send-keys", "-t", "T", "C-d"],
                                                       ["send-keys", "-t", "T", "Enter"]]
    assert sends(tmux_key_commands("Escape Up Enter", "T")) == [["send-keys", "-t", "T", "Escape", "Up", "Enter"]]
    assert sends(tmux_key_commands("Up now", "T"))[0][-1] == "Up now"       # not all names: text


def test_unicode_nul_and_lone_surrogates_do_not_break_the_argv():
    calls = tmux_key_commands("é€\0x\ud800\n", "T")
    typed = sends(calls)[0][-1]
    assert typed == "é€x?" and all("\0" not in a for c in calls for a in c)
    "".join(a for c in calls for a in c).encode("utf-8")     # encodable: nothing raises


def test_long_text_is_split_into_calls_under_tmux_message_size():
    text = "€" * 20_000 + "\n" + "x" * 5_000
    calls = tmux_key_commands(text, "T")
    assert len(calls) > 1
    assert all(sum(len(a.encode()) + 1 for a in c) <= TMUX_CALL_BUDGET + 100 for c in calls)
    typed = [s for s in sends(calls)]
    assert "".join(s[-1] if "-l" in s else "\n" for s in typed) == text


def test_cap_keeps_head_and_tail_and_says_what_was_left_out():
    text = "".join(f"{i}\n" for i in range(20_000))
    out = cap_head_tail(text, 10_000)
    assert len(out.encode()) <= 10_000
    assert out.startswith("0\n1\n2\n") and out.endswith("19998\n19999\n")
    assert "bytes left out" in out
    assert cap_head_tail("short\n", 10_000) == "short\n"
    wide = cap_head_tail("€" * 10_000, 10_000)                    # cut at character boundaries
    assert len(wide.encode()) <= 10_000 and "\ufffd" not in wide
    gap = cap_head_tail("head\n", 10_000, tail="tail\n", gap_lines=500)
    assert gap.startswith("head\n") and "500 lines left out" in gap and gap.endswith("tail\n")


def pane(rows: list[str], history: int, cursor_y: int, height: int = 4, alternate: bool = False) -> Pane:
    return Pane(history, 0, cursor_y, height, alternate, tuple(rows))


def test_new_output_starts_at_the_marked_row_when_it_is_still_there():
    before = pane(["$ ls", "a", "$", ""], history=0, cursor_y=2)
    mark = Mark.at(before)
    assert (mark.row, mark.line, mark.above) == (2, "$", "a")
    after = pane(["$ ls", "a", "$ seq 3", "1", "2", "3", "$", ""], history=4, cursor_y=2)  # scrolled by 4
    found = locate(after, mark)
    assert found.kind == "new" and after.lines(found.start, after.cursor_y) == ["$ seq 3", "1", "2", "3", "$"]


def test_a_cleared_or_redrawn_screen_or_a_full_screen_program_gives_the_screen():
    mark = Mark.at(pane(["$ ls", "a", "$", ""], history=0, cursor_y=2))
    cleared = pane(["$", "", "", ""], history=0, cursor_y=0)               # history gone too
    assert locate(cleared, mark).kind == "screen"
    redrawn = pane(["x", "y", "z", "$"], history=0, cursor_y=3)            # the marked row changed
    assert locate(redrawn, mark).kind == "screen"
    assert locate(pane(["vim", "", "", ""], 0, 0, alternate=True), mark).kind == "screen"
    assert locate(redrawn, None).kind == "new"                            # the first read: all of it


def test_a_start_before_the_capture_is_handed_back_to_be_fetched():
    mark = Mark.at(pane(["$ ls", "a", "$", ""], history=0, cursor_y=2))
    long = pane(["9998", "9999", "$", ""], history=10_000, cursor_y=2)     # only the last rows captured
    found = locate(long, mark)
    assert found.kind == "new" and found.start == 2 - 10_000 < long.first_row


def test_asciinema_v2_with_events_between_looks():
    raw = "€ one\r\n".encode() + b"\xff two\r\n"
    euro_split = 2                                   # a look fell inside the 3-byte euro sign
    text = asciinema(80, 24, 1000.0, raw, [(1000.5, euro_split), (1001.25, 9), (1002.0, len(raw))])
    lines = text.splitlines()
    header = json.loads(lines[0])
    assert header == {"version": 2, "width": 80, "height": 24, "timestamp": 1000,
                      "env": {"SHELL": "/bin/bash", "TERM": "screen"}}
    events = [json.loads(ln) for ln in lines[1:]]
    assert [e[1] for e in events] == ["o"] * len(events)
    assert [e[0] for e in events] == sorted(e[0] for e in events)
    assert "".join(e[2] for e in events) == "€ one\r\n\ufffd two\r\n"
    cut = asciinema(80, 24, 1000.0, b"x" * 10, [(1001.0, 10)], cut_at=10)
    assert "recording stopped at 10 bytes" in json.loads(cut.splitlines()[-1])[2]
    # samples that went backwards (a file truncated under us) or past the end are clamped
    odd = asciinema(80, 24, 1000.0, b"abc", [(1001.0, 99), (1000.5, 1)])
    assert "".join(json.loads(ln)[2] for ln in odd.splitlines()[1:]) == "abc"
