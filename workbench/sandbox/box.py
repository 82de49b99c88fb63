"""A running sandbox container: copy files in, run commands under a wall-clock limit and an
output cap, read files and the process count out."""
from __future__ import annotations

import io
import tarfile
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from workbench.sandbox.exec_stream import ExecStream

if TYPE_CHECKING:
    from workbench.sandbox.engine import Engine, Limits


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


# Where a container's own cgroup reports its OOM kills (v1, then v2), read from inside.
OOM_COUNT_CMD = ("sed -n 's/^oom_kill //p' /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null "
                 "|| sed -n 's/^oom_kill //p' /sys/fs/cgroup/memory.events")


@dataclass
class ExecResult:
    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False
    output_capped: bool = False
    disk_full: bool = False          # the writable layer grew past the cap: the container was stopped
    oom_killed: bool = False         # a process of this command was killed by the kernel's OOM killer
    container_gone: str = ""         # why the command could not run at all
    memory_mb: int = 0
    disk_mb: int = 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.stopped_by_limit and not self.oom_killed

    @property
    def stopped_by_limit(self) -> bool:
        """Cut off by the sandbox (the container was killed or is gone): nothing after it can run."""
        return self.timed_out or self.output_capped or self.disk_full or bool(self.container_gone)

    def reason(self, what: str, timeout_s: float, cap: int) -> str:
        if self.timed_out:
            return f"{what} ran past its {timeout_s:.0f} s limit and was killed"
        if self.output_capped:
            return f"{what} printed more than {cap // 1024} KiB of output and was stopped"
        if self.disk_full:
            return f"{what} wrote more than {self.disk_mb} MB to the container's disk and was stopped"
        if self.oom_killed:
            return f"{what} ran out of its {self.memory_mb} MB memory limit (killed by the kernel, exit {self.exit_code})"
        if self.container_gone:
            return f"{what} could not run: {self.container_gone}"
        if self.exit_code == 137:
            return f"{what} was killed (exit 137: SIGKILL)"
        return f"{what} exited with code {self.exit_code}"


@dataclass
class Box:
    """A running container: copy files in, run commands with limits, read files out."""
    engine: Engine
    container: object
    limits: Limits
    history: list[str] = field(default_factory=list)
    disk_poll_s: list[float] = field(default_factory=list)   # what each disk poll cost (a daemon directory walk)
    _oom_kills_seen: int = 0
    _stopped: str = ""

    def put(self, files: dict[str, bytes], dest: str) -> None:
        self.container.put_archive("/", tar_files(files, prefix=dest.strip("/")))

    def run(self, cmd: str | list[str], timeout_s: float, workdir: str = "/app",
            environment: dict[str, str] | None = None) -> ExecResult:
        """`cmd`: a line for the container's bash, or an argv run as it is (the verifier's
        own executables, called by absolute path, never through the container's PATH)."""
        import docker.errors
        api = self.engine.client.api
        t0 = time.monotonic()
        argv = list(cmd) if isinstance(cmd, list) else ["bash", "-c", cmd]
        sized = {"memory_mb": self.limits.memory_mb, "disk_mb": self.limits.disk_mb}
        try:
            if self._stopped:
                raise docker.errors.NotFound(self._stopped)
            exec_id = api.exec_create(self.container.id, argv, workdir=workdir, environment=environment)["Id"]
            stream = ExecStream(api, exec_id)    # not api.exec_start: it can drop the first output
        except docker.errors.APIError as exc:   # stopped at a limit before, or its PID 1 ended
            self.history.append(cmd if isinstance(cmd, str) else " ".join(cmd))
            gone = self._stopped or f"the container is no longer running ({exc.explanation or exc})"
            return ExecResult(None, "", time.monotonic() - t0, container_gone=gone, **sized)
        chunks: list[bytes] = []
        size = [0]
        capped, finished, disk_full = threading.Event(), threading.Event(), threading.Event()

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
                stream.close()
                finished.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        watcher = threading.Thread(target=self.watch_disk, args=(finished, disk_full), daemon=True)
        watcher.start()
        finished.wait(timeout_s)
        timed_out = not finished.is_set()
        stopped = timed_out or capped.is_set() or disk_full.is_set()
        if stopped:
            self.stop_at_limit("time" if timed_out else "output" if capped.is_set() else "disk")
            reader.join(15)
        finished.set()
        watcher.join(15)
        code = None
        if not stopped:
            try:
                code = api.exec_inspect(exec_id).get("ExitCode")
            except Exception:
                code = None
        oom = code not in (None, 0) and self._new_oom_kill()   # a killed child may surface as any code
        output = b"".join(chunks).decode("utf-8", errors="replace")
        self.history.append(cmd if isinstance(cmd, str) else " ".join(cmd))
        return ExecResult(code, output, time.monotonic() - t0, timed_out, capped.is_set(), disk_full.is_set(),
                          oom, **sized)

    def disk_used(self) -> int | None:
        """Bytes in the container's writable layer (the daemon's SizeRw), None if unknown."""
        t0 = time.monotonic()
        try:
            rows = self.engine.client.api.containers(all=True, size=True, filters={"id": self.container.id})
            return int(rows[0].get("SizeRw") or 0) if rows else None
        except Exception:
            return None
        finally:
            self.disk_poll_s.append(time.monotonic() - t0)

    def watch_disk(self, finished: threading.Event, disk_full: threading.Event, *,
                   quit_when: Callable[[], bool] | None = None, max_unknown: int | None = None) -> None:
        """Poll the writable layer until `finished` is set (or `quit_when()` says so, or the
        daemon gave no size `max_unknown` times in a row); past the cap set `disk_full` and
        `finished` — the caller stops the container (`stop_at_limit("disk")`). A poll walks the
        layer's files in the daemon (~1 ms when small, ~140 ms at 20k files), so the pause
        between polls grows with its cost: polling takes at most a fifth of the time."""
        cap = self.limits.disk_mb * 1024 * 1024
        unknown = 0
        while not finished.is_set() and not (quit_when and quit_when()):
            used = self.disk_used()
            unknown = unknown + 1 if used is None else 0
            if max_unknown is not None and unknown >= max_unknown:
                return
            if used is not None and used > cap:
                disk_full.set()
                finished.set()
                return
            finished.wait(max(0.25, 4 * self.disk_poll_s[-1]))

    def stop_at_limit(self, limit: str) -> None:
        """Stop the container at its `limit` ("time", "output", "disk"); every later call says so."""
        self._kill()
        self._stopped = f"the container was stopped at its {limit} limit before"

    @property
    def stopped(self) -> str:
        """Why the container no longer runs anything ("" while it does)."""
        return self._stopped

    def _new_oom_kill(self) -> bool:
        """Whether the kernel OOM-killed something since the last look: the cgroup's own count,
        from this host's cgroup files, else read from inside; the daemon's OOMKilled flag where
        exec cannot start."""
        api = self.engine.client.api
        try:
            count = self._host_oom_count()
            if count is None:
                exec_id = api.exec_create(self.container.id, ["sh", "-c", OOM_COUNT_CMD])["Id"]
                count = int(b"".join(ExecStream(api, exec_id)).decode(errors="replace").split()[0])
        except Exception:
            try:
                return bool(api.inspect_container(self.container.id)["State"].get("OOMKilled"))
            except Exception:
                return False
        new = count > self._oom_kills_seen
        self._oom_kills_seen = count
        return new

    def _host_oom_count(self) -> int | None:
        """The container's OOM kill count read from its cgroup on this host (v1, then v2): no
        exec, and nothing inside can fake it. None on a remote engine."""
        cid = self.container.id
        for path in (f"/sys/fs/cgroup/memory/docker/{cid}/memory.oom_control",
                     f"/sys/fs/cgroup/docker/{cid}/memory.events",
                     f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/memory.events"):
            try:
                with open(path) as fh:
                    for line in fh:
                        if line.startswith("oom_kill "):
                            return int(line.split()[1])
            except (OSError, ValueError):
                continue
        return None

    def settle_oom_count(self) -> None:
        """Count the OOM kills so far as seen, so the next command reports only its own (the
        count is the container's: one in an agent's part is not the tests')."""
        self._new_oom_kill()

    def process_count(self) -> int | None:
        """Processes alive in the container now (the cgroup's pid count), None if unknown. Read
        from outside, never by exec (when a fork bomb holds every pid, exec cannot start): the
        cgroup file on this host is instant and always there; the daemon's stats call is the
        fallback for a remote engine (under load it now and then answers without pids_stats,
        which made a full pid table read as not full in a clean-clone CI run)."""
        for path in self._cgroup_files("pids.current", "pids.current"):
            try:
                with open(path) as fh:
                    return int(fh.read())
            except (OSError, ValueError):
                continue
        for attempt in range(3):
            try:
                stats = self.engine.client.api.stats(cid, stream=False, one_shot=True)
                return int(stats.get("pids_stats", {}).get("current"))
            except Exception:
                time.sleep(0.05 * (attempt + 1))
        return None

    def live_process_count(self) -> int | None:
        """Tasks alive in the container now, zombies left out, read from outside (the cgroup's
        task list, which a task leaves as it exits; pids.current still counts it until its parent
        reaps it, and our PID 1 reaps about once a second). None where there is no cgroup file
        (a remote engine): process_count() is then all there is."""
        for path in self._cgroup_files("tasks", "cgroup.threads"):
            try:
                with open(path) as fh:
                    return sum(1 for line in fh if line.strip())
            except OSError:
                continue
        return None

    def _cgroup_files(self, v1: str, v2: str) -> tuple[str, ...]:
        """The container's file of its pids cgroup, as cgroup v1 and v2 name it on this host."""
        cid = self.container.id
        return (f"/sys/fs/cgroup/pids/docker/{cid}/{v1}", f"/sys/fs/cgroup/docker/{cid}/{v2}",
                f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/{v2}")

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
