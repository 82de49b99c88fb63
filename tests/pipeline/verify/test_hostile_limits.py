"""Hostile bundles that try to set their own limits (issue 11, items 4, 5 and 7): each is
capped, refused or stopped, the verdict says so, and no container is left behind."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.verify.run import verify_bundle
from tests.helpers import sum_bundle
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render

pytestmark = pytest.mark.docker

SUM = "python3 -c \"print(sum(int(x) for x in open('/app/numbers.txt')))\" > /app/sum.txt"
# Fails when the container has any interface but loopback: proves where the network is.
OFFLINE_ONLY = "if ls /sys/class/net | grep -qv '^lo$'; then echo 'network reachable'; exit 9; fi\n" + SUM
THREE_GB = "mkdir -p /tmp/fill; for i in $(seq 12); do head -c 250M /dev/zero > /tmp/fill/f$i; done\n" + SUM
ONE_GB_IN_RAM = "python3 -c \"a = ' ' * (1024 * 2**20)\"\n" + SUM


def _toml(name: str, **kw) -> str:
    return render(TaskToml(name=name, metadata=TaskMetadata(category="text-processing"), **kw))


def _raw_toml(name: str, section: str, line: str) -> str:
    return f'schema_version = "1.4"\n\n[task]\nname = "{name}"\n\n[{section}]\n{line}\n'


HOSTILE = {
    "greedy": sum_bundle(OFFLINE_ONLY, name="workbench/greedy", extra_files={"task.toml": _toml(
        "workbench/greedy", allow_internet=True, agent_timeout_sec=1e9, verifier_timeout_sec=30, memory_mb=10**6)}),
    "disk-filler": sum_bundle(THREE_GB, name="workbench/disk", extra_files={"task.toml": _toml(
        "workbench/disk", storage_mb=100, agent_timeout_sec=120, verifier_timeout_sec=30)}),
    "memory-hog": sum_bundle(ONE_GB_IN_RAM, name="workbench/hog", extra_files={"task.toml": _toml(
        "workbench/hog", memory_mb=256, agent_timeout_sec=60, verifier_timeout_sec=30)}),
    "nan-timeout": sum_bundle(name="workbench/nan", extra_files={
        "task.toml": _raw_toml("workbench/nan", "agent", "timeout_sec = nan")}),
    "string-network": sum_bundle(name="workbench/strnet", extra_files={
        "task.toml": _raw_toml("workbench/strnet", "environment", 'allow_internet = "false"')}),
}


def _first_failure(checks):
    return next((c for c in checks if not c.passed), None)


def test_bundles_cannot_set_their_own_limits():
    engine = Engine()
    with ThreadPoolExecutor(3) as pool:
        results = dict(zip(HOSTILE, pool.map(lambda k: verify_bundle(HOSTILE[k], engine=engine), HOSTILE)))

    greedy = results["greedy"]
    assert _first_failure(greedy) is None, _first_failure(greedy)   # ran, offline, within the ceilings
    build = greedy[0]
    assert "[agent] timeout_sec = 1e+09 s capped at 1800 s" in build.reason
    assert "network access refused" in build.reason and "--allow-network" in build.reason
    assert "[environment] memory_mb = 1000000 MB capped at 4096 MB" in build.details["limits_capped"]

    disk = _first_failure(results["disk-filler"])
    assert disk.name == "oracle"
    assert disk.reason.startswith("solution/solve.sh wrote more than 100 MB to the container's disk and was stopped")

    hog = _first_failure(results["memory-hog"])
    assert hog.name == "oracle" and "solution/solve.sh ran out of its 256 MB memory limit" in hog.reason

    for key, says in (("nan-timeout", "[agent] timeout_sec must be a finite number above 0, not nan"),
                      ("string-network", "[environment] allow_internet must be true or false, not 'false'")):
        checks = results[key]
        assert [c.name for c in checks] == ["build"] and "bundle rejected before building" in checks[0].reason
        assert says in checks[0].reason, checks[0].reason

    assert engine.orphaned_containers() == []


def test_the_users_opt_in_opens_the_network_and_only_then():
    """The same greedy task with the user's opt-in does get a network (so its offline-only
    solution fails): the refusal above was the sandbox's, not an accident."""
    engine = Engine()
    checks = verify_bundle(HOSTILE["greedy"], engine=engine, allow_network=True)
    failed = _first_failure(checks)
    assert failed is not None and failed.name == "oracle" and "exited with code 9" in failed.reason
    assert "network access refused" not in checks[0].reason and "capped at 1800 s" in checks[0].reason
    assert engine.orphaned_containers() == []
