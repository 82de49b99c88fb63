"""workbench.double_rule, the one rule that says a figure is a test double's or a simulation's
(issue 22.4): every double the project ships is named by it, no real model is, and its labels
say so once."""
from __future__ import annotations

import pytest

from pipeline.agents.protocol import AGENT_LABELS, AGENTS
from workbench import double_rule as rule


def _shipped_doubles() -> list[str]:
    """The model names every scripted replay of the project answers under (imported here only)."""
    from pipeline.agents.terminus2 import scripted as terminus
    from pipeline.judge import scripted_trajectory_judge as judge
    from pipeline.synth.llm import scripted_faults as synth
    from workbench.llm.replay_handlers import DEFAULT_MODEL
    return [synth.REPLAY_MODEL, synth.DEMO_REPLAY_MODEL, terminus.REPLAY_MODEL, judge.MODEL, DEFAULT_MODEL,
            *(terminus.replay_model(b) for b in terminus.BEHAVIOURS), f"openai/{terminus.REPLAY_MODEL}", "replay"]


def test_every_shipped_double_is_named_by_the_rule_and_labelled():
    for name in _shipped_doubles():
        assert rule.is_double_model(name), name
        assert rule.is_double(model=name)
        label = rule.model_label(name)
        assert label.count(rule.TAG) == 1 and label.startswith(name.rstrip(")")), label


@pytest.mark.parametrize("model", ["gpt-4o-mini", "Qwen/Qwen3-8B-Instruct", "llama-3.1-8b", "m", "replayer-7b",
                                   "openai/gpt-oss-20b", "", None, float("nan")])
def test_no_real_model_is_a_double(model):
    assert not rule.is_double_model(model)
    assert rule.model_label(model) == (model if isinstance(model, str) else "")


def test_the_labels():
    assert rule.model_label("scripted-replay (demo price)") == "scripted-replay (demo price, test double)"
    assert rule.model_label("scripted-terminus:oracle (test double)") == "scripted-terminus:oracle (test double)"
    assert rule.model_label("scripted-trajectory-judge") == "scripted-trajectory-judge (test double)"
    assert rule.provider_label("llm", "scripted-replay (demo price)") == "llm · scripted-replay (demo price, test double)"
    assert rule.provider_label("llm", "gpt-x, scripted-replay") == "llm · gpt-x, scripted-replay (test double)"
    assert rule.provider_label("offline", None) == "offline"
    t2 = rule.agent_config_label("terminus-2", AGENT_LABELS["terminus-2"], "scripted-terminus:oracle (test double)")
    assert "LLM agent" not in t2 and rule.TAG in t2 and t2.startswith("terminus-2")
    assert rule.agent_config_label("terminus-2", AGENT_LABELS["terminus-2"], "gpt-x") == AGENT_LABELS["terminus-2"]


def test_simulated_agents_are_those_whose_label_says_so():
    """AGENT_LABELS and the rule agree: noisy-oracle is simulated; the probes and terminus-2 are not."""
    for agent in AGENTS:
        assert rule.is_simulated_agent(agent) == ("simulated" in AGENT_LABELS[agent]), agent
        assert rule.is_simulated_agent(f"harbor:{agent}") == rule.is_simulated_agent(agent)
    assert rule.is_double(agent="noisy-oracle") and not rule.is_double(agent="oracle", model=None)
