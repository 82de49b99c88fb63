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


@pytest.mark.parametrize("section, key, value, says", [
    ("agent", "timeout_sec", "nan", "[agent] timeout_sec must be a finite number above 0, not nan"),
    ("agent", "timeout_sec", "inf", "[agent] timeout_sec must be a finite number above 0, not inf"),
    ("verifier", "timeout_sec", "-5.0", "[verifier] timeout_sec must be a finite number above 0, not -5.0"),
    ("environment", "build_timeout_sec", "0", "[environment] build_timeout_sec must be a finite number above 0"),
    ("environment", "cpus", "-inf", "[environment] cpus must be a finite number above 0, not -inf"),
    ("environment", "cpus", "0", "[environment] cpus must be a finite number above 0, not 0"),
    ("environment", "memory_mb", "-1", "[environment] memory_mb must be a whole number of MB above 0, not -1"),
    ("environment", "storage_mb", "nan", "[environment] storage_mb must be a whole number of MB above 0"),
    ("environment", "storage_mb", '"lots"', "[environment] storage_mb must be a whole number of MB above 0"),
    ("environment", "allow_internet", '"false"', "[environment] allow_internet must be true or false, not 'false'"),
])
def test_bad_limits_are_refused_with_the_key_and_value(section, key, value, says):
    text = f'[task]\nname = "workbench/a"\n\n[{section}]\n{key} = {value}\n'
    with pytest.raises(ValueError) as exc:
        parse(text, where="bundle-x/task.toml")
    assert str(exc.value).startswith("bundle-x/task.toml: ") and says in str(exc.value)


def test_skill_fidelity_round_trips_as_inline_tables_and_a_bad_level_says_where():
    evidence = {"via": "command", "uses": "xz", "skill_quote": 'tar -cJf "out dir".tar.xz src/',
                "solution_quote": "tar -cJf /app/out/a.tar.xz a", "note": "runs the documented `xz -J`"}
    steps = [{"step": 1, "skill_id": "s1", "skill_name": 'zstd "fast" mode', "recipe": "archive-pack",
              "tools_used": ["tar", "xz"], "kinds_used": ["tar-archive"], "fidelity": "tool",
              "score": 2, "evidence": evidence},
             {"step": 2, "skill_id": "s2", "skill_name": "", "recipe": "git-publish-tag",   # made before the rubric
              "tools_used": [], "kinds_used": [], "fidelity": "category-only"}]
    text = render(TaskToml(name="workbench/x", metadata=TaskMetadata(category="git", skill_fidelity=steps)))
    assert tomllib.loads(text)["metadata"]["skill_fidelity"] == steps        # plain TOML readers see it too
    assert [s.model_dump(exclude_none=True) for s in parse(text).metadata.skill_fidelity] == steps
    assert parse(text).metadata.skill_fidelity[1].score is None
    with pytest.raises(ValueError, match=r"\[metadata\] skill_fidelity\[1\]\.score Input should be 0, 1 or 2"):
        parse(text.replace('"score" = 2', '"score" = 3'))
    bad = text.replace('"fidelity" = "category-only"', '"fidelity" = "exact"')
    with pytest.raises(ValueError, match=r"task.toml: \[metadata\] skill_fidelity\[2\]\.fidelity Input should be"):
        parse(bad)
    assert parse(render(TaskToml(name="workbench/y", metadata=TaskMetadata(category="git")))).metadata.skill_fidelity == []
