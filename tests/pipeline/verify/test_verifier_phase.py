"""pipeline.verify.verifier_phase in a real container with the toolchain mounted: the first
stop-strays and the preparing of the verifier folders are one docker exec, with the same
effects and the pid count confirmed from outside."""
from __future__ import annotations

import time

import pytest

from pipeline.verify import verifier_phase as phase
from workbench.sandbox import toolchain
from workbench.sandbox.base_image import base_image_name

pytestmark = pytest.mark.docker

PLANT = ("mkdir -p /logs/verifier /tests && echo 1 > /logs/verifier/reward.txt && echo '<x/>' > /tests/junit.xml"
         " && echo /nowhere/evil.so > /etc/ld.so.preload"
         " && for i in 1 2 3; do setsid sleep 1000 >/dev/null 2>&1 < /dev/null & done; exit 0")


def _counting_runs(box) -> list:
    """Box.run as it was, each call noted (a spy on our own Box, not on Docker's client)."""
    calls, run = [], box.run

    def counted(*args, **kwargs):
        calls.append(args[0])
        return run(*args, **kwargs)
    box.run = counted
    return calls


def test_strays_are_stopped_and_the_folders_emptied_in_one_exec(engine):
    tc = toolchain.ensure(engine)
    with engine.container(base_image_name(), purpose="verifier-phase-test", mounts=[tc.mount()]) as box:
        assert box.run(PLANT, 30).exit_code == 0
        before = box.process_count()                # from the cgroup: the sleeps and PID 1
        assert before is not None and before >= 4
        calls = _counting_runs(box)
        killed = phase.stop_strays_and_prepare(box)
        assert len(calls) == 1                     # one exec for both steps
        assert killed >= 3 and phase.pid_count(box) == 1            # PID 1 alone alive (zombies may wait)
        left = box.run(toolchain.python_argv(
            "import os; print(sorted(os.listdir('/logs/verifier')), os.path.exists('/tests'), "
            "open('/etc/ld.so.preload').read() == '', oct(os.stat('/logs/verifier').st_mode & 0o777))"),
            30, workdir="/", environment=toolchain.LOADER_ENV).output
        assert left.strip() == "[] False True 0o777", left      # nothing planted is read, the preload neutralised


def test_a_killer_that_answers_nonsense_fails_the_phase_before_anything_is_prepared(engine, monkeypatch):
    tc = toolchain.ensure(engine)
    with engine.container(base_image_name(), purpose="verifier-phase-test", mounts=[tc.mount()]) as box:
        assert box.run(PLANT, 30).exit_code == 0
        # The killer's answer says one process was left: the wiping must not run, the phase fails.
        monkeypatch.setattr(phase, "STOP_STRAYS_AND_PREPARE", phase.STOP_STRAYS_AND_PREPARE.replace(
            "wb_strays.report()", "print('KILLED 3 LEFT 1 KEPT 0')", 1))
        with pytest.raises(phase.PhaseError, match="1 processes could not be stopped"):
            phase.stop_strays_and_prepare(box)
        kept = box.run(toolchain.python_argv("print(open('/logs/verifier/reward.txt').read())"), 30,
                       workdir="/", environment=toolchain.LOADER_ENV).output
        assert kept.strip() == "1"                 # not wiped


def test_the_pid_count_confirmed_from_outside_leaves_out_zombies(engine):
    """A killed stray is done once it is a zombie; waiting for PID 1 to reap it (about once a
    second) made each stop-strays wait up to a second."""
    with engine.container(base_image_name(), purpose="verifier-phase-test") as box:
        assert box.run("setsid sh -c 'true & exec sleep 1000' >/dev/null 2>&1 < /dev/null & sleep 0.5; exit 0",
                       30).exit_code == 0
        deadline = time.monotonic() + 10
        while box.process_count() != 3 and time.monotonic() < deadline:    # PID 1, sleep, its zombie child
            time.sleep(0.05)
        assert box.process_count() == 3 and phase.pid_count(box) == 2
