"""A Session on a real Docker engine: files in and out, a bounded tree, a limit that stops the
session and is named by every later call, and the container gone after the `with` block."""
import time

import pytest

from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import LABEL, Limits
from workbench.sandbox.session import SessionStopped

pytestmark = pytest.mark.docker


def _exists(engine, cid: str) -> bool:
    return bool(engine.client.api.containers(all=True, filters={"id": cid}))


def test_write_exec_read_and_tree(engine):
    timer = {}
    with engine.session(base_image_name(), Limits(), timer=timer) as s:
        labels = engine.client.api.inspect_container(s.box.container.id)["Config"]["Labels"]
        assert labels[LABEL] == "1" and labels["workbench.purpose"] == "session"
        s.write_files({"/app/data/a.csv": b"id,name\n1,x\n", "/app/run.sh": b"echo hi from $PWD\n",
                       "/app/odd name\twith tab.txt": b"t\n"})
        s.write_files({"tool": b"#!/bin/sh\necho tool\n"}, dest="/opt/bin", executables={"tool"})
        res = s.exec("bash run.sh && /opt/bin/tool && ln -s data/a.csv link.csv && mkfifo pipe", 20)
        assert res.ok and res.output == "hi from /app\ntool\n", res
        assert s.exec("pwd", 10, workdir="/opt").output == "/opt\n"

        tree = s.tree("/app")
        kinds = {e.path: e.kind for e in tree}
        assert kinds == {"/app/data": "dir", "/app/run.sh": "file", "/app/odd name\twith tab.txt": "file",
                         "/app/link.csv": "link", "/app/pipe": "other", "/app/data/a.csv": "file"}
        assert [e.path for e in tree][-1] == "/app/data/a.csv"     # shallowest first
        by_path = {e.path: e for e in tree}
        assert by_path["/app/run.sh"].mode == 0o755 and by_path["/app/data/a.csv"].mode == 0o644
        assert by_path["/app/data/a.csv"].size == 12 and by_path["/app/data/a.csv"].mtime > 1e9
        assert not s.tree_truncated and s.tree("/no/such/dir") == []

        assert s.read_file("/app/data/a.csv") == b"id,name\n1,x\n"
        assert s.read_file("/app/data/a.csv", max_bytes=4) == b"id,n"     # the head only
        assert s.read_file("/app/data") is None and s.read_file("/app/missing") is None
        assert s.read_file("/app/link.csv") is None                       # a link is not followed
        with pytest.raises(ValueError, match=r"bad path '\.\./etc/x'"):
            s.write_files({"../etc/x": b"no"}, dest="/app")
        with pytest.raises(ValueError, match="bad path '/abs'"):
            s.write_files({"/abs": b"no"}, dest="/app")
    assert timer["docker_s"] > 0 and s.docker_s == pytest.approx(timer["docker_s"])


def test_tree_is_capped_shallowest_first(engine):
    with engine.session(base_image_name(), Limits()) as s:
        res = s.exec("mkdir -p /app/deep/er && cd /app/deep/er && seq 3000 | xargs touch && touch /app/top.txt", 60)
        assert res.ok, res
        tree = s.tree("/app", max_entries=100)
        assert len(tree) == 100 and s.tree_truncated
        assert [e.path for e in tree[:3]] == ["/app/deep", "/app/top.txt", "/app/deep/er"]
        assert s.exec("echo still here", 10).ok      # the cap is applied inside; the session goes on
        whole = s.tree("/", max_entries=100_000)
        assert "/app/top.txt" in {e.path for e in whole} and "/usr/bin/bash" in {e.path for e in whole}
        assert not any(e.path.startswith(("/proc/", "/sys/")) for e in whole)


def test_a_timeout_stops_the_session_and_later_calls_say_so(engine):
    with engine.session(base_image_name(), Limits()) as s:
        t0 = time.monotonic()
        slow = s.exec("bash /solution/solve.sh || sleep 600", 2)
        assert slow.timed_out and not slow.ok and time.monotonic() - t0 < 20
        assert s.stopped == ("the session was stopped: `bash /solution/solve.sh || sleep 600` ran past its 2 s "
                             "limit and was killed; open a new session")
        later = s.exec("echo hi", 10)
        assert later.container_gone == s.stopped and not later.ok and later.stopped_by_limit
        for call in (lambda: s.read_file("/etc/hostname"), lambda: s.tree("/app"),
                     lambda: s.write_files({"a": b"x"}, dest="/app")):
            with pytest.raises(SessionStopped, match="ran past its 2 s limit"):
                call()


def test_output_cap_stops_the_session(engine):
    with engine.session(base_image_name(), Limits(output_bytes=32 * 1024)) as s:
        loud = s.exec("yes 0123456789", 30)
        assert loud.output_capped and "printed more than 32 KiB of output" in s.stopped


def test_a_container_killed_from_outside_is_named_not_read_as_missing(engine):
    with engine.session(base_image_name(), Limits()) as s:
        s.box.container.kill()
        with pytest.raises(SessionStopped, match="no longer running"):
            s.read_file("/etc/hostname")
        assert "no longer running" in s.exec("true", 10).container_gone
    with engine.session(base_image_name(), Limits()) as s:
        s.box.container.kill()
        assert s.exec("echo hi", 10).container_gone
        assert s.stopped.startswith("the session was stopped: `echo hi` could not run: the container is no longer running")
        with pytest.raises(SessionStopped, match="`echo hi` could not run"):
            s.tree("/app")


def test_a_file_with_a_long_path_and_name_reads_its_whole_head(engine):
    deep = "/app/" + "/".join(["d" * 200] * 15) + "/" + "f" * 250    # a long name takes a PAX header
    with engine.session(base_image_name(), Limits()) as s:
        s.write_files({deep: b"x" * 70000})
        assert s.read_file(deep) == b"x" * 65536


def test_container_gone_after_the_block_and_after_an_exception(engine):
    with engine.session(base_image_name(), Limits()) as s:
        cid = s.box.container.id
        assert _exists(engine, cid)
    assert not _exists(engine, cid)
    with pytest.raises(RuntimeError, match="boom"):
        with engine.session(base_image_name(), Limits()) as s:
            cid = s.box.container.id
            s.exec("sleep 1 &", 10)
            raise RuntimeError("boom")
    assert not _exists(engine, cid)
    with pytest.raises(KeyboardInterrupt):
        with engine.session(base_image_name(), Limits()) as s:
            cid = s.box.container.id
            raise KeyboardInterrupt
    assert not _exists(engine, cid)

