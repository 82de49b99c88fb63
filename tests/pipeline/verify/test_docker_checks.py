"""The pure parts of the Docker checks: limits from task.toml."""
from pipeline.verify.docker_checks import limits_for
from workbench.sandbox.ceilings import CEILINGS, LIFETIME_MARGIN_S, grant
from workbench.sandbox.task_toml import TaskMetadata, TaskToml


def test_limits_follow_the_task_within_a_ceiling():
    cfg = TaskToml(name="workbench/a", metadata=TaskMetadata(category="git"), memory_mb=64000, cpus=16,
                   storage_mb=10**6, agent_timeout_sec=1e9, allow_internet=True)
    lim = limits_for(cfg)
    assert lim.memory_mb == 4096 and lim.cpus == 2.0 and lim.disk_mb == CEILINGS.storage_mb
    assert lim.lifetime_s == CEILINGS.agent_timeout_sec + 120.0 + LIFETIME_MARGIN_S   # capped agent + verifier
    assert not lim.network                                   # the bundle's word alone opens nothing
    assert limits_for(grant(cfg, allow_network=True).task).network
    assert not limits_for(grant(cfg, allow_network=False).task).network
    small = limits_for(TaskToml(name="workbench/b", metadata=TaskMetadata(category="git"), memory_mb=512,
                                storage_mb=100, agent_timeout_sec=10, verifier_timeout_sec=5))
    assert (small.memory_mb, small.disk_mb, small.network) == (512, 100, False)
    assert small.lifetime_s == 15 + LIFETIME_MARGIN_S
