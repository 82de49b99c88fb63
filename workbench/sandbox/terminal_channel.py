"""One long-lived `docker exec` that runs the terminal's look script on request, so a look costs
a round trip on a socket (a few ms) instead of a new exec (tens of ms; hundreds on a loaded
daemon).

The exec runs bash with the script as a function; each request on its stdin is a count and
that many NUL-terminated arguments; each answer is "WBLEN <bytes>\\n" and that many bytes (a
length, not an end marker, so nothing the pane shows can end an answer early). Anything odd —
the agent killed the server (`kill -9 -1`), an answer too big or too late, the trial revoked
the box — breaks the channel for good and the terminal goes back to one exec per look through
Box.run, which has its own limits.
"""
from __future__ import annotations

import socket
import struct
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.sandbox.box import Box

MAX_ANSWER_BYTES = 1024 * 1024    # the look script cuts its captures far below this

_SERVER = r'''exec 2>/dev/null
eval "look() {
$1
}"
while IFS= read -r -d '' n; do
  [[ $n =~ ^[0-9]+$ ]] || exit 0
  args=(); for ((i = 0; i < n; i++)); do IFS= read -r -d '' a || exit 0; args+=("$a"); done
  out=$(look "${args[@]}"; printf x)
  LC_ALL=C; k=$(( ${#out} - 1 )); [ "$k" -ge 0 ] || k=0; printf 'WBLEN %s\n%s' "$k" "${out:0:k}"; unset LC_ALL
done
'''


class ChannelBroken(Exception):
    """The channel cannot be used (any more): go back to Box.run."""


def revoked(box: Box) -> bool:
    flag = getattr(box, "revoked", None)     # the trial's AgentBox: taken back after the cut-off
    return bool(flag is not None and flag.is_set())


class Channel:
    def __init__(self, box: Box, script: str):
        self.box = box
        if revoked(box):
            raise ChannelBroken("the box was revoked")
        api = box.engine.client.api
        try:
            exec_id = api.exec_create(box.container.id, ["bash", "-c", _SERVER, "wbterm-server", script],
                                      stdin=True, workdir="/app")["Id"]
            sock = api.exec_start(exec_id, socket=True)
        except Exception as exc:
            raise ChannelBroken(f"could not start: {exc}") from None
        self._keep = sock                                  # the SocketIO wrapper owns the fd
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._buf = b""
        self.broken = ""

    def call(self, args: list[str], timeout_s: float) -> str:
        """The look script's output for `args`; ChannelBroken when it could not be had."""
        if self.broken or revoked(self.box):
            raise ChannelBroken(self.broken or "the box was revoked")
        try:
            payload = b"".join(a.encode("utf-8", "replace") + b"\0" for a in [str(len(args)), *args])
            self._sock.settimeout(timeout_s)
            self._sock.sendall(payload)
            return self._answer(time.monotonic() + timeout_s).decode("utf-8", errors="replace")
        except (OSError, ValueError, ChannelBroken) as exc:
            self.close(f"{type(exc).__name__}: {exc}")
            raise ChannelBroken(self.broken) from None

    def _answer(self, deadline: float) -> bytes:
        while b"\n" not in self._buf:
            self._fill(deadline)
        head, _, self._buf = self._buf.partition(b"\n")
        if not head.startswith(b"WBLEN "):
            raise ValueError(f"not an answer: {head[:80]!r}")
        size = int(head[6:])
        if not 0 <= size <= MAX_ANSWER_BYTES:
            raise ValueError(f"an answer of {size} bytes")
        while len(self._buf) < size:
            self._fill(deadline)
        out, self._buf = self._buf[:size], self._buf[size:]
        return out

    def _fill(self, deadline: float) -> None:
        """One frame of the exec's multiplexed stream (8-byte header: stream, size); stderr
        frames are dropped."""
        header = self._recv(8, deadline)
        kind, size = header[0], struct.unpack(">I", header[4:])[0]
        if len(self._buf) + size > MAX_ANSWER_BYTES + 64:
            raise ValueError("answer over the cap")
        data = self._recv(size, deadline)
        if kind == 1:
            self._buf += data

    def _recv(self, n: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ValueError("no answer in time")
            self._sock.settimeout(left)
            part = self._sock.recv(n - got)
            if not part:
                raise ValueError("the server ended")
            chunks.append(part)
            got += len(part)
        return b"".join(chunks)

    def close(self, why: str = "closed") -> None:
        self.broken = self.broken or why
        for closer in (lambda: self._sock.shutdown(socket.SHUT_RDWR), self._sock.close, self._keep.close):
            try:
                closer()
            except Exception:
                pass
