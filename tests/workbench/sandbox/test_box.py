"""Box limits that need a real container: a disk cap over the whole writable layer, a small
/dev/shm, and an out-of-memory kill named as such."""
import time

import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine, Limits

pytestmark = pytest.mark.docker

# 3 GB in files under the 256 MB file-size ulimit: only a cap on the whole layer stops it.
THREE_GB = "mkdir -p /tmp/fill && for i in $(seq 12); do head -c 250M /dev/zero > /tmp/fill/f$i || exit 1; done"


@pytest.fixture(scope="module")
def engine():
    return Engine()


def test_disk_cap_stops_a_solution_that_writes_gigabytes(engine):
    with engine.container(base_image_name(), Limits(disk_mb=200)) as box:
        t0 = time.monotonic()
        res = box.run(THREE_GB, 120)
        assert res.disk_full and not res.ok and res.stopped_by_limit, res
        assert time.monotonic() - t0 < 60
        assert res.reason("solution/solve.sh", 120, 1024) == \
            "solution/solve.sh wrote more than 200 MB to the container's disk and was stopped"
        assert box.disk_poll_s and max(box.disk_poll_s) < 5
        after = box.run("echo more", 10)   # the container was stopped; nothing runs in it any more
        assert after.container_gone and "disk limit" in after.container_gone


def test_writes_under_the_cap_pass_and_shm_is_small(engine):
    with engine.container(base_image_name(), Limits(disk_mb=200, shm_mb=16)) as box:
        ok = box.run("head -c 50M /dev/zero > /tmp/f && echo done", 60)
        assert ok.ok and not ok.disk_full and "done" in ok.output
        shm = box.run("head -c 32M /dev/zero > /dev/shm/x", 30)
        assert shm.exit_code != 0 and "No space left on device" in shm.output


def test_out_of_memory_is_named_and_a_plain_kill_is_not(engine):
    with engine.container(base_image_name(), Limits(memory_mb=128)) as box:
        killed = box.run("kill -9 $$", 20)
        assert killed.exit_code == 137 and not killed.oom_killed
        assert killed.reason("solution/solve.sh", 20, 1024) == "solution/solve.sh was killed (exit 137: SIGKILL)"
        oom = box.run("python3 -c \"a = ' ' * (400 * 2**20)\"", 60)
        assert oom.oom_killed and not oom.ok, oom
        assert "solution/solve.sh ran out of its 128 MB memory limit" in oom.reason("solution/solve.sh", 60, 1024)
        again = box.run("exit 3", 20)   # an earlier OOM is not blamed on a later failure
        assert again.exit_code == 3 and not again.oom_killed


def test_an_oom_kill_is_named_though_the_containers_sh_was_replaced(engine):
    """The count is read from the cgroup on this host, not by the container's own sh (which a
    solution or agent may replace to hide its OOM kills)."""
    with engine.container(base_image_name(), Limits(memory_mb=128)) as box:
        assert box.run("ln -sf /bin/true /bin/sh && ln -sf /bin/true /usr/bin/sh; true", 20).exit_code == 0
        oom = box.run("python3 -c \"a = ' ' * (400 * 2**20)\"", 60)
        assert oom.oom_killed, oom
        box.run("python3 -c \"a = ' ' * (400 * 2**20)\"; true", 60)   # exits 0: nobody looks at the count
        box.settle_oom_count()                                          # … until the tests start
        assert not box.run("exit 3", 20).oom_killed


def test_the_live_process_count_leaves_out_zombies_the_pid_count_still_holds(engine):
    with engine.container(base_image_name(), Limits()) as box:
        # sh forks `true`, then becomes `sleep`, which never reaps it: a zombie that stays.
        assert box.run("setsid sh -c 'true & exec sleep 1000' >/dev/null 2>&1 < /dev/null & sleep 0.5; exit 0",
                       30).exit_code == 0
        deadline = time.monotonic() + 10
        while box.process_count() != 3 and time.monotonic() < deadline:    # PID 1, sleep, the zombie
            time.sleep(0.05)
        assert box.process_count() == 3
        assert box.live_process_count() == 2
