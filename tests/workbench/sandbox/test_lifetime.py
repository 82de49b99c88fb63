"""A container ends by itself: when its owner dies (even by SIGKILL), when its lifetime is
over, and whatever the image's ENTRYPOINT says; what a defeated keeper leaves, the next
command sweeps."""
import os
import signal
import socket
import subprocess
import sys
import time

import docker.errors
import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import (EXPIRES_LABEL, LABEL, OWNER_LABEL, SESSION_ENV, SESSION_LABEL, Engine,
                                      Limits)

pytestmark = pytest.mark.docker

OWNER = """
import time
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine
with Engine().container(base_image_name()) as box:
    print(box.container.id, flush=True)
    time.sleep(600)
"""


@pytest.fixture(scope="module")
def engine():
    return Engine()


def _exists(engine, cid: str) -> bool:
    return any(c["Id"] == cid for c in engine.client.api.containers(all=True, filters={"id": cid}))


def _gone_within(engine, cid: str, seconds: float) -> float | None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not _exists(engine, cid):
            return time.monotonic() - t0
        time.sleep(0.2)
    return None


def test_container_ends_when_its_owner_is_sigkilled(engine):
    proc = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    try:
        cid = proc.stdout.readline().strip()
        assert cid and _exists(engine, cid)
        os.kill(proc.pid, signal.SIGKILL)   # no finally, no atexit: only the keeper can end it
        proc.wait(10)
        took = _gone_within(engine, cid, 15)
        assert took is not None, "the container outlived its SIGKILLed owner"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_container_ends_after_its_lifetime_and_later_commands_say_so(engine):
    with engine.container(base_image_name(), Limits(lifetime_s=3)) as box:
        assert box.run("true", 10).ok
        took = _gone_within(engine, box.container.id, 15)
        assert took is not None, "the container outlived its 3 s lifetime"
        late = box.run("echo hello", 10)
        assert not late.ok and late.container_gone and late.stopped_by_limit
        assert "could not run: the container is no longer running" in late.reason("tests/test.sh", 10, 1024)


def test_pid1_is_the_keeper_whatever_the_image_entrypoint(engine):
    ctx = {"Dockerfile": f'FROM {base_image_name()}\nENTRYPOINT ["sleep", "infinity"]\n'.encode()}
    built = engine.build(ctx, "test-entrypoint-" + "e" * 20)
    assert built.ok, built.reason
    try:
        with engine.container(built.image, Limits(lifetime_s=8)) as box:
            pid1 = box.run("tr '\\0' ' ' < /proc/1/cmdline", 10)
            assert "read -r -t 1" in pid1.output and "infinity" not in pid1.output
            cleared = box.run("kill -9 -1; kill -9 1; kill -TERM 1; sleep 0.5; echo alive", 10)   # a stray sweep
            assert "alive" in cleared.output and box.run("true", 10).ok   # PID 1 survives signals from inside
            fed = box.run("echo go > /proc/1/fd/0; sleep 1.5; echo alive", 10)   # a line is not the owner's EOF
            assert "alive" in fed.output and box.run("true", 10).ok
            assert _gone_within(engine, box.container.id, 20) is not None
    finally:
        engine.remove_image(built.image)


def test_the_next_command_sweeps_what_a_defeated_keeper_left(engine):
    """A container whose PID 1 never ends (as an image that replaced bash could arrange) and
    whose owner is dead is removed as soon as any command opens an engine."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    c = engine.client.containers.create(
        base_image_name(), ["sleep", "infinity"],
        labels={LABEL: "1", OWNER_LABEL: f"{socket.gethostname()}:{dead.pid}",
                EXPIRES_LABEL: str(int(time.time()) + 3600), SESSION_LABEL: os.environ.get(SESSION_ENV, "")})
    c.start()
    try:
        Engine()    # any command opening an engine (another process's may have swept first)
        assert not _exists(engine, c.id)
    finally:
        try:
            c.remove(force=True)
        except docker.errors.NotFound:
            pass
