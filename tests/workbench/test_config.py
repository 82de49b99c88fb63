"""The user's network opt-in: the workspace setting (config.json sandbox.allow_network) and
the `--allow-network` flag of `synth` and `verify`; a bundle's task.toml alone opens nothing."""
import json

import pytest

from tests.helpers import cli, sum_bundle
from workbench.config import workspace_allows_network
from workbench.sandbox.bundle import write_bundle
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render

OFFLINE_ONLY = ("if ls /sys/class/net | grep -qv '^lo$'; then echo 'network reachable'; exit 9; fi\n"
                "python3 -c \"print(sum(int(x) for x in open('/app/numbers.txt')))\" > /app/sum.txt")


def _config(root, data) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(data))


def test_the_workspace_setting_is_off_unless_set_to_true(tmp_path):
    assert workspace_allows_network(tmp_path / "none") is False
    _config(tmp_path / "a", {"llm": {"model": "x"}})
    assert workspace_allows_network(tmp_path / "a") is False
    _config(tmp_path / "b", {"sandbox": {"allow_network": True}})
    assert workspace_allows_network(tmp_path / "b") is True


def test_a_bad_workspace_setting_names_the_file_and_key(tmp_path):
    _config(tmp_path, {"sandbox": {"allow_network": "yes"}})
    with pytest.raises(ValueError, match=r"config\.json: sandbox\.allow_network must be true or false, not 'yes'"):
        workspace_allows_network(tmp_path)


def test_synth_and_verify_offer_the_flag():
    assert "--allow-network" in cli("synth", "--help").stdout
    assert "--allow-network" in cli("verify", "--help").stdout


@pytest.mark.docker
def test_verify_opens_the_network_only_with_the_users_opt_in(tmp_path):
    folder = tmp_path / "greedy"
    write_bundle(sum_bundle(OFFLINE_ONLY, name="workbench/greedy", extra_files={"task.toml": render(TaskToml(
        name="workbench/greedy", metadata=TaskMetadata(category="text-processing"), allow_internet=True,
        agent_timeout_sec=30, verifier_timeout_sec=30))}), folder)
    ws = tmp_path / "ws"
    refused = cli("verify", str(folder), "--json", "--workspace", str(ws))
    verdict = json.loads(refused.stdout)[0]
    assert refused.returncode == 0 and verdict["verdict"] == "accepted", refused.stdout + refused.stderr
    assert "network access refused" in verdict["checks"][0]["reason"]
    flagged = cli("verify", str(folder), "--json", "--allow-network", "--workspace", str(ws))
    verdict = json.loads(flagged.stdout)[0]
    assert verdict["failed_check"] == "oracle" and "exited with code 9" in verdict["reason"]
    _config(ws, {"sandbox": {"allow_network": True}})
    by_setting = json.loads(cli("verify", str(folder), "--json", "--workspace", str(ws)).stdout)[0]
    assert by_setting["failed_check"] == "oracle" and "exited with code 9" in by_setting["reason"]
    _config(ws, {"sandbox": {"allow_network": "yes"}})
    bad = cli("verify", str(folder), "--workspace", str(ws))
    assert bad.returncode == 2 and "sandbox.allow_network must be true or false" in bad.stdout + bad.stderr
