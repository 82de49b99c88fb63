"""Docker engine access: images built by content hash and limited, throwaway containers.

Every container gets no network (unless asked), memory / CPU / pid / file-size limits, a
wall-clock limit per command, an output cap, and is removed afterwards — on errors, on
Ctrl-C and on SIGTERM too (`kill_all` stops live ones; `sweep_stale` removes what a killed
process left behind, found by the labels every container carries).
"""
from __future__ import annotations

import io
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from workbench.sandbox.box import Box, tar_files

LABEL = "workbench.sandbox"
OWNER_LABEL = "workbench.owner"
ENV_REPOSITORY = "workbench/env"
DEFAULT_OUTPUT_CAP = 1024 * 1024
_OWNER = f"{socket.gethostname()}:{os.getpid()}"


class SandboxError(RuntimeError):
    """The engine is missing or refused something; the message says what to do."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 256
    file_size_mb: int = 256
    output_bytes: int = DEFAULT_OUTPUT_CAP
    network: bool = False


@dataclass
class BuildResult:
    ok: bool
    image: str | None
    log: str
    seconds: float
    cached: bool = False
    reason: str = ""


def connect():
    """A Docker client, or SandboxError saying how to get an engine."""
    import docker
    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except Exception as exc:  # docker raises several kinds here
        raise SandboxError(
            f"no Docker engine answers ({exc.__class__.__name__}: {exc}). Install one "
            "(`apt-get install docker.io`) and start it (`dockerd &` or `systemctl start docker`); "
            "`workbench doctor` checks the whole set-up.") from None


class Engine:
    """One Docker client shared by threads, plus the registry of live containers."""

    def __init__(self, client=None):
        self.client = client or connect()
        self._live: dict[str, object] = {}
        self._lock = threading.Lock()
        self._build_locks: dict[str, threading.Lock] = {}

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
            return self._build(context, tag, timeout_s)

    def _build(self, context: dict[str, bytes], tag: str, timeout_s: float) -> BuildResult:
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
                                       rm=True, forcerm=True, pull=False, network_mode="none", decode=True,
                                       labels={LABEL: "1"}):
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
        """A started container idling on `sleep infinity`; removed on the way out, whatever happens.
        Docker's init runs as PID 1 so the orphans a solution leaves behind are reaped instead of
        holding pids as zombies (`sleep` would never reap them)."""
        from docker.types import LogConfig, Ulimit
        fsize = limits.file_size_mb * 1024 * 1024
        c = self.client.containers.create(
            image, command=["sleep", "infinity"], working_dir="/app", detach=True, init=True,
            network_mode="bridge" if limits.network else "none",
            mem_limit=f"{limits.memory_mb}m", memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.pids, privileged=False,
            security_opt=["no-new-privileges"], ulimits=[Ulimit(name="fsize", soft=fsize, hard=fsize)],
            log_config=LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
            labels={LABEL: "1", OWNER_LABEL: _OWNER, "workbench.purpose": purpose}, mounts=mounts or [])
        with self._lock:
            self._live[c.id] = c
        try:
            c.start()
            yield Box(self, c, limits)
        finally:
            self._remove(c)

    def _remove(self, c) -> None:
        import docker.errors
        try:
            c.remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise
        finally:
            with self._lock:
                self._live.pop(c.id, None)

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
        """Sandbox containers of this process or of a process on this host that is gone."""
        host, out = socket.gethostname(), []
        for c in self.sandbox_containers():
            h, _, pid = (c.get("Labels") or {}).get(OWNER_LABEL, "").partition(":")
            mine = pid == str(os.getpid()) and h == host
            if mine or not (h == host and pid.isdigit() and pid_alive(int(pid))):
                out.append(c)
        return out

    def sweep_stale(self) -> int:
        """Remove sandbox containers whose owning process on this host is gone."""
        import docker.errors
        removed = 0
        for c in self.orphaned_containers():
            if (c.get("Labels") or {}).get(OWNER_LABEL) == _OWNER:
                continue   # our own live work
            try:
                self.client.api.remove_container(c["Id"], force=True)
                removed += 1
            except docker.errors.NotFound:
                pass
        return removed


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
