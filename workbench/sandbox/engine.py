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
import tarfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

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
class ExecResult:
    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False
    output_capped: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.output_capped

    def reason(self, what: str, timeout_s: float, cap: int) -> str:
        if self.timed_out:
            return f"{what} ran past its {timeout_s:.0f} s limit and was killed"
        if self.output_capped:
            return f"{what} printed more than {cap // 1024} KiB of output and was stopped"
        if self.exit_code == 137:
            return f"{what} was killed (exit 137: out of memory or a limit)"
        return f"{what} exited with code {self.exit_code}"


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


def tar_files(files: dict[str, bytes], executables: set[str] | None = None, prefix: str = "") -> bytes:
    """An in-memory tar of files (paths already validated). Files get the current time, as
    freshly written files would: tasks may reason about mtimes (make, backups), and images
    are cached by content hash anyway."""
    now = int(time.time())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for path in sorted(files):
            full = f"{prefix}/{path}" if prefix else path
            parts = full.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
                    tar.addfile(info)
            data = files[path]
            info = tarfile.TarInfo(full)
            info.size, info.mtime = len(data), now
            executable = (executables and path in executables) or path.endswith(".sh")
            info.mode = 0o755 if executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


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
    def container(self, image: str, limits: Limits = Limits(), purpose: str = "check") -> Iterator["Box"]:
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
            labels={LABEL: "1", OWNER_LABEL: _OWNER, "workbench.purpose": purpose})
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


@dataclass
class Box:
    """A running container: copy files in, run commands with limits, read files out."""
    engine: Engine
    container: object
    limits: Limits
    history: list[str] = field(default_factory=list)

    def put(self, files: dict[str, bytes], dest: str) -> None:
        self.container.put_archive("/", tar_files(files, prefix=dest.strip("/")))

    def run(self, cmd: str, timeout_s: float, workdir: str = "/app") -> ExecResult:
        api = self.engine.client.api
        t0 = time.monotonic()
        exec_id = api.exec_create(self.container.id, ["bash", "-c", cmd], workdir=workdir)["Id"]
        stream = api.exec_start(exec_id, stream=True)
        chunks: list[bytes] = []
        size = [0]
        capped, finished = threading.Event(), threading.Event()

        def read() -> None:
            # Keep draining after the cap: a daemon with an undrained exec stream takes ~10 s
            # to kill the container.
            try:
                for part in stream:
                    if capped.is_set():
                        continue
                    if size[0] + len(part) > self.limits.output_bytes:
                        chunks.append(part[: max(0, self.limits.output_bytes - size[0])])
                        size[0] = self.limits.output_bytes
                        capped.set()
                        finished.set()
                        continue
                    chunks.append(part)
                    size[0] += len(part)
            except Exception:
                pass  # the container was killed under us
            finally:
                finished.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        finished.wait(timeout_s)
        timed_out = not finished.is_set()
        if timed_out or capped.is_set():
            self._kill()
            reader.join(15)
        code = None
        if not timed_out and not capped.is_set():
            try:
                code = api.exec_inspect(exec_id).get("ExitCode")
            except Exception:
                code = None
        output = b"".join(chunks).decode("utf-8", errors="replace")
        self.history.append(cmd)
        return ExecResult(code, output, time.monotonic() - t0, timed_out, capped.is_set())

    def process_count(self) -> int | None:
        """Processes alive in the container now (the cgroup's pid count), None if unknown.
        Read from the daemon, not by exec: when a fork bomb holds every pid, exec cannot start."""
        try:
            stats = self.engine.client.api.stats(self.container.id, stream=False, one_shot=True)
            return int(stats.get("pids_stats", {}).get("current"))
        except Exception:
            return None

    def pids_exhausted(self, samples: int = 1) -> bool:
        """Whether the pid table is (nearly) full. A fork bomb's children die and respawn, so
        its count hovers just under the cap: a margin, and a few samples where it matters."""
        for i in range(samples):
            count = self.process_count()
            if count is not None and count >= self.limits.pids * 0.9:
                return True
            if i + 1 < samples:
                time.sleep(0.05)
        return False

    def _kill(self) -> None:
        try:
            self.container.kill()
        except Exception:
            pass

    def read_files(self, path: str, max_bytes: int = 4 * 1024 * 1024) -> dict[str, bytes]:
        """Regular files under `path` in the container (empty when it does not exist)."""
        import docker.errors
        try:
            bits, _ = self.container.get_archive(path)
        except docker.errors.NotFound:
            return {}
        except docker.errors.APIError:
            return {}
        buf = io.BytesIO()
        for chunk in bits:
            buf.write(chunk)
            if buf.tell() > max_bytes:
                break
        buf.seek(0)
        out: dict[str, bytes] = {}
        try:
            with tarfile.open(fileobj=buf, mode="r:") as tar:
                for m in tar:
                    if m.isfile() and m.size <= max_bytes:
                        f = tar.extractfile(m)
                        if f is not None:
                            out[m.name] = f.read()
        except (tarfile.TarError, EOFError):
            pass
        return out
