"""A tmux terminal inside a running sandbox container, for agents that type (terminus-2).

Interface (implemented by the terminal helper; terminus-2 codes against it):
- `Terminal.open(box, width=160, height=40)`: start a tmux server and one session in the
  container (the base image has tmux), shell bash, a recording of everything shown.
- `send_keys(keys)`: one keystroke string as Terminus-2 sends it: text typed as is, a
  trailing "\\n" is Enter, tmux key names ("C-c", "C-d", "Escape", …) are those keys.
- `wait(seconds)`: let the command run (capped at MAX_WAIT_S); returns early once the shell is
  idle again when that can be told cheaply.
- `read_new() -> str`: the output shown since the previous read (the captured pane and its
  history diffed against what was read before), capped at 10 kB: 5 kB head + 5 kB tail with a
  marker saying how much was left out.
- `screen() -> str`: the visible pane now.
- `recording() -> str`: asciinema v2 text of the session (header + [t, "o", text] events).
- `close()`: stop the tmux server (the trial also stops every process before the tests).
Every call is bounded in time; a container stopped at a limit raises SessionStopped.
"""
from __future__ import annotations

MAX_WAIT_S = 60.0
OUTPUT_CAP_BYTES = 10_000
