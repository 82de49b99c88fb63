"""A tmux terminal inside a running sandbox container, for agents that type (terminus-2).

Interface (terminus-2 codes against it):
- `Terminal.open(box, width=160, height=40)`: start a tmux server and one session in the
  container (the base image has tmux), shell bash, a recording of everything shown.
- `send_keys(keys)`: one keystroke string as Terminus-2 sends it: text typed as is, each "\\n"
  is Enter, a string of tmux key names ("C-c", "C-d", "Escape", "Up", …) are those keys. The
  keys go out with the next call that looks at the terminal (wait, read_new, screen), in the
  same round trip, so a turn costs one round trip per command.
- `wait(seconds) -> bool`: let the command run (capped at MAX_WAIT_S); returns early, True,
  once a prompt shows after the typed keys with no typed input left over (bash's
  PROMPT_COMMAND keeps the count); False when something still runs, or the keys went to a
  program (a REPL, an editor). With nothing typed since the last True it waits the whole time.
- `read_new() -> str`: the output shown since the previous read (the captured pane and its
  history diffed against where the previous read ended), capped at 10 kB: 5 kB head + 5 kB tail
  with a line saying how much was left out. Right after a wait it costs nothing (the wait
  captured the pane). `last_read_kind` says "new", or "screen" when what is new could not be
  told (a cleared screen, a start scrolled out of the history, a full-screen program) and the
  visible screen was returned instead.
- `screen() -> str`: the visible pane now.
- `recording() -> str`: asciinema v2 text of the session (header + [t, "o", text] events).
- `close()`: stop the tmux server (the trial also stops every process before the tests).
- `stats`: round trips, docker execs started, seconds in them, and seconds of those spent
  waiting as asked (the rest, `overhead_s`, is harness overhead).
A round trip is one request over a long-lived exec (terminal_channel.py; a few ms), or one
`docker exec` through Box.run when that channel cannot be used (the first call; the agent
killed it; the trial revoked the box).
Every call is bounded in time and in bytes (captures are cut inside the container, so a flood
never reaches the Box's output cap); a container stopped at a limit raises SessionStopped.

Hostile by default: the container is the agent's. Our tmux server has its own socket and our
files their own folder, so the agent's own tmux use does not meet ours; a replaced tmux, bash
or coreutils only hurts the agent (its terminal stops answering: TerminalError), and whatever
the pane shows (bytes that are not UTF-8, huge lines, escape codes) is data to us.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.sandbox.session import SessionStopped
from workbench.sandbox.terminal_channel import Channel, ChannelBroken, revoked
from workbench.sandbox.terminal_text import (Mark, Pane, asciinema, cap_head_tail, locate, mark_matches,
                                             tmux_key_commands, visible_text)

if TYPE_CHECKING:
    from workbench.sandbox.box import Box

MAX_WAIT_S = 60.0
OUTPUT_CAP_BYTES = 10_000
HISTORY_LIMIT = 50_000            # lines tmux keeps; more scrolls out (a flood's start is then lost)
CAPTURE_LINES = 400               # history lines each look captures; a longer output costs one more exec
HEAD_LINES = 300                  # of a longer output, the lines captured for its head
CAPTURE_BYTES = 256 * 1024        # cut inside the container, well under the Box's output cap
RECORDING_BYTES = 2 * 1024 * 1024
PENDING_KEYS_BYTES = 256 * 1024   # typed in one round trip at most (an exec's argv is ~2 MB in all)
POLL_S = 0.02                     # how often a wait looks at the prompt counter
DIR = "/run/workbench-terminal"   # our socket, shell rc, prompt counter and recording
_EXEC_SLACK_S = 20.0              # an exec's limit beyond the wait it was asked for
_FIRST_PROMPT_S = 10.0
_CHANNEL_TRIES = 3                # channels broken (the agent killed it) before one exec per look for good

# The look script, one run per look (over the channel, or by Box.run). $1..$11 as below,
# then the tmux calls that type the pending keys, each as a count and that many arguments.
# START=1 (the first call, or the previous look found no session: the agent killed the
# server) starts the session; 2 (the agent exited its shell) respawns the shell; 3 stops it.
# It reads the prompt counter, types, and (EARLY=1) waits until a prompt after the typing
# shows with no typed input left over, or the time is up; then prints one WBTERM line, tmux's facts about
# the pane and the rows FROM..UPTO cut to their last CAP bytes (a cut only loses the oldest
# rows; ${var: -n} in the C locale counts bytes and needs no fork of tail; no ${var%%pattern}
# on what tmux printed: bash matches those in quadratic time, and a replaced tmux can print
# megabytes). bash's PROMPT_COMMAND writes the counter as "N P": N prompts so far, P=1 when
# typed input was already waiting (read -t 0) as that prompt showed, so the next line runs at
# once and the shell is not idle yet. That tells a heredoc (many Enters, one command) or a
# REPL (Enters that bash never sees) apart for free.
# Forks per call: tmux (twice with keys); waiting is builtins only. The recording is written
# by dd (unbuffered: the file grows as the pane shows output; head -c would hold it back in
# stdio buffers); its size is dd's file position, read from /proc without a fork (stat once dd
# is gone: the cap was reached, or the agent killed it).
_SCRIPT = r'''exec 2>/dev/null
D=$1 T=$2 WAIT_MS=$3 EARLY=$4 TARGET=$5 FROM=$6 UPTO=$7 CAP=$8 START=$9 SIZE=${10} RC=${11}; shift 11
S=$D/tmux.sock
counter() { read -r n p 2>/dev/null < "$D/prompts"; [[ $n =~ ^[0-9]+$ ]] || n=0; [ "$p" = 0 ] || p=1; }
if [ "$START" = 3 ]; then tmux -S "$S" kill-server >/dev/null; echo WBTERM-CLOSED; return 0 || exit 0; fi
if [ "$START" = 1 ]; then
  mkdir -p "$D" && printf '%s\n' "$RC" > "$D/rc" && : > "$D/prompts"
  tmux -S "$S" -f /dev/null start-server \; set -g history-limit ''' + str(HISTORY_LIMIT) + r''' \; \
    set -g status off \; set -g remain-on-exit on \; \
    new-session -d -s "$T" -x "${SIZE% *}" -y "${SIZE#* }" "exec bash --rcfile '$D/rc' -i" \; \
    pipe-pane -t "$T" "echo \$\$ > '$D/ddpid'; exec dd bs=65536 oflag=append conv=notrunc status=none \
      iflag=count_bytes count=''' + str(RECORDING_BYTES) + r''' of='$D/rec'" >/dev/null \
    || { echo "WBTERM-FAILED tmux"; exit 3; }
elif [ "$START" = 2 ]; then
  : > "$D/prompts"; tmux -S "$S" respawn-pane -t "$T" >/dev/null
fi
sent=-1
if [ $# -gt 0 ]; then counter; sent=$n; TARGET=$((n + 1)); EARLY=1; fi
while [ $# -gt 0 ]; do k=$1; shift; tmux -S "$S" "${@:1:$k}" >/dev/null; shift "$k"; done
idle=0; t0=$EPOCHREALTIME          # the wait starts once the keys are typed
[ -p "$D/tick" ] || mkfifo "$D/tick"; exec 9<>"$D/tick"
end=$(( ${t0/[.,]/} + WAIT_MS * 1000 ))
while :; do
  counter
  if [ "$EARLY" = 1 ] && [ "$n" -ge "$TARGET" ] && [ "$p" = 0 ]; then idle=1; break; fi
  [ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || break
  read -r -t ''' + str(POLL_S) + r''' -u 9 _; [ $? -gt 128 ] || sleep ''' + str(POLL_S) + r'''
done
t1=$EPOCHREALTIME; s1=
read -r pid 2>/dev/null < "$D/ddpid" && while read -r k v; do [ "$k" = pos: ] && { s1=$v; break; }; done \
  2>/dev/null < "/proc/$pid/fdinfo/1"
[[ $s1 =~ ^[0-9]+$ ]] || { s1=$(stat -c %s "$D/rec") || s1=0; }
printf 'WBTERM %s %s %s %s %s %s %s\n' "$idle" "$n" "$p" "$sent" "$t0" "$t1" "${s1:-0}"
F='PANE #{history_size} #{cursor_x} #{cursor_y} #{pane_height} #{alternate_on} #{pane_dead}'
for try in 1 2 3 4 5 6 7 8 9 10; do   # the first look (START=1) waits a little for PS1 to be drawn
  rows=$(tmux -S "$S" display -p -t "$T" "$F #{==:#{pane_current_command},bash}" \; \
    capture-pane -p -t "$T" -S "$FROM" -E "$UPTO"; printf x)
  [ "$START" = 1 ] && [ "$idle" = 1 ] || break
  read -r _ _ cx cy _ <<< "${rows:0:100}"; [ "$cx$cy" = 00 ] || break
  read -r -t ''' + str(POLL_S) + r''' -u 9 _
done
LC_ALL=C; IFS= read -r facts <<< "${rows:0:200}"; k=$(( ${#rows} - ${#facts} - 2 )); [ "$k" -gt 0 ] || k=0
rows=${rows:${#facts}+1:$k}
[ "${#rows}" -le "$CAP" ] || rows=${rows: -$CAP}; printf '%s\n%s' "$facts" "$rows"
'''


def _prompt_drawn(pane: Pane) -> bool:
    """Something shows on the screen (bash's first prompt): the cursor left the top-left corner."""
    return pane.cursor_x > 0 or pane.cursor_y > 0


class TerminalError(RuntimeError):
    """The terminal does not answer (tmux or bash missing or replaced in the container)."""


@dataclass
class TerminalStats:
    calls: int = 0             # round trips into the container (a look, close)
    execs: int = 0             # of which docker execs started (the channel is one; Box.run fallbacks)
    exec_s: float = 0.0        # wall time of those round trips
    waited_s: float = 0.0      # of which waiting inside the container, as wait() was asked

    @property
    def overhead_s(self) -> float:
        return max(0.0, self.exec_s - self.waited_s)


@dataclass
class _Look:
    idle: bool                   # a prompt came back after the keys typed (none left over)
    typeahead: bool              # the last prompt showed with typed input still waiting
    at_shell: bool               # the pane's foreground program is bash
    pane: Pane


@dataclass
class Terminal:
    box: Box
    width: int = 160
    height: int = 40
    name: str = "agent"
    stats: TerminalStats = field(default_factory=TerminalStats)
    last_read_kind: str = "new"
    _pending: list[list[str]] = field(default_factory=list)
    _pending_bytes: int = 0
    _start: int = 1                   # the next exec starts the session (1) or respawns its shell (2)
    _sent_at: int | None = None       # the prompt count before keys not yet seen done
    _mark: Mark | None = None
    _look: _Look | None = None        # the last look, while no key was typed after it
    _read_look: _Look | None = None   # the look the last read_new used, until keys or a look follow
    _started: float = 0.0
    _samples: list[tuple[float, int]] = field(default_factory=list)
    _recording: str | None = None
    _channel: Channel | None = None
    use_channel: bool = True          # False: one docker exec per look (the channel's baseline)
    _channel_breaks: int = 0
    _watch_done: threading.Event = field(default_factory=threading.Event)
    _disk_full: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def open(cls, box: Box, width: int = 160, height: int = 40, *, name: str = "agent",
             channel: bool = True) -> Terminal:
        """`channel=False`: every look by its own docker exec (the channel's baseline)."""
        term = cls(box, width, height, name, use_channel=channel)
        term._started = time.time()
        term._sent_at = 0
        look = term._exec(_FIRST_PROMPT_S)     # until bash shows its first prompt
        # The agent's first read_new takes this look (no second round trip for the same fresh
        # screen) when the prompt is on it: the wait ends at PROMPT_COMMAND, which bash runs
        # just before it draws PS1, so the script recaptures a blank screen for up to ~0.2 s
        # (an image whose PS1 is empty keeps it blank: that look is not kept).
        if not _prompt_drawn(look.pane):
            term._look = None
        if term.use_channel:
            threading.Thread(target=term._watch_disk, daemon=True, name="terminal-disk").start()
        return term

    def _watch_disk(self) -> None:
        """The disk cap while the session lives. Box.run watches the writable layer only while
        its own command runs; the agent's commands run in tmux, seen through the channel, so
        the terminal watches for the whole session, model time included, and stops the
        container past the cap as Box.run would."""
        box = self.box
        # Until close, or the container is gone (three polls without an answer), stopped or
        # taken back: a terminal nobody closed must not poll forever.
        box.watch_disk(self._watch_done, self._disk_full, quit_when=lambda: bool(box.stopped) or revoked(box),
                       max_unknown=3)
        if self._disk_full.is_set():
            box.stop_at_limit("disk")

    @property
    def _dir(self) -> str:
        return f"{DIR}/{self.name}"

    # ------------------------------------------------------------------- the interface
    def send_keys(self, keys: str) -> None:
        for call in tmux_key_commands(keys, self.name):
            self._pending.append(call)
            self._pending_bytes += sum(len(a.encode()) + 1 for a in call)
            if self._pending_bytes > PENDING_KEYS_BYTES:     # an argv has limits: type what we have
                self._exec(0.0)
        self._look = self._read_look = None

    def wait(self, seconds: float) -> bool:
        waiting = bool(self._pending) or self._sent_at is not None
        look = self._exec(min(max(0.0, float(seconds)), MAX_WAIT_S))
        # Nothing typed to wait for: the whole time (the model may wait on a background job),
        # then whether the shell is at its prompt.
        return look.idle if waiting else (look.at_shell and not look.typeahead)

    def read_new(self) -> str:
        look = self._look or self._exec(0.0)
        self._look = None
        self._read_look = look
        pane = look.pane
        found = locate(pane, self._mark)
        self.last_read_kind = found.kind
        if found.kind == "screen":
            text = cap_head_tail(visible_text(pane.lines(0, pane.height - 1)), OUTPUT_CAP_BYTES)
        elif found.start >= pane.first_row:
            text = cap_head_tail(visible_text(pane.lines(found.start, pane.height - 1)), OUTPUT_CAP_BYTES)
        else:
            text = self._long_output(pane, found.start)
        if not pane.alternate:        # a full-screen program's rows are not the shell's: keep the mark
            self._mark = Mark.at(pane)
        return text

    def screen(self) -> str:
        """Right after a read with nothing typed since, the pane that read captured (terminus-2
        asks for the screen when a read found nothing new: the same instant, one round trip less)."""
        look = self._read_look or self._exec(0.0)
        self._read_look = None
        return look.pane.screen()

    def recording(self) -> str:
        """The session so far (after close: as it was then). A container already gone or taken
        back by the trial gives the header alone."""
        if self._recording is not None:
            return self._recording
        try:
            raw = self.box.read_files(f"{self._dir}/rec", max_bytes=RECORDING_BYTES + 1).get("rec", b"")
        except Exception:             # RevokedError, a daemon error: the recording is not worth a crash
            raw = b""
        return asciinema(self.width, self.height, self._started, raw, self._samples, cut_at=RECORDING_BYTES)

    def close(self) -> None:
        """Keep the recording, then stop the tmux server (and with it the shell). Never raises:
        a container stopped at a limit has no terminal left to stop."""
        if self._recording is not None:
            return
        self._recording = self.recording()
        try:
            self._look_script([self._dir, self.name, "0", "0", "0", "0", "0", "0", "3", "", ""], 10.0)
        except (SessionStopped, TerminalError):
            pass
        if self._channel is not None:
            self._channel.close()
        self._watch_done.set()

    # ------------------------------------------------------------------- one look
    def _long_output(self, pane: Pane, start: int) -> str:
        """Output longer than one capture: its head captured on its own (and checked against
        the mark: the rows may have moved), the tail from the look."""
        head_look = self._exec(0.0, rows=(start - 1, start + HEAD_LINES), keep=False)
        if self._mark is None or not mark_matches(head_look.pane, start, self._mark):
            self.last_read_kind = "screen"
            return cap_head_tail(visible_text(pane.lines(0, pane.height - 1)), OUTPUT_CAP_BYTES)
        head = visible_text(head_look.pane.lines(start, start + HEAD_LINES))
        gap = pane.first_row - (start + HEAD_LINES + 1)
        tail = visible_text(pane.lines(start + HEAD_LINES + 1 if gap < 0 else pane.first_row, pane.height - 1))
        return cap_head_tail(head, OUTPUT_CAP_BYTES, tail=tail, gap_lines=max(0, gap))

    def _exec(self, wait_s: float, *, rows: tuple[int, int] | None = None, keep: bool = True) -> _Look:
        first, last = rows or (-CAPTURE_LINES, self.height - 1)
        calls = [a for call in self._pending for a in (str(len(call)), *call)]
        self._pending, self._pending_bytes = [], 0
        args = [self._dir, self.name, str(int(wait_s * 1000)), str(int(self._sent_at is not None)),
                str((self._sent_at or 0) + 1), str(first), str(last), str(CAPTURE_BYTES), str(self._start),
                f"{self.width} {self.height}", self._rc(), *calls]
        self._read_look = None
        out = self._look_script(args, wait_s + _EXEC_SLACK_S)
        head, _, body = out.partition("\n")
        info, _, body = body.partition("\n")
        fields, facts = head.split(" "), info.split(" ")
        try:
            if len(fields) != 8 or fields[0] != "WBTERM":
                raise ValueError
            idle, typeahead, sent = fields[1] == "1", fields[3] == "1", int(fields[4])
            t0, t1, size = float(fields[5].replace(",", ".")), float(fields[6].replace(",", ".")), int(fields[7])
        except ValueError:
            raise TerminalError(f"the terminal did not answer (tmux or bash missing or replaced?): "
                                f"{out[:200]!r}") from None
        if sent >= 0:
            self._sent_at = sent      # the prompt count before these keys: a later prompt ends them
        if idle:
            self._sent_at = None
        self.stats.waited_s += max(0.0, min(t1 - t0, wait_s))
        self._samples.append((t1, size))
        try:
            if len(facts) != 8 or facts[0] != "PANE":
                raise ValueError
            hs, cx, cy, height = (int(v) for v in facts[1:5])
            alternate, dead, at_shell = facts[5] == "1", facts[6] == "1", facts[7] == "1"
        except ValueError:            # no session: the agent killed our tmux server
            self._start, self._sent_at = 1, 0
            look = _Look(idle, typeahead, False, Pane(0, 0, 0, self.height, False, ("",) * self.height))
            self._look = look if keep else self._look
            return look
        if dead:                      # the agent exited its shell: a new one, whose first prompt ends the wait
            self._start, self._sent_at = 2, 0
        else:
            self._start = 0
        lines = body.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if rows is not None:          # rows first..last: index them from the first one
            lo = max(first, -hs)
            pane = Pane(hs, cx, cy, lo + len(lines), alternate, tuple(lines))
        else:
            expected = min(hs, CAPTURE_LINES) + height
            if len(lines) < expected and lines:
                lines.pop(0)          # cut by the byte cap: the oldest row may be partial
            pane = Pane(hs, cx, cy, height, alternate, tuple(lines[-expected:]))
        look = _Look(idle, typeahead, at_shell, pane)
        if keep:
            self._look = look
        return look

    def _look_script(self, args: list[str], timeout_s: float) -> str:
        """The look script's output: over the channel (started by the first call), else (it
        could not start, it broke) by one exec."""
        if self._disk_full.is_set():
            raise SessionStopped(f"the container's disk grew past its {self.box.limits.disk_mb} MB limit "
                                 "and the container was stopped")
        if self._channel is None and self.use_channel:
            t = time.monotonic()
            try:
                self._channel = Channel(self.box, _SCRIPT)
                self.stats.execs += 1
            except ChannelBroken:
                self.use_channel = False
            finally:                  # starting the exec is the terminal's time, not the caller's
                self.stats.exec_s += time.monotonic() - t
        if self._channel is not None and self.use_channel:
            t = time.monotonic()
            try:
                return self._channel.call(args, timeout_s)
            except ChannelBroken:     # the request may not have run: once more by exec
                self._channel = None
                self._channel_breaks += 1
                self.use_channel = self._channel_breaks < _CHANNEL_TRIES
            finally:
                self.stats.calls += 1
                self.stats.exec_s += time.monotonic() - t
        return self._run(["bash", "-c", _SCRIPT, "wbterm", *args], timeout_s)

    def _run(self, argv: list[str], timeout_s: float) -> str:
        t = time.monotonic()
        res = self.box.run(argv, timeout_s)
        self.stats.execs += 1
        self.stats.calls += 1
        self.stats.exec_s += time.monotonic() - t
        if res.stopped_by_limit:
            raise SessionStopped(res.container_gone or res.reason("the terminal", timeout_s,
                                                                   self.box.limits.output_bytes))
        return res.output

    def _rc(self) -> str:
        """The shell's rc file: what an interactive bash reads (--rcfile replaces both), then our
        prompt counter (builtins only: the agent's shell forks nothing more than it would)."""
        counter = f"{self._dir}/prompts"
        return ("[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc\n[ -f ~/.bashrc ] && . ~/.bashrc\n__wb_n=0\n"
                "__wb_prompt() { local p=0; read -t 0 && p=1; __wb_n=$((__wb_n+1)); "
                f"{{ printf '%s %s\\n' \"$__wb_n\" \"$p\" > {counter}; }} 2>/dev/null; }}\n"
                'PROMPT_COMMAND="__wb_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}"')
