"""The sandbox on a real Docker engine: limits hold, output is capped, containers go away."""
import os
import socket
import subprocess
import threading
import time

import docker.errors
import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import (EXPIRES_LABEL, LABEL, OWNER_LABEL, SESSION_ENV, SESSION_LABEL, BuildResult,
                                      Engine, Limits)

pytestmark = pytest.mark.docker


def _live(engine):
    return engine.orphaned_containers()


def test_no_network_limits_and_cleanup(engine):
    with engine.container(base_image_name(), Limits(memory_mb=256, pids=64)) as box:
        cid = box.container.id
        net = box.run("cat /sys/class/net/*/operstate | wc -l; ls /sys/class/net", 20)
        assert net.ok and "eth0" not in net.output           # only loopback: no network
        mem = box.run("cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max", 20)
        assert str(256 * 1024 * 1024) in mem.output
        assert box.process_count() == 1 and not box.pids_exhausted()  # the keeper (PID 1) alone
        pids = box.run("for i in $(seq 200); do sleep 5 & done 2>&1; wait", 30)
        assert "Resource temporarily unavailable" in pids.output or "retry" in pids.output
        box.run("for i in $(seq 58); do sleep 30 >/dev/null 2>&1 & done 2>/dev/null; true", 30)
        assert box.process_count() >= 59 and box.pids_exhausted()  # read by the daemon, exec would fail
    assert all(c.id != cid for c in _live(engine))


def test_timeout_and_output_cap_are_reported(engine):
    with engine.container(base_image_name(), Limits(output_bytes=64 * 1024)) as box:
        t0 = time.monotonic()
        slow = box.run("sleep 600", 2)
        assert slow.timed_out and not slow.ok and time.monotonic() - t0 < 15
        assert "ran past its 2 s limit" in slow.reason("solve.sh", 2, 64 * 1024)
    with engine.container(base_image_name(), Limits(output_bytes=64 * 1024)) as box:
        t0 = time.monotonic()
        loud = box.run("yes 0123456789 | head -c 1000000000", 60)
        assert loud.output_capped and len(loud.output) <= 64 * 1024 and time.monotonic() - t0 < 10
        assert "more than 64 KiB" in loud.reason("solve.sh", 60, 64 * 1024)
    assert _live(engine) == []


def test_container_removed_on_exception_and_files_copied(engine):
    with pytest.raises(RuntimeError):
        with engine.container(base_image_name()) as box:
            box.put({"a/b.txt": b"hello", "run.sh": b"echo hi"}, "/work")
            res = box.run("cat /work/a/b.txt; ls -l /work/run.sh", 10)
            assert res.output.startswith("hello") and "rwxr-xr-x" in res.output
            assert box.read_files("/work/a") == {"a/b.txt": b"hello"}
            raise RuntimeError("boom")
    assert _live(engine) == []


def test_kill_all_stops_running_work(engine):
    result = {}

    def work():
        with engine.container(base_image_name()) as box:
            result["r"] = box.run("sleep 600", 300)
    t = threading.Thread(target=work)
    t.start()
    for _ in range(100):
        if engine._live:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    assert engine.kill_all() == 1
    t.join(30)
    assert not t.is_alive() and not result["r"].ok
    assert _live(engine) == []


def test_build_once_per_content_and_failed_build_leaves_no_dangling_image(engine):
    ctx = {"Dockerfile": f"FROM {base_image_name()}\nCOPY x.txt /x.txt\n".encode(), "x.txt": b"same"}
    first = engine.build(ctx, "test-" + "a" * 30)
    again = engine.build(ctx, "test-" + "a" * 30)
    assert first.ok and not first.cached and again.cached and again.image == first.image
    engine.remove_image(first.image)
    dangling_before = {i.id for i in engine.client.images.list(filters={"dangling": True})}
    exited_before = {c["Id"] for c in engine.client.api.containers(all=True, filters={"status": "exited"})}
    bad = engine.build({"Dockerfile": f"FROM {base_image_name()}\nRUN echo step > /s\nRUN exit 3\n".encode()},
                       "test-" + "b" * 30)
    assert not bad.ok and "returned a non-zero code: 3" in bad.reason
    assert not engine.image_exists("workbench/env:test-" + "b" * 15)
    dangling_after = {i.id for i in engine.client.images.list(filters={"dangling": True})}
    assert dangling_after <= dangling_before
    exited_after = {c["Id"] for c in engine.client.api.containers(all=True, filters={"status": "exited"})}
    assert _live(engine) == [] and exited_after <= exited_before   # the failed step's container is gone


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_opening_an_engine_sweeps_dead_owners_and_expired_but_not_others_work(engine):
    host, now = socket.gethostname(), int(time.time())

    def planted(labels):
        c = engine.client.containers.create(base_image_name(), ["sleep", "infinity"],
                                            labels={LABEL: "1", SESSION_LABEL: os.environ.get(SESSION_ENV, ""), **labels})
        c.start()
        return c
    dead = planted({OWNER_LABEL: f"{host}:{_dead_pid()}"})
    expired = planted({OWNER_LABEL: "elsewhere:1", EXPIRES_LABEL: str(now - 1)})
    elsewhere = planted({OWNER_LABEL: "elsewhere:1", EXPIRES_LABEL: str(now + 600)})   # another host's live work
    building = planted({})   # a build step's container: it carries the image's label, no owner
    try:
        opened = Engine()    # every command opens one for work (another process's may have swept first)
        ids = {c["Id"] for c in opened.sandbox_containers()}
        assert dead.id not in ids and expired.id not in ids
        assert elsewhere.id in ids and building.id in ids
        assert {c["Id"] for c in Engine(sweep=False).orphaned_containers()} & {elsewhere.id, building.id} == set()
    finally:
        for c in (dead, expired, elsewhere, building):
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass


class _CacheLayerVanishes(Engine):
    """The daemon's answer when a cached layer a build picked is removed meanwhile (another process
    removed an image and pruned its parents), on the first build only; every later build is real."""

    def __init__(self):
        super().__init__()
        self.tries: list[bool] = []

    def _build(self, context, tag, timeout_s, nocache=False):
        self.tries.append(nocache)
        if len(self.tries) == 1:
            return BuildResult(False, None, "Step 4/6 : COPY app/ /app/\n", 0.1,
                               reason='build failed: unable to find image "sha256:7d5ccb611fcf0552c4479a55dae2"')
        return super()._build(context, tag, timeout_s, nocache=nocache)


def test_a_cached_layer_removed_during_a_build_is_built_again_without_the_cache():
    """Not the environment's fault (an LLM batch would spend its environment repairs on it): one
    more build without the cache; a build that really fails is not tried again."""
    flaky = _CacheLayerVanishes()
    ctx = {"Dockerfile": f"FROM {base_image_name()}\nCOPY x.txt /x.txt\n".encode(), "x.txt": b"vanishing"}
    res = flaky.build(ctx, "test-" + "v" * 30)
    try:
        assert res.ok and flaky.tries == [False, True], (flaky.tries, res.reason)
        assert "first try: build failed: unable to find image" in res.log
    finally:
        flaky.remove_image(res.image or "workbench/env:test-" + "v" * 15)
    broken = _CacheLayerVanishes()
    broken.tries.append(False)                  # past its one vanishing answer: real builds only
    bad = broken.build({"Dockerfile": f"FROM {base_image_name()}\nRUN exit 3\n".encode()}, "test-" + "w" * 30)
    assert not bad.ok and "non-zero code: 3" in bad.reason and broken.tries == [False, False]
