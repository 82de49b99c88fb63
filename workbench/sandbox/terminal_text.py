"""The terminal's pure parts: keystroke strings into tmux arguments, what a pane capture shows
that the previous one did not, the head+tail cap, and the asciinema v2 recording. No Docker
here (workbench/sandbox/terminal.py runs these against a container), so each rule is tested on
its own."""
from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

# A whole keystroke string (less trailing newlines) made only of these is typed as tmux keys;
# anything else is text, typed literally. Terminus-2's prompt names C-c and C-d; the rest are
# the tmux names a model uses for editors and pagers.
_NAMED_KEYS = ("Enter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|PageUp|PageDown|PgUp|PgDn"
               "|PPage|NPage|IC|DC|Insert|Delete|F[1-9]|F1[0-2]")
_KEY = re.compile(rf"^(?:(?:[CMS]-)+(?:{_NAMED_KEYS}|[!-~])|(?:{_NAMED_KEYS})|\^[@A-Z\[\\\]^_?])$")
# tmux refuses a client command over 16 kB (its message size): text goes out in pieces well
# under that, several send-keys per tmux call while they fit.
TMUX_CALL_BUDGET = 12_000


def is_key_name(token: str) -> bool:
    return bool(_KEY.match(token))


def _literal(chunk: str) -> str:
    """tmux reads an argument that ends in ';' as a command separator ("ls;" runs "ls" and
    then nothing); "\\;" at the end is a literal ';' (cmd-parse.c), so that is what we send."""
    return chunk[:-1] + "\\;" if chunk.endswith(";") else chunk


def tmux_key_commands(keys: str, target: str) -> list[list[str]]:
    """tmux argument vectors (one per tmux call) that type `keys` into pane `target`.
    Text is sent with send-keys -l (never read as key names), each "\\n" as Enter. NUL
    cannot travel in an argv and is dropped; text that is not valid Unicode is replaced."""
    keys = keys.encode("utf-8", "replace").decode("utf-8").replace("\0", "")
    stripped = keys.rstrip("\n")
    tokens = stripped.split()
    if tokens and all(is_key_name(t) for t in tokens):
        sends: list[list[str]] = [["send-keys", "-t", target, *tokens]]
        sends += [["send-keys", "-t", target, "Enter"]] * (len(keys) - len(stripped))
    else:
        sends = []
        for i, line in enumerate(keys.split("\n")):
            if i:
                sends.append(["send-keys", "-t", target, "Enter"])
            for start in range(0, len(line), 2_000):    # a piece is at most ~8 kB of UTF-8
                sends.append(["send-keys", "-t", target, "-l", "--", _literal(line[start:start + 2_000])])
    calls: list[list[str]] = []
    size = TMUX_CALL_BUDGET
    for send in sends:
        n = sum(len(a.encode()) + 1 for a in send)
        if size + n > TMUX_CALL_BUDGET:
            calls.append(list(send))
            size = n
        else:
            calls[-1] += [";", *send]
            size += n + 2
    return calls


def enter_count(keys: str) -> int:
    """How many Enters a keystroke string types (each one a command line the shell may run)."""
    tokens = keys.rstrip("\n").split()
    named = tokens and all(is_key_name(t) for t in tokens)
    return keys.count("\n") + (sum(t in ("Enter", "C-m", "C-j") for t in tokens) if named else 0)


def cap_head_tail(text: str, cap: int, *, tail: str = "", gap_lines: int = 0) -> str:
    """At most about `cap` bytes of UTF-8: the first and last cap/2 (cut at character
    boundaries) with a line between them saying how much was left out. With `tail` and
    `gap_lines`, `text` is the start of an output and `tail` its end, `gap_lines` lines between
    them never captured: the head comes from `text`, the tail from `tail`."""
    head_b, tail_b = text.encode("utf-8"), tail.encode("utf-8")
    if len(head_b) + len(tail_b) <= cap and not gap_lines:
        return text + tail
    if not gap_lines:
        head_b, tail_b = head_b + tail_b, head_b + tail_b
    half = max(0, cap // 2 - 60)        # room for the marker line
    kept_head, kept_tail = head_b[:half], tail_b[max(0, len(tail_b) - half):]
    cut = (len(head_b) + len(tail_b) - len(kept_head) - len(kept_tail)) if gap_lines else \
        len(head_b) - len(kept_head) - len(kept_tail)
    what = ([f"{cut} bytes"] if cut > 0 else []) + ([f"{gap_lines} lines"] if gap_lines else [])
    head_s = kept_head.decode("utf-8", "ignore").rstrip("\n")
    tail_s = kept_tail.decode("utf-8", "ignore").lstrip("\n")
    return f"{head_s}\n[... output cut to {cap} bytes: {' and '.join(what)} left out ...]\n{tail_s}"


@dataclass(frozen=True)
class Pane:
    """One capture of the pane: `rows` are the captured lines, the last being the screen's
    bottom row; row numbers are relative to the screen's top (history rows are negative)."""
    history_size: int
    cursor_x: int
    cursor_y: int
    height: int
    alternate: bool              # a full-screen program (vim, less) has the alternate screen
    rows: tuple[str, ...]

    @property
    def first_row(self) -> int:
        return self.height - len(self.rows)

    def row(self, n: int) -> str | None:
        i = n - self.first_row
        return self.rows[i] if 0 <= i < len(self.rows) else None

    def lines(self, start: int, end: int) -> list[str]:
        """Rows start..end inclusive, as far as captured."""
        lo, hi = max(start, self.first_row), min(end, self.height - 1)
        return list(self.rows[lo - self.first_row: hi - self.first_row + 1])

    def screen(self) -> str:
        return "\n".join(self.lines(0, self.height - 1)).rstrip("\n")


@dataclass(frozen=True)
class Mark:
    """Where the previous read ended: the cursor's row counted from the top of the history,
    what it showed (a prompt, typed text gets appended to it) and the row above it."""
    row: int
    line: str
    above: str | None

    @classmethod
    def at(cls, pane: Pane) -> Mark:
        return cls(pane.history_size + pane.cursor_y, pane.row(pane.cursor_y) or "",
                   pane.row(pane.cursor_y - 1))


def mark_matches(rows: Pane, at: int, mark: Mark) -> bool:
    """Whether row `at` of `rows` is still the marked row: same text as read then (plus what
    was typed after it) and the same row above it."""
    line = rows.row(at)
    if line is None or not line.startswith(mark.line.rstrip()):
        return False
    above = rows.row(at - 1)
    return mark.above is None or above is None or above == mark.above


@dataclass(frozen=True)
class NewOutput:
    """What read_new returns and how it was found: `kind` "new" (the rows after the previous
    read), "screen" (that could not be told: the screen was cleared, the start scrolled out of
    the history, or a full-screen program draws), `start` the first row of the new part."""
    kind: str
    start: int


def locate(pane: Pane, mark: Mark | None) -> NewOutput:
    """Where the new output starts in `pane`, by position (history size + cursor row) checked
    against the marked row's text. A start before the captured rows comes back as is: the
    caller captures that part and checks it with mark_matches."""
    if pane.alternate:
        return NewOutput("screen", 0)
    if mark is None:
        return NewOutput("new", pane.first_row)
    start = mark.row - pane.history_size
    if start < -pane.history_size or start > pane.cursor_y:
        return NewOutput("screen", 0)          # cleared, or the history was trimmed past it
    if start >= pane.first_row and not mark_matches(pane, start, mark):
        return NewOutput("screen", 0)          # the rows moved (trimmed history) or were redrawn
    return NewOutput("new", start)


def visible_text(lines: list[str]) -> str:
    """Rows joined, without the blank rows below the last written one."""
    return "\n".join(lines).rstrip("\n").rstrip() + "\n" if any(s.strip() for s in lines) else ""


# ------------------------------------------------------------------------ asciinema v2
def asciinema(width: int, height: int, started: float, raw: bytes, samples: list[tuple[float, int]],
              *, cut_at: int | None = None) -> str:
    """An asciinema v2 recording: the header line, then [seconds, "o", text] events. `raw` is
    what the pane's programs wrote (its bytes as they came, escape codes and all); `samples`
    are (time, bytes written so far) taken at each look at the terminal, so each event is the
    output between two looks, stamped with the later one. Text is decoded incrementally (a
    character split between two events is kept whole); bytes that are not UTF-8 become U+FFFD.
    `cut_at`: the recording's byte cap, when it was reached (a last event says so)."""
    header = {"version": 2, "width": width, "height": height, "timestamp": int(started),
              "env": {"SHELL": "/bin/bash", "TERM": "screen"}}
    out = [json.dumps(header)]
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    done, last_t = 0, 0.0
    for t, size in sorted(samples, key=lambda s: s[0]) + [(None, len(raw))]:
        t = last_t if t is None else max(last_t, round(t - started, 6))
        size = min(max(size, done), len(raw))
        if size > done:
            text = decoder.decode(raw[done:size])
            if text:
                out.append(json.dumps([t, "o", text], ensure_ascii=False))
            done = size
        last_t = t
    tail = decoder.decode(b"", final=True)
    if tail:
        out.append(json.dumps([last_t, "o", tail], ensure_ascii=False))
    if cut_at is not None and len(raw) >= cut_at:
        out.append(json.dumps([last_t, "o", f"\r\n[recording stopped at {cut_at} bytes]\r\n"]))
    return "\n".join(out) + "\n"
