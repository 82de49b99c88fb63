"""Our figures beside the papers': the tables pick the right numbers and say where each comes from."""
import pandas as pd
import plotly.graph_objects as go

from analysis import paper_references as refs
from analysis.failures import NearMisses


def test_synthesis_comparison_takes_the_oracle_check_and_each_priced_batch():
    rates = pd.DataFrame([{"check": "build", "label": "b", "ran": 10, "passed": 10, "pass_rate": 1.0},
                          {"check": "oracle", "label": "o", "ran": 10, "passed": 9, "pass_rate": 0.9}])
    batches = pd.DataFrame([{"batch_id": "llm-1", "cost_per_accepted": 0.25},
                            {"batch_id": "llm-2", "cost_per_accepted": float("nan")}])
    t = refs.synthesis_comparison(rates, batches)
    oracle = t[t["measure"] == refs.SKILLSYNTH_ORACLE_PASS.label].iloc[0]
    assert (oracle["ours"], oracle["paper"], oracle["where"]) == (0.9, 0.957, "10 tasks")
    cost = t[t["measure"] == refs.SKILLSYNTH_COST_PER_TASK.label]
    assert list(cost["where"]) == ["batch llm-1"] and list(cost["ours"]) == [0.25] and list(cost["paper"]) == [27.3]


def test_synthesis_comparison_says_when_there_is_nothing_to_compare():
    t = refs.synthesis_comparison(pd.DataFrame(columns=["check", "ran", "pass_rate"]),
                                  pd.DataFrame(columns=["batch_id", "cost_per_accepted"]))
    assert t["ours"].isna().all() and "no oracle check ran" in set(t["where"])


def test_rollout_comparison_has_both_rates_per_agent_and_the_near_miss_share():
    cvt = pd.DataFrame([{"agent": "terminus-2", "model": "gpt-x", "agent_label": "terminus-2 (LLM agent) · gpt-x",
                         "check_rate": 0.8, "task_rate": 0.4}])
    t = refs.rollout_comparison(cvt, {"terminus-2": NearMisses(failed=6, with_tests=5, near=4)},
                                {"terminus-2": "terminus-2 (LLM agent)"})
    by = t.set_index("measure")
    assert by.loc[refs.FACET_CHECK_RATE.label, "ours"] == 0.8 and by.loc[refs.FACET_TASK_RATE.label, "paper"] == 0.209
    near = by.loc[refs.FACET_NEAR_MISS.label]
    assert near["ours"] == 0.8 and near["where"] == "terminus-2 (LLM agent) (4 of 5)" and near["paper"] == 0.54


def test_no_simulated_agent_or_test_double_is_set_beside_facet():
    """Issue 22.4: noisy-oracle's rates are simulated and a terminus-2 run against the scripted replay
    model plays a script: neither is a teacher's, so neither is set beside FACET's figures."""
    cvt = pd.DataFrame([{"agent": "noisy-oracle", "model": "", "agent_label": "noisy-oracle · p=0.8",
                         "check_rate": 0.8, "task_rate": 0.4},
                        {"agent": "terminus-2", "model": "scripted-terminus:oracle (test double)",
                         "agent_label": "terminus-2 · scripted", "check_rate": 1.0, "task_rate": 1.0}])
    near = {"noisy-oracle": NearMisses(failed=6, with_tests=5, near=4),
            "terminus-2": NearMisses(failed=2, with_tests=2, near=2)}
    labels = {"noisy-oracle": "noisy-oracle (simulated, not a model)",
              "terminus-2": "terminus-2 · test double: against a scripted replay model, not an LLM"}
    assert refs.rollout_comparison(cvt, near, labels).empty


def test_a_test_doubles_cost_is_never_set_beside_skillsynth():
    """Issue 22.4: the demo's LLM batch is answered by the scripted replay model at a made-up price:
    its cost per task goes to a table of its own (labelled), not beside SkillSynth's $27.3."""
    rates = pd.DataFrame([{"check": "oracle", "label": "o", "ran": 10, "passed": 9, "pass_rate": 0.9}])
    batches = pd.DataFrame([{"batch_id": "demo-llm", "model": "scripted-replay (demo price, test double)",
                             "test_double": True, "accepted": 4, "cost_usd": 0.2, "cost_per_accepted": 0.05},
                            {"batch_id": "real", "model": "gpt-x", "test_double": False, "accepted": 2,
                             "cost_usd": 1.0, "cost_per_accepted": 0.5}])
    t = refs.synthesis_comparison(rates, batches)
    cost = t[t["measure"] == refs.SKILLSYNTH_COST_PER_TASK.label]
    assert list(cost["where"]) == ["batch real (gpt-x)"] and list(cost["ours"]) == [0.5]
    apart = refs.doubles_apart(batches)
    assert list(apart["batch_id"]) == ["demo-llm"] and "paper" not in apart and "source" not in apart
    assert "test double" in apart["what"].iloc[0] and "made-up price" in apart["what"].iloc[0]
    only_double = refs.synthesis_comparison(rates, batches.iloc[:1])
    row = only_double[only_double["measure"] == refs.SKILLSYNTH_COST_PER_TASK.label].iloc[0]
    assert pd.isna(row["ours"]) and "1 test-double batch(es) left out" in row["where"]


def test_marks_are_lines_labelled_as_the_papers():
    fig = refs.with_marks(go.Figure(), [refs.FACET_CHECK_RATE, refs.FACET_TASK_RATE])
    assert [s["x0"] for s in fig.layout.shapes] == [0.894, 0.209]
    assert all("(paper)" in a.text for a in fig.layout.annotations)
