import tomllib

import pytest

from workbench.sandbox.task_toml import TaskMetadata, TaskToml, parse, render


def test_render_has_harbor_sections_and_round_trips():
    t = TaskToml(name="workbench/csv-report-1a2b", description="A \"quoted\" task\nwith lines",
                 metadata=TaskMetadata(category="data-processing", difficulty="hard", tags=["csv", "sqlite"],
                                       scenario_ids=["s1", "s2"], skill_ids=["k1"], recipes=["csv_filter"], seed=7),
                 agent_timeout_sec=90, memory_mb=512)
    text = render(t)
    data = tomllib.loads(text)
    assert data["schema_version"] == "1.4"
    assert data["task"]["name"] == "workbench/csv-report-1a2b"
    assert data["metadata"]["scenario_ids"] == ["s1", "s2"] and data["metadata"]["skill_ids"] == ["k1"]
    assert data["agent"]["timeout_sec"] == 90.0 and data["environment"]["memory_mb"] == 512
    assert "build_timeout_sec" in data["environment"] and "timeout_sec" in data["verifier"]
    assert parse(text) == t


def test_bad_names_and_bad_toml_say_where():
    with pytest.raises(ValueError, match="org/name"):
        TaskToml(name="NoSlash", metadata=TaskMetadata(category="git"))
    with pytest.raises(ValueError, match="bundle-x/task.toml: not valid TOML"):
        parse("[task\nname=", where="bundle-x/task.toml")


def test_network_is_written_only_when_asked():
    offline = TaskToml(name="workbench/a", metadata=TaskMetadata(category="git"))
    online = TaskToml(name="workbench/b", metadata=TaskMetadata(category="git"), allow_internet=True)
    assert "allow_internet" not in render(offline)
    assert tomllib.loads(render(online))["environment"]["allow_internet"] is True
    assert parse(render(online)).allow_internet and not parse(render(offline)).allow_internet
