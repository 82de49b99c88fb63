"""Docker engine access: images built by content hash and limited, throwaway containers.

Every container gets no network (unless granted), memory / CPU / pid / file-size / disk
limits, a wall-clock limit per command, an output cap, and is removed afterwards — on
errors, on Ctrl-C and on SIGTERM too (`kill_all` stops live ones). A container also ends
by itself: its PID 1 (`KEEPER`) exits when its owner's attached stdin closes (the owner
died, even by SIGKILL) or when its longest allowed lifetime has passed, and the daemon
then removes it (auto-remove). `sweep_stale`, run whenever an Engine is opened, removes
what is left anyway (a keeper a hostile image defeated), found by the labels every
container carries.
"""
from __future__ import annotations

import io
import math
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from workbench.sandbox.box import Box, tar_files

LABEL = "workbench.sandbox"
OWNER_LABEL = "workbench.owner"
EXPIRES_LABEL = "workbench.expires"        # unix time after which any sweep may remove it
SESSION_LABEL = "workbench.session"        # the test run (or other caller) that made it, inherited by children
SESSION_ENV = "WORKBENCH_SANDBOX_SESSION"
ENV_REPOSITORY = "workbench/env"
DEFAULT_OUTPUT_CAP = 1024 * 1024
# The classic builder's error when a cached layer it picked is gone by the time it is used.
VANISHED_LAYER = "unable to find image \"sha256:"
_OWNER = f"{socket.gethostname()}:{os.getpid()}"


class SandboxError(RuntimeError):
    """The engine is missing or refused something; the message says what to do."""


# PID 1 of every container: reaps orphans (bash waits for any child), ignores signals sent
# from inside, and exits on EOF of the stdin its owner holds open (read's status 1) or after
# the lifetime; a line written to that stdin from inside (status 0) changes nothing. As PID 1
# it also survives a `kill -9 -1` that clears a solution's leftovers. Builtins only: no fork.
KEEPER = ('trap "" TERM INT HUP QUIT USR1 USR2; end=$((SECONDS + {lifetime})); '
          'while [ "$SECONDS" -lt "$end" ]; do read -r -t 1 _; rc=$?; '
          '[ "$rc" -eq 0 ] || [ "$rc" -gt 128 ] || exit 0; done')


def _default_lifetime() -> float:
    from workbench.sandbox.ceilings import CEILINGS
    return CEILINGS.longest_lifetime_s


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 256
    file_size_mb: int = 256
    output_bytes: int = DEFAULT_OUTPUT_CAP
    network: bool = False
    disk_mb: int = 2048          # the container's writable layer (its whole disk), watched while commands run
    shm_mb: int = 64             # /dev/shm is tmpfs: charged to memory, and capped on its own
    lifetime_s: float = field(default_factory=_default_lifetime)


@dataclass
class BuildResult:
    ok: bool
    image: str | None
    log: str
    seconds: float
    cached: bool = False
    reason: str = ""


def connect(timeout_s: float = 120):
    """A Docker client, or SandboxError saying how to get an engine."""
    import docker
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
        return client
    except Exception as exc:  # docker raises several kinds here
        raise SandboxError(
            f"no Docker engine answers ({exc.__class__.__name__}: {exc}). Install one "
            "(`apt-get install docker.io`) and start it (`dockerd &` or `systemctl start docker`); "
            "`workbench doctor` checks the whole set-up.") from None


class Engine:
    """One Docker client shared by threads, plus the registry of live containers.

    Opening one for work sweeps what dead owners left (the one place every command that
    starts containers passes through); `sweep=False` only looks."""

    def __reduce__(self):
        # A client and a live-container registry mean nothing in another process: an Engine
        # sent to a Ray worker becomes that process's own connection to its node's engine.
        return (node_engine, ())

    def __init__(self, client=None, *, sweep: bool = True):
        self.client = client or connect()
        self._live: dict[str, object] = {}
        self._keepalive: dict[str, object] = {}     # container id -> the attached stdin its PID 1 waits on
        self._lock = threading.Lock()
        self._build_locks: dict[str, threading.Lock] = {}
        self.swept = self.sweep_stale() if sweep else 0

    # ------------------------------------------------------------ images
    def image_exists(self, tag: str) -> bool:
        import docker.errors
        try:
            self.client.images.get(tag)
            return True
        except docker.errors.ImageNotFound:
            return False

    def build(self, context: dict[str, bytes], content_hash: str, timeout_s: float = 300.0) -> BuildResult:
        """Build `context` (the environment/ files) as workbench/env:<hash>, once per hash."""
        tag = f"{ENV_REPOSITORY}:{content_hash[:20]}"
        with self._lock:
            lock = self._build_locks.setdefault(tag, threading.Lock())
        with lock:
            if self.image_exists(tag):
                return BuildResult(True, tag, "image exists (same environment built before)", 0.0, cached=True)
            res = self._build(context, tag, timeout_s)
            if not res.ok and VANISHED_LAYER in res.reason:
                # A cached layer the build was reusing was removed meanwhile (another process on the
                # daemon removed an image and pruned its parents): the environment is not at fault,
                # so build once more without the cache instead of failing it.
                first = res.reason
                res = self._build(context, tag, timeout_s, nocache=True)
                res.log = f"(first try: {first}; built again without the cache)\n{res.log}"
            return res

    def _build(self, context: dict[str, bytes], tag: str, timeout_s: float, nocache: bool = False) -> BuildResult:
        import docker
        t0 = time.monotonic()
        lines: list[str] = []
        layers: list[str] = []
        error: list[str] = []
        # A dedicated API client per build, so a build past its time limit can be cut off
        # by closing it (the daemon then cancels the build) without disturbing other threads.
        api = docker.APIClient(timeout=timeout_s + 30, **docker.utils.kwargs_from_env())

        def consume() -> None:
            try:
                for chunk in api.build(fileobj=io.BytesIO(tar_files(context)), custom_context=True, tag=tag,
                                       rm=True, forcerm=True, pull=False, nocache=nocache, network_mode="none",
                                       decode=True, labels={LABEL: "1"}):
                    if "stream" in chunk:
                        text = chunk["stream"]
                        lines.append(text)
                        if text.startswith(" ---> ") and len(text.split()) == 2:
                            layers.append(text.split()[1])
                    if "error" in chunk:
                        error.append(chunk.get("error", "").strip())
            except Exception as exc:  # network errors, cut-off on timeout
                error.append(f"{exc.__class__.__name__}: {exc}")

        worker = threading.Thread(target=consume, daemon=True)
        worker.start()
        worker.join(timeout_s)
        timed_out = worker.is_alive()
        if timed_out:
            api.close()
            worker.join(30)
        api.close()
        log = "".join(lines)[-200_000:]
        seconds = time.monotonic() - t0
        if timed_out or error or not self.image_exists(tag):
            self._drop_layers(layers)
            reason = (f"build ran past its {timeout_s:.0f} s limit and was stopped" if timed_out
                      else f"build failed: {error[-1] if error else 'no image produced'}")
            return BuildResult(False, None, log + ("\n" + "\n".join(error) if error else ""), seconds, reason=reason)
        return BuildResult(True, tag, log, seconds)

    def _drop_layers(self, layers: list[str]) -> None:
        """Remove the untagged leaf a failed build leaves; shared cached parents stay."""
        import docker.errors
        for layer in reversed(layers):
            try:
                img = self.client.images.get(layer)
            except docker.errors.ImageNotFound:
                continue
            if img.tags:
                continue
            for attempt in range(4):
                try:
                    self.client.images.remove(img.id, noprune=False)
                    break
                except docker.errors.APIError as exc:
                    # The failed step's container may still be being removed; a parent of
                    # another image is not dangling and stays.
                    if "container" not in str(exc):
                        break
                    time.sleep(0.5)

    def remove_image(self, tag: str) -> None:
        import docker.errors
        try:
            self.client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass

    # ------------------------------------------------------------ containers
    @contextmanager
    def container(self, image: str, limits: Limits = Limits(), purpose: str = "check",
                  mounts: list | None = None) -> Iterator["Box"]:
        """A started container idling on `KEEPER`; removed on the way out, whatever happens, and
        by the daemon once its PID 1 ends (its owner gone or its lifetime over). `mounts`:
        docker.types.Mount objects (the verifier's read-only toolchain)."""
        from docker.types import LogConfig, Ulimit
        fsize = limits.file_size_mb * 1024 * 1024
        lifetime = max(1, math.ceil(limits.lifetime_s))
        labels = {LABEL: "1", OWNER_LABEL: _OWNER, "workbench.purpose": purpose,
                  EXPIRES_LABEL: str(int(time.time()) + lifetime), SESSION_LABEL: os.environ.get(SESSION_ENV, "")}
        # detach=False with stdin_open makes the daemon set StdinOnce: stdin closes when the one
        # attached client (this process) goes, and KEEPER reads EOF.
        c = self.client.containers.create(
            # The entrypoint is ours too, so an image's ENTRYPOINT cannot wrap or replace PID 1.
            image, entrypoint=["bash", "-c", KEEPER.format(lifetime=lifetime)],
            working_dir="/app", detach=False, stdin_open=True, auto_remove=True,
            network_mode="bridge" if limits.network else "none",
            mem_limit=f"{limits.memory_mb}m", memswap_limit=f"{limits.memory_mb}m", shm_size=f"{limits.shm_mb}m",
            nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids, privileged=False,
            security_opt=["no-new-privileges"], ulimits=[Ulimit(name="fsize", soft=fsize, hard=fsize)],
            log_config=LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
            labels=labels, mounts=mounts or [])
        with self._lock:
            self._live[c.id] = c
        try:
            sock = c.attach_socket(params={"stdin": 1, "stream": 1})
            with self._lock:
                self._keepalive[c.id] = sock
            c.start()
            yield Box(self, c, limits)
        finally:
            self._remove(c)

    def session(self, image: str, limits: Limits = Limits(), purpose: str = "session",
                timer: dict | None = None):
        """A long-lived container a stage execs in, with this module's limits and removal
        guarantees (a context manager; see workbench.sandbox.session)."""
        from workbench.sandbox.session import open_session
        return open_session(self, image, limits, purpose=purpose, timer=timer)

    def _remove(self, c) -> None:
        import docker.errors
        try:
            c.remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise
            _wait_removed(c)   # the daemon's auto-remove got there first: gone when we return
        finally:
            with self._lock:
                self._live.pop(c.id, None)
                sock = self._keepalive.pop(c.id, None)
            _close(sock)

    def kill_all(self) -> int:
        """Remove every container this process has running (cancel / SIGTERM)."""
        with self._lock:
            live = list(self._live.values())
        for c in live:
            try:
                self._remove(c)
            except Exception:
                pass
        return len(live)

    def sandbox_containers(self) -> list[dict]:
        """Every sandbox container on the engine, as the list endpoint returns them (no
        per-container inspect, so one vanishing meanwhile does not raise)."""
        return self.client.api.containers(all=True, filters={"label": LABEL})

    def orphaned_containers(self) -> list[dict]:
        """Sandbox containers of this process, of a process on this host that is gone, or past
        their lifetime. Containers without an owner label (a build's step containers carry
        the image's label) are someone's work in progress, never orphans."""
        host, now, out = socket.gethostname(), time.time(), []
        for c in self.sandbox_containers():
            labels = c.get("Labels") or {}
            if OWNER_LABEL not in labels:
                continue
            h, _, pid = labels[OWNER_LABEL].partition(":")
            mine = pid == str(os.getpid()) and h == host
            dead = h == host and not (pid.isdigit() and pid_alive(int(pid)))
            if mine or dead or _expired(labels, now):
                out.append(c)
        return out

    def session_containers(self, session: str) -> list[dict]:
        """Sandbox containers made under `session` (see SESSION_ENV), whoever made them."""
        return [c for c in self.sandbox_containers() if (c.get("Labels") or {}).get(SESSION_LABEL) == session]

    def sweep_stale(self) -> int:
        """Remove sandbox containers whose owner on this host is gone or whose lifetime is over."""
        import docker.errors
        removed = 0
        for c in self.orphaned_containers():
            labels = c.get("Labels") or {}
            if labels.get(OWNER_LABEL) == _OWNER and not _expired(labels, time.time()):
                continue   # our own live work
            try:
                self.client.api.remove_container(c["Id"], force=True)
                removed += 1
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if "already in progress" not in str(exc):
                    raise
        return removed


_node_engine: Engine | None = None
_node_engine_lock = threading.Lock()


def node_engine() -> Engine:
    """This process's Engine on this machine's Docker engine, opened (and swept) once:
    what an Engine pickled to a Ray worker becomes there."""
    global _node_engine
    with _node_engine_lock:
        if _node_engine is None:
            _node_engine = Engine()
        return _node_engine


def _expired(labels: dict, now: float) -> bool:
    try:
        return float(labels[EXPIRES_LABEL]) < now
    except (KeyError, ValueError):
        return False


def _wait_removed(c, timeout_s: float = 30.0) -> None:
    import docker.errors
    try:
        c.wait(condition="removed", timeout=timeout_s)
    except docker.errors.NotFound:
        pass
    except Exception:   # a slow daemon: the next sweep removes it
        pass


def _close(sock) -> None:
    """Close an attach socket for real (SocketIO.close leaves the underlying socket open)."""
    if sock is None:
        return
    try:
        getattr(sock, "_sock", sock).close()
        sock.close()
    except OSError:
        pass


def pid_alive(pid: int | None) -> bool:
    """Whether a process on this host still runs (a zombie awaiting its parent counts as gone)."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{int(pid)}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True
