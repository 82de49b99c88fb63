"""The pure parts of the Docker checks: limits from task.toml and reading the reward."""
from pipeline.verify.docker_checks import _reward, limits_for
from workbench.sandbox.task_toml import TaskMetadata, TaskToml


def test_limits_follow_the_task_within_a_ceiling():
    cfg = TaskToml(name="workbench/a", metadata=TaskMetadata(category="git"), memory_mb=64000, cpus=16,
                   allow_internet=True)
    lim = limits_for(cfg)
    assert lim.memory_mb == 4096 and lim.cpus == 2.0 and lim.network
    assert not limits_for(TaskToml(name="workbench/b", metadata=TaskMetadata(category="git"))).network


def test_reward_json_wins_and_garbage_is_no_reward():
    assert _reward({"verifier/reward.txt": b"1\n"})[0] == 1.0
    assert _reward({"verifier/reward.txt": b"1", "verifier/reward.json": b'{"a": 1, "b": 0.5}'})[0] == 0.5
    assert _reward({"verifier/reward.txt": b"lots"})[0] is None
    assert _reward({"verifier/reward.json": b"{not json"})[0] is None
    assert _reward({})[0] is None
