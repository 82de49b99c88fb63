"""The pure parts of the Docker checks: limits from task.toml."""
from pipeline.verify.docker_checks import limits_for
from workbench.sandbox.task_toml import TaskMetadata, TaskToml


def test_limits_follow_the_task_within_a_ceiling():
    cfg = TaskToml(name="workbench/a", metadata=TaskMetadata(category="git"), memory_mb=64000, cpus=16,
                   allow_internet=True)
    lim = limits_for(cfg)
    assert lim.memory_mb == 4096 and lim.cpus == 2.0 and lim.network
    assert not limits_for(TaskToml(name="workbench/b", metadata=TaskMetadata(category="git"))).network
