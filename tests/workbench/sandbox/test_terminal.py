"""The tmux Terminal in a real container of the base image: keystrokes reach the shell literally,
long output comes back as head + tail within the cap, a running command shows as not finished
and Ctrl-C stops it, a flood neither stops the container nor comes back whole, the recording is
asciinema v2, bytes that are not UTF-8 survive, and a turn costs one docker exec."""
from __future__ import annotations

import hashlib
import json
import time

import docker.errors
import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Limits
from workbench.sandbox.session import SessionStopped
from workbench.sandbox.terminal import OUTPUT_CAP_BYTES, Terminal, TerminalError

pytestmark = pytest.mark.docker

# Everything tmux send-keys and bash could misread: quotes, $ and $(), backslashes, a leading
# dash, tmux's own separator (';' inside and at the very end, and '\;'), braces, UTF-8. (A tab
# is the Tab key, as typed: readline completes with it.)
TRICKY = "-n a \"b\" 'c' $HOME $(id -u) `x` \\ \\n {a;b} ; ~ * é€ \\;;"


@pytest.fixture
def term(engine):
    with engine.container(base_image_name(), Limits()) as box:
        t = Terminal.open(box, width=120, height=30)
        yield t
        t.close()


def turn(term: Terminal, keys: str, wait_s: float = 10.0) -> tuple[bool, str]:
    term.send_keys(keys)
    done = term.wait(wait_s)
    return done, term.read_new()


def test_keystrokes_reach_the_shell_literally(term):
    assert term.read_new() == term.screen().strip() + "\n"    # the first read: the fresh screen, a prompt
    assert term.last_read_kind == "new" and term.screen().endswith("/app#")
    done, out = turn(term, f"cat > /tmp/typed <<'EOF'\n{TRICKY}\nEOF\n")
    assert done, out
    typed = term.box.run(["cat", "/tmp/typed"], 10).output
    assert typed == TRICKY + "\n"
    done, out = turn(term, "echo one; echo two;\n")        # a command line ending in ';'
    assert done and "one\ntwo\n" in out, out
    assert out.startswith("root@") and "echo one; echo two;" in out.splitlines()[0]


@pytest.mark.parametrize("channel", [True, False])
def test_a_turn_is_one_round_trip_and_returns_when_the_command_is_done(engine, channel):
    with engine.container(base_image_name(), Limits()) as box:
        term = Terminal.open(box, channel=channel)
        term.read_new()
        calls, execs = term.stats.calls, term.stats.execs
        t0 = time.monotonic()
        done, out = turn(term, "echo quick\n", wait_s=30)
        assert done and "quick" in out
        assert time.monotonic() - t0 < 10          # not the 30 s asked: the prompt came back
        assert term.stats.calls - calls == 1       # keys, wait and capture in one look
        # over the channel (started by open) a turn starts no exec
        assert term.stats.execs - execs == (0 if channel else 1)
        assert term.stats.overhead_s > 0 and term.stats.waited_s >= 0
        term.close()
        assert box.run("pgrep -x tmux || echo none", 10).output == "none\n"    # stopped, shell and all
        if channel:                                # open, turns and close: one docker exec in all
            assert term.stats.execs == 1


def test_the_first_read_and_a_screen_right_after_a_read_reuse_the_look_they_follow(engine):
    with engine.container(base_image_name(), Limits()) as box:
        term = Terminal.open(box)
        calls = term.stats.calls
        first = term.read_new()                    # open's own look, the prompt drawn on it
        assert first.rstrip().endswith("/app#") and term.stats.calls == calls
        assert term.screen() == first.rstrip("\n") and term.stats.calls == calls
        assert term.screen().endswith("/app#") and term.stats.calls == calls + 1   # a second one looks
        term.send_keys("echo typed\n")
        assert term.wait(10)
        term.read_new()
        calls = term.stats.calls
        term.send_keys("echo more\n")             # keys typed after the read: the screen is looked at anew
        term.screen()
        assert term.stats.calls == calls + 1
        term.close()


def test_a_killed_channel_or_a_revoked_box_falls_back_to_one_exec_per_look(engine):
    import threading
    with engine.container(base_image_name(), Limits()) as box:
        term = Terminal.open(box)
        turn(term, "echo warm\n")
        assert term._channel is not None
        done, out = turn(term, "kill -9 -1\n", wait_s=2)       # kills our channel (and tmux, and the shell)
        done, out = turn(term, "echo still-typing\n")
        assert done and "still-typing" in out
        box.revoked = threading.Event()                         # as the trial's AgentBox has it
        box.revoked.set()
        execs = term.stats.execs
        done, out = turn(term, "echo after-revoke\n")
        assert "after-revoke" in out and term.stats.execs > execs   # by Box.run, which the trial guards
        term.close()


def test_long_output_is_capped_head_and_tail(term):
    term.read_new()
    done, out = turn(term, "seq 1 300\n")       # within one capture: all of it
    assert done and out.splitlines()[1:301] == [str(i) for i in range(1, 301)]
    done, out = turn(term, "seq 1 30000\n", wait_s=30)
    assert done
    assert len(out.encode()) <= OUTPUT_CAP_BYTES
    lines = out.splitlines()
    assert lines[0].endswith("seq 1 30000") and lines[1:4] == ["1", "2", "3"]
    assert lines[-2:] == ["30000", lines[-1]] and lines[-1].startswith("root@")
    assert any("left out" in ln for ln in lines)
    done, out = turn(term, "python3 -c \"print('x' * 100000)\"\n", wait_s=30)   # one huge line
    assert done and len(out.encode()) <= OUTPUT_CAP_BYTES and "left out" in out


def test_a_running_command_is_not_finished_and_ctrl_c_stops_it(term):
    term.read_new()
    done, out = turn(term, "sleep 30\n", wait_s=1)
    assert not done and "sleep 30" in out
    assert not term.wait(0.5)
    t0 = time.monotonic()
    done, out = turn(term, "C-c", wait_s=10)
    assert done and time.monotonic() - t0 < 8
    assert "^C" in out
    done, out = turn(term, "echo status=$?\n")
    assert done and "status=130" in out


def test_a_flood_does_not_stop_the_container(term):
    term.read_new()
    # 2 MB of output: twice the Box's output cap, and 1M lines, far beyond tmux's history.
    done, out = turn(term, "yes | head -c 2000000; echo flood-done\n", wait_s=60)
    assert done
    assert len(out.encode()) <= OUTPUT_CAP_BYTES and "flood-done" in out
    assert term.box.run("echo alive", 10).output == "alive\n"
    done, out = turn(term, "echo after\n")
    assert done and term.last_read_kind == "new" and "after\n" in out and "y\ny" not in out


def test_bytes_that_are_not_utf8_and_escape_codes_survive(term):
    term.read_new()
    done, out = turn(term, "printf '\\xff\\xfe ok \\xe9 \\033[31mred\\033[0m \\xe2\\x82\\xac\\n'\n")
    assert done and " ok " in out and "red €" in out
    assert "\x1b" not in out                    # the capture is text, not escape codes


def test_full_screen_program_shows_its_screen_then_the_shell_goes_on(term):
    term.read_new()
    turn(term, "printf '\\033[?1049h\\033[Hfull screen app'\n", wait_s=2)
    assert term.last_read_kind == "screen" and "full screen app" in term.screen()
    done, out = turn(term, "printf '\\033[?1049l'; echo back\n")
    assert done and term.last_read_kind == "new" and out.splitlines()[-2] == "back"


def test_an_exited_shell_or_a_killed_server_gets_a_new_one(term):
    term.read_new()
    turn(term, "exit\n", wait_s=1)
    done, out = turn(term, "echo back\n")
    assert done and "back" in out
    turn(term, "tmux -S \"${TMUX%%,*}\" kill-server\n", wait_s=1)
    done, out = turn(term, "echo again\n")
    assert done and "again" in out


def test_the_recording_is_asciinema_v2(term):
    term.read_new()
    turn(term, "echo recorded-$((6*7))\n")
    turn(term, "printf '\\xff\\n'\n")
    term.close()
    lines = term.recording().splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 2 and (header["width"], header["height"]) == (120, 30)
    assert isinstance(header["timestamp"], int)
    events = [json.loads(ln) for ln in lines[1:]]
    assert events and all(isinstance(t, float | int) and kind == "o" and isinstance(text, str)
                          for t, kind, text in events)
    times = [e[0] for e in events]
    assert times == sorted(times) and times[0] >= 0
    shown = "".join(e[2] for e in events)
    assert "recorded-42" in shown and "echo recorded-$((6*7))" in shown and "\ufffd" in shown
    assert term.recording() == "\n".join(lines) + "\n"     # kept after close


def test_a_replaced_tmux_only_hurts_the_agent(term):
    """The container is the agent's: a tmux that prints megabytes of junk leaves the terminal
    blind (empty reads, or TerminalError), never over the Box's output cap, never a crash."""
    term.read_new()
    box = term.box
    fake = "#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\0' x\nprintf '\\377\\n'\n"
    assert box.run("mv /usr/bin/tmux /usr/bin/tmux.real", 10).ok
    box.put({"tmux": fake.encode()}, "/usr/bin")
    assert box.run("chmod +x /usr/bin/tmux && /usr/bin/tmux | wc -c", 30).output.strip() == "3000002"
    for _ in range(2):
        term.send_keys("echo lost\n")
        try:
            term.wait(1)
            assert len(term.read_new().encode()) <= OUTPUT_CAP_BYTES
        except TerminalError:
            pass
    assert term.box.run("echo alive", 10).output == "alive\n"


def test_a_stopped_container_raises_session_stopped_and_close_does_not(engine):
    with engine.container(base_image_name(), Limits()) as box:
        term = Terminal.open(box)
        term.send_keys("echo before\n")
        assert term.wait(5)
        assert box.run("sleep 10", 0.5).timed_out          # a limit stops the container
        with pytest.raises(SessionStopped, match="time limit"):
            term.wait(1)
        term.close()
        assert json.loads(term.recording().splitlines()[0])["version"] == 2


@pytest.mark.slow
def test_a_huge_paste_is_typed_in_several_round_trips_and_arrives_whole(term):
    term.read_new()
    big = "\n".join(f"line {i} " + "abcdefghij" * 6 for i in range(4500))     # ~320 kB
    calls = term.stats.calls
    term.send_keys(f"cat > /tmp/big <<'EOF'\n{big}\nEOF\n")
    assert term.stats.calls - calls >= 1      # over the per-round-trip budget: typed before the wait
    assert term.wait(60)
    assert len(term.read_new().encode()) <= OUTPUT_CAP_BYTES
    assert term.box.run("md5sum < /tmp/big", 10).output.split()[0] == hashlib.md5((big + "\n").encode()).hexdigest()


def running(engine, box) -> bool:
    try:
        return engine.client.api.inspect_container(box.container.id)["State"]["Running"]
    except docker.errors.NotFound:          # stopped and auto-removed
        return False


def test_the_disk_cap_holds_while_the_model_thinks(engine):
    """The agent's commands run in tmux, not in a Box.run: the terminal watches the container's
    disk for the whole session (between looks too) and stops it past the cap."""
    with engine.container(base_image_name(), Limits(disk_mb=40)) as box:
        term = Terminal.open(box)
        term.send_keys("head -c 120M /dev/zero > /tmp/fill; echo filled\n")
        term.wait(0.1)                     # the model gets the turn back at once...
        deadline = time.monotonic() + 30   # ...and thinks, while the command writes (watched from
        while time.monotonic() < deadline:  # outside: a Box.run here would bring its own watcher)
            if not running(engine, box):
                break
            time.sleep(0.5)
        assert not running(engine, box)
        with pytest.raises(SessionStopped, match="disk"):
            term.wait(1)
        term.close()


def test_a_terminal_nobody_closed_stops_watching_when_its_container_goes(engine):
    import threading
    before = set(threading.enumerate())
    with engine.container(base_image_name(), Limits()) as box:
        Terminal.open(box)
        ours = [t for t in threading.enumerate() if t.name == "terminal-disk" and t not in before]
        assert len(ours) == 1
    ours[0].join(10)
    assert not ours[0].is_alive()
