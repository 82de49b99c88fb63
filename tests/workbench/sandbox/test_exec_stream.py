"""A command's output comes back whole, also from a busy process (docker-py's exec_start lost
the first frames there: the stray killer's 'KILLED … LEFT 0' line, so a sound nop rollout
on a Ray worker was stored as a verifier_error)."""
import io
import struct
import sys
import threading

import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Limits
from workbench.sandbox.exec_stream import read_frames


def _frame(stream: int, data: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


def test_frames_are_read_in_order_skipping_empty_ones_and_ending_at_a_cut():
    raw = _frame(1, b"KILLED 0 LEFT 0 KEPT 1\n") + _frame(2, b"") + _frame(2, b"warn\n") + _frame(1, b"READY\n")
    assert list(read_frames(io.BytesIO(raw))) == [b"KILLED 0 LEFT 0 KEPT 1\n", b"warn\n", b"READY\n"]
    assert list(read_frames(io.BytesIO(raw[:-3]))) == [b"KILLED 0 LEFT 0 KEPT 1\n", b"warn\n", b"REA"]
    assert list(read_frames(io.BytesIO(b"\x01\x00\x00"))) == []


@pytest.fixture
def busy_process():
    """Threads holding the GIL with a long switch interval: the caller of an exec gets to read
    the daemon's answer only after the command has written its first line (with
    api.exec_start about one exec in five lost it)."""
    done, before = threading.Event(), sys.getswitchinterval()

    def hog():
        while not done.is_set():
            sum(range(10_000))
    hogs = [threading.Thread(target=hog, daemon=True) for _ in range(2)]
    sys.setswitchinterval(0.05)
    for t in hogs:
        t.start()
    yield
    done.set()
    for t in hogs:
        t.join()
    sys.setswitchinterval(before)


@pytest.mark.docker
def test_a_busy_process_gets_every_line_of_a_quick_command(engine, busy_process):
    with engine.container(base_image_name(), Limits()) as box:
        outputs = [box.run(["bash", "-c", "echo first; sleep 0.05; echo second"], 30) for _ in range(30)]
    assert all(r.exit_code == 0 for r in outputs)
    assert [r.output for r in outputs] == ["first\nsecond\n"] * 30
