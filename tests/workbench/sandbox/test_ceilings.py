"""A task may ask for less than the workbench's limits, never more; the network needs the
user's opt-in; every cap and refusal is said."""
import math

from workbench.sandbox.ceilings import CEILINGS, grant
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, parse, render


def _task(**kw) -> TaskToml:
    return TaskToml(name="workbench/greedy", metadata=TaskMetadata(category="git"), **kw)


def test_requests_above_the_ceilings_are_capped_and_said():
    g = grant(_task(agent_timeout_sec=1e9, verifier_timeout_sec=1e6, build_timeout_sec=86400, memory_mb=64000,
                    cpus=64, storage_mb=10**6))
    t = g.task
    assert (t.agent_timeout_sec, t.verifier_timeout_sec, t.build_timeout_sec) == \
        (CEILINGS.agent_timeout_sec, CEILINGS.verifier_timeout_sec, CEILINGS.build_timeout_sec)
    assert (t.memory_mb, t.cpus, t.storage_mb) == (CEILINGS.memory_mb, CEILINGS.cpus, CEILINGS.storage_mb)
    assert "[agent] timeout_sec = 1e+09 s capped at 1800 s" in g.notes
    assert "[environment] memory_mb = 64000 MB capped at 4096 MB" in g.notes and len(g.notes) == 6


def test_requests_below_the_ceilings_are_kept_and_nothing_is_said():
    asked = _task(agent_timeout_sec=20, verifier_timeout_sec=10, memory_mb=512, cpus=0.5, storage_mb=100)
    g = grant(asked)
    assert g.notes == () and g.task == asked


def test_network_needs_the_users_opt_in_not_the_bundles_word():
    asks = parse(render(_task(allow_internet=True)))   # as a bundle's task.toml says it
    assert asks.allow_internet and not asks.network_granted
    refused = grant(asks)
    assert not refused.task.allow_internet and not refused.task.network_granted
    assert any("network access refused" in n and "--allow-network" in n for n in refused.notes)
    allowed = grant(asks, allow_network=True)
    assert allowed.task.network_granted and allowed.notes == ()
    assert not grant(_task(), allow_network=True).task.network_granted   # opt-in alone asks for nothing
    # A granted task cannot be forged through the constructor.
    assert not TaskToml(name="workbench/x", metadata=TaskMetadata(category="git"), allow_internet=True,
                        _network_granted=True).network_granted


def test_grant_is_idempotent_and_keeps_a_granted_network():
    once = grant(_task(agent_timeout_sec=1e9, allow_internet=True), allow_network=True)
    twice = grant(once.task, allow_network=once.task.network_granted)
    assert twice.task == once.task and twice.task.network_granted and twice.notes == ()
    assert math.isfinite(CEILINGS.longest_lifetime_s) and CEILINGS.longest_lifetime_s > CEILINGS.agent_timeout_sec
