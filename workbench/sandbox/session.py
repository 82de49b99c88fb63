"""A long-lived sandbox container a synthesis stage works in: exec commands, read files and a
tree listing, write files.

A Session is a `Box` made by `Engine.container`, so it is hostile-safe in the same ways as
every one-shot check container: no network unless granted, memory / CPU / pid / file-size /
disk limits, a wall-clock limit and an output cap per command, labels that let any sweep find
it, a keeper as PID 1 that ends it when its owner dies or its lifetime is over, and removal on
the way out of the `with` block (on errors, Ctrl-C and SIGTERM too). A command that hits a
limit stops the whole session, as it stops a Box; every later call says so.

Reads stay bounded whatever the container holds: files come out through the daemon's archive
endpoint (resolved inside the container's root, streamed and cut at `max_bytes`), and the tree
listing is cut to its entry and byte caps inside the command, so a big tree never trips the
output cap (a tool replaced in the image can at worst trip it, which stops the session).
"""
from __future__ import annotations

import io
import re
import tarfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Literal

from workbench.sandbox.box import Box, ExecResult, tar_files

if TYPE_CHECKING:
    from workbench.sandbox.engine import Engine, Limits

EntryKind = Literal["file", "dir", "link", "other"]
_KINDS = {"f": "file", "d": "dir", "l": "link"}
# find's record: type, size, mode, mtime, depth, then the path (which may hold any byte but NUL).
_TREE_FORMAT = r"%y %s %m %T@ %d %p\0"
_TREE_BYTES_PER_ENTRY = 512          # the listing's byte cap is entries x this, at most half the output cap
_TREE_TIMEOUT_S = 60.0
_READ_CHUNK = 16 * 1024            # archive stream reads: a head costs its size, not the client's 2 MB default


class SessionStopped(RuntimeError):
    """The session's container was stopped at a limit or is gone; nothing more runs in it."""


@dataclass(frozen=True)
class TreeEntry:
    path: str            # absolute, as the container sees it
    kind: EntryKind
    size: int            # bytes (a link: the length of its target)
    mode: int            # permission bits, e.g. 0o755
    mtime: float = 0.0   # seconds since the epoch; with size and mode it tells a modified file


@dataclass
class Session:
    """A running container a stage execs in; made by `Engine.session` (see the module doc).
    `docker_s` is the time this session's calls waited on Docker; `timer["docker_s"]` (when
    given) accumulates the same."""
    box: Box
    timer: dict | None = None
    docker_s: float = 0.0
    tree_truncated: bool = False     # whether the last `tree` call was cut by a cap
    _stopped: str = ""
    history: list[str] = field(default_factory=list)

    # ------------------------------------------------------------ state
    @property
    def stopped(self) -> str:
        """Why the session no longer runs anything ("" while it does)."""
        return self._stopped

    @property
    def limits(self) -> Limits:
        return self.box.limits

    @property
    def image_id(self) -> str:
        """The id (sha256) of the image the session runs: what a cache of image facts keys on."""
        return str((getattr(self.box.container, "attrs", None) or {}).get("Image", ""))

    def _clock(self, t0: float) -> None:
        spent = time.monotonic() - t0
        self.docker_s += spent
        if self.timer is not None:
            self.timer["docker_s"] = self.timer.get("docker_s", 0.0) + spent

    def _refuse(self, what: str) -> None:
        if self._stopped:
            raise SessionStopped(f"cannot {what}: {self._stopped}")

    # ------------------------------------------------------------ commands
    def exec(self, cmd: str | list[str], timeout_s: float, workdir: str = "/app",
             environment: dict[str, str] | None = None) -> ExecResult:
        """Run `cmd` (a line for bash, or an argv as it is) under `timeout_s` and the output cap.
        Past a limit the session stops; this and every later call then come back with
        `container_gone` saying which command stopped it and why."""
        if self._stopped:
            return ExecResult(None, "", 0.0, container_gone=self._stopped,
                              memory_mb=self.limits.memory_mb, disk_mb=self.limits.disk_mb)
        t0 = time.monotonic()
        try:
            res = self.box.run(cmd, timeout_s, workdir=workdir, environment=environment)
        finally:
            self._clock(t0)
        line = cmd if isinstance(cmd, str) else " ".join(cmd)
        self.history.append(line)
        if res.stopped_by_limit:
            shown = line if len(line) <= 120 else line[:117] + "..."
            why = res.reason("it", timeout_s, self.limits.output_bytes).removeprefix("it ")
            self._stopped = f"the session was stopped: `{shown}` {why}; open a new session"
        return res

    # ------------------------------------------------------------ files
    def read_file(self, path: str, max_bytes: int = 65536) -> bytes | None:
        """The first `max_bytes` bytes of the regular file at `path`; None when there is no
        regular file there (missing, a directory, a link, a device)."""
        import docker.errors
        self._refuse(f"read {path}")
        t0 = time.monotonic()
        try:
            try:
                bits, _ = self.box.container.get_archive(path, chunk_size=_READ_CHUNK)
            except docker.errors.NotFound as exc:
                self._check_alive(exc)
                return None
            except docker.errors.APIError as exc:
                self._check_alive(exc)
                return None
            return _first_member(bits, max_bytes)
        finally:
            self._clock(t0)

    def write_files(self, files: dict[str, bytes], dest: str = "/", executables: set[str] | None = None) -> None:
        """Write `files` (paths relative to `dest`; a leading "/" is allowed when `dest` is "/")
        into the container, making parent folders; `*.sh` and `executables` get mode 0755."""
        self._refuse(f"write {len(files)} file(s) under {dest}")
        clean: dict[str, bytes] = {}
        for name, data in files.items():
            rel = name.lstrip("/") if dest.strip("/") == "" else name
            _check_relative(rel, name)
            clean[rel] = data
        exe = {(n.lstrip("/") if dest.strip("/") == "" else n) for n in (executables or set())}
        t0 = time.monotonic()
        try:
            self.box.container.put_archive("/", tar_files(clean, exe, prefix=dest.strip("/")))
        except Exception as exc:
            self._check_alive(exc)
            raise
        finally:
            self._clock(t0)

    def tree(self, root: str = "/app", max_entries: int = 2000) -> list[TreeEntry]:
        """Entries below `root` (not `root` itself), shallowest first then by path, at most
        `max_entries` (a missing root gives []). `tree_truncated` tells whether the cap cut it."""
        self._refuse(f"list {root}")
        byte_cap = min(max_entries * _TREE_BYTES_PER_ENTRY, self.limits.output_bytes // 2)
        # Sorted by depth inside the container, so the cap keeps the top of a big tree; both
        # caps apply there, so the listing never reaches the output cap. One filesystem only:
        # a root of "/" lists the image, not /proc, /sys or the verifier's mounted toolchain.
        # Bulk no prompt reads (git's object store, node_modules, __pycache__) is listed, not entered.
        script = ('find "$1" -xdev -mindepth 1 \\( -path "*/.git/objects" -o -name node_modules -o -name __pycache__ '
                  '\\) -printf "$2" -prune -o -printf "$2" 2>/dev/null | sort -z -s -t " " -k5,5n -k6 '
                  '| head -z -n "$3" | head -c "$4"')
        res = self.exec(["bash", "-c", script, "tree", root, _TREE_FORMAT, str(max_entries + 1), str(byte_cap)],
                        _TREE_TIMEOUT_S, workdir="/")
        if res.stopped_by_limit:
            raise SessionStopped(f"cannot list {root}: {self._stopped or res.container_gone}")
        records = res.output.split("\0")
        cut_by_bytes = bool(res.output) and not res.output.endswith("\0")
        records = records[:-1]              # "" after the last NUL, or a record the byte cap cut
        entries = [e for e in (_parse_entry(r) for r in records if r) if e is not None]
        self.tree_truncated = len(entries) > max_entries or cut_by_bytes
        return entries[:max_entries]

    def _check_alive(self, exc: Exception) -> None:
        """After a failed daemon call: raise SessionStopped when the container itself is gone."""
        import docker.errors
        try:
            self.box.container.reload()
            running = self.box.container.status == "running"
        except docker.errors.NotFound:
            running = False
        except docker.errors.APIError:
            return
        if not running:
            self._stopped = self._stopped or f"the session's container is no longer running ({exc})"
            raise SessionStopped(self._stopped)


def _first_member(bits, max_bytes: int) -> bytes | None:
    """The head of the archive's first member if it is a regular file; reads at most its
    headers (the member is named by its base name: a long one takes a PAX header of its own,
    under 2 KB) plus `max_bytes` from the stream."""
    buf = io.BytesIO()
    limit = max_bytes + 4096
    for chunk in bits:
        buf.write(chunk)
        if buf.tell() >= limit:
            break
    close = getattr(bits, "close", None)
    if close:
        close()
    buf.seek(0)
    try:
        with tarfile.open(fileobj=buf, mode="r|") as tar:
            member = tar.next()
            if member is None or not member.isfile():
                return None
            fh = tar.extractfile(member)
            return fh.read(min(max_bytes, member.size)) if fh else None
    except (tarfile.TarError, EOFError, OSError):
        return None


_BAD_CHARS = re.compile(r"[\x00\n\r]")


def _check_relative(rel: str, original: str) -> None:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or "" in parts or _BAD_CHARS.search(rel):
        raise ValueError(f"write_files: bad path {original!r}: it must be relative, with no '..', "
                         "empty parts or control characters")


def _parse_entry(record: str) -> TreeEntry | None:
    parts = record.split(" ", 5)
    if len(parts) != 6:
        return None
    kind, size, mode, mtime, _depth, path = parts
    try:
        return TreeEntry(path, _KINDS.get(kind, "other"), int(size), int(mode, 8), float(mtime))
    except ValueError:
        return None


@contextmanager
def open_session(engine: Engine, image: str, limits: Limits, purpose: str = "session",
                 timer: dict | None = None) -> Iterator[Session]:
    """A Session on `image`, removed on the way out whatever happens (see Engine.container)."""
    t0 = time.monotonic()
    session: Session | None = None
    try:
        with engine.container(image, limits, purpose=purpose) as box:
            session = Session(box, timer=timer)
            session._clock(t0)
            try:
                yield session
            finally:
                t0 = time.monotonic()   # from here the container's removal is Docker time too
    finally:
        if session is not None:
            session._clock(t0)
