"""pipeline.agents.nop: the nop baseline touches nothing and says so in a valid trajectory."""
import json

from pipeline.agents.factory import make_agent
from pipeline.agents.nop import NopAgent
from pipeline.agents.protocol import AGENT_LABELS, AgentContext
from pipeline.trajectories.atif import validate_with_harbor
from tests.helpers import sum_bundle


class Untouchable:
    """A box that fails the test on any use: the nop agent must not use its container."""
    def __getattr__(self, name):
        raise AssertionError(f"the nop agent used its box ({name})")


def test_nop_does_nothing_and_writes_a_trajectory_harbor_accepts(tmp_path):
    bundle = sum_bundle()
    ctx = AgentContext(task_id="t1", trial_id="trial-nop-1", instruction=bundle.text("instruction.md"), bundle=bundle,
                       box=Untouchable(), timeout_s=30)
    result = make_agent("nop").run(ctx)
    assert result.status == "completed" and result.exit_code is None and result.log == "" and result.turns == 0
    doc = result.trajectory
    assert doc["agent"]["name"] == "nop" and doc["session_id"] == "trial-nop-1"
    user, agent = doc["steps"]
    assert user["source"] == "user" and "Sum the numbers" in user["message"]
    assert agent["source"] == "agent" and "tool_calls" not in agent and agent["llm_call_count"] == 0
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    assert validate_with_harbor(path) == []


def test_nop_is_labelled_a_baseline_and_keyed_by_name_and_version():
    agent = NopAgent()
    assert agent.label == AGENT_LABELS["nop"] and "baseline" in agent.label and agent.model is None
    assert agent.config_key() == "nop@1" != make_agent("oracle").config_key()
