"""`workbench verify DIR...` on task folders not made here: a hand-written Harbor task (no
[task] name, its own test.sh), a hostile one and a folder that is no task."""
import json
from pathlib import Path

import pytest

from tests.helpers import cli, sum_bundle
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401
from workbench.cli_verify import with_task_name
from workbench.sandbox.bundle import write_bundle

HARBOR_TOML = """version = "1.0"

[metadata]
author_name = "someone"
difficulty = "easy"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 60.0
"""
OWN_TEST_SH = """#!/bin/bash
cd /app
python3 -m pytest -q --junitxml=/logs/verifier/junit.xml /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_a_missing_task_name_becomes_the_folder_name():
    assert 'name = "local/my-task"' in with_task_name(HARBOR_TOML, Path("/x/My Task"))
    named = '[task]\nname = "org/a"\n'
    assert with_task_name(named, Path("/x/b")) == named
    text = with_task_name('[task]\ndescription = "d"\n', Path("/x/b"))
    assert text.startswith('[task]\nname = "local/b"\n')


@pytest.mark.docker
def test_verify_gives_one_verdict_per_folder(tmp_path):
    hand = sum_bundle(extra_files={"task.toml": HARBOR_TOML, "tests/test.sh": OWN_TEST_SH})
    write_bundle(hand, tmp_path / "hand-written")
    planted = "mkdir -p /logs/verifier && echo '{\"reward\": 1}' > /logs/verifier/reward.json"
    write_bundle(sum_bundle(planted), tmp_path / "planted")
    (tmp_path / "empty").mkdir()
    res = cli("verify", "--json", str(tmp_path / "hand-written"), str(tmp_path / "planted"), str(tmp_path / "empty"),
              timeout=600)
    assert res.returncode == 1, res.stderr
    got = {Path(v["folder"]).name: v for v in json.loads(res.stdout)}
    assert got["hand-written"]["verdict"] == "accepted", got["hand-written"]
    assert got["planted"]["verdict"] == "rejected" and got["planted"]["failed_check"] == "oracle"
    assert "after the solution the tests still fail" in got["planted"]["reason"]
    assert got["empty"]["failed_check"] == "bundle" and "lacks instruction.md" in got["empty"]["reason"]
    text = cli("verify", str(tmp_path / "hand-written"), timeout=600)
    assert text.returncode == 0 and "ACCEPTED" in text.stdout and "oracle" in text.stdout


def test_verify_refuses_a_ray_address_without_the_ray_executor(tmp_path):
    res = cli("verify", str(tmp_path), "--ray-address", "127.0.0.1:6379")
    assert res.returncode == 2 and "--ray-address '127.0.0.1:6379' is only for --executor ray" in res.stderr


@pytest.mark.docker
def test_a_folder_named_twice_is_verified_once_and_reported_twice(tmp_path):
    write_bundle(sum_bundle(), tmp_path / "sum")
    res = cli("verify", "--json", str(tmp_path / "sum"), str(tmp_path / "sum"), timeout=600)
    verdicts = json.loads(res.stdout)
    assert res.returncode == 0 and [v["verdict"] for v in verdicts] == ["accepted", "accepted"]
    assert verdicts[0] == verdicts[1]


@pytest.mark.docker
@pytest.mark.slow
def test_folders_verified_on_ray_get_the_verdicts_they_get_locally(tmp_path, ray_cluster, engine):
    """The folders are read by the driver; their files travel to the Ray workers in the items."""
    from pipeline.verify.run import VerifyContext
    from workbench.cli_verify import verify_folders
    from workbench.executors.factory import make_executor
    write_bundle(sum_bundle(), tmp_path / "good")
    write_bundle(sum_bundle("true"), tmp_path / "lazy")          # the solution does nothing: oracle fails
    (tmp_path / "empty").mkdir()
    folders = [tmp_path / "good", tmp_path / "lazy", tmp_path / "empty"]
    ctx = VerifyContext(engine=engine)
    here = verify_folders(folders, ctx, make_executor("local", concurrency=2))
    there = verify_folders(folders, ctx, make_executor("ray", concurrency=2, ray_address=ray_cluster.address))
    assert [(v.folder, v.verdict, v.failed_check) for v in here] == [(v.folder, v.verdict, v.failed_check)
                                                                      for v in there]
    assert [v.verdict for v in there] == ["accepted", "rejected", "rejected"] and there[1].failed_check == "oracle"
