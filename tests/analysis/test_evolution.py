"""analysis/evolution.py on the planted evolve run (tests/pages/evolution_fixture.py) read back
through the real store: the numbers below are worked out by hand from the fixture's plan."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis import evolution as ev
from tests.pages.evolution_fixture import (AGENT, CRASHED_TASK, K, LABEL, LABEL_P05, P, P05_TASK, T2, T2_MODEL,
                                          planted_workspace)
from workbench.store import lineage as lineage_store
from workbench.store import rollouts as ro_store

NOISY = ev.AgentConfig(AGENT, "", LABEL)
NOISY_P05 = ev.AgentConfig(AGENT, "", LABEL_P05)


@pytest.fixture(scope="module")
def planted_ws(tmp_path_factory):
    return planted_workspace(tmp_path_factory)


@pytest.fixture
def planted(planted_ws):
    """The frames the page reads (read-only here, so one workspace serves the module)."""
    return lineage_store.lineage_frame(planted_ws.db), ro_store.rollouts_frame(planted_ws.db)


def test_pass_rates_are_per_agent_config(planted):
    _, rollouts = planted
    assert ev.agent_configs(rollouts) == [NOISY_P05, NOISY, ev.AgentConfig(T2, T2_MODEL)]
    assert ev.agent_configs(rollouts, ["evo02"]) == [NOISY]
    rates = ev.pass_rates(rollouts, NOISY).set_index("task_id")
    # the crashed rollout is left out, as the driver leaves it out: 4 of 4, not 4 of 5
    assert rates.loc[CRASHED_TASK, ["rollouts", "passed", "r"]].tolist() == [K, 4, 1.0]
    assert rates.loc[P05_TASK, "r"] == 0.75                    # p = 0.5's 0 of 4 not mixed in
    assert ev.pass_rates(rollouts, NOISY_P05)[["task_id", "r"]].values.tolist() == [[P05_TASK, 0.0]]
    assert rates.loc["evo03__e1", "r"] == 0.75
    assert "evo02__b1__b1" not in rates.index          # rejected: never rolled out
    t2 = ev.pass_rates(rollouts, ev.AgentConfig(T2, T2_MODEL))
    assert t2.set_index("task_id")["r"].to_dict() == {"evo00": pytest.approx(2 / 3), "evo00__d1": 0.0}
    assert NOISY.simulated and not ev.AgentConfig(T2, T2_MODEL).simulated
    assert "simulated, not a model" in NOISY.label and NOISY.label.endswith(f"p={P}")


def test_each_variant_with_its_parents_rate_and_its_own(planted):
    lineage, rollouts = planted
    v = ev.variants_frame(lineage, ev.pass_rates(rollouts, NOISY)).set_index("task_id")
    assert len(v) == 9
    assert v.loc["evo00__d1", ["operator", "mark", "round", "outcome", "r_before", "r_after", "rollouts_after"]] \
        .tolist() == ["harder", "d1", 1, "accepted", 1.0, 0.5, K]
    assert v.loc["evo00__d1__b1", ["operator", "round", "r_before", "r_after"]].tolist() == \
        ["context_switch", 2, 0.5, 0.25]
    assert v.loc["evo02__b1__b1", "outcome"] == "rejected" and math.isnan(v.loc["evo02__b1__b1", "r_after"])
    assert v.loc["evo04__e1", "outcome"] == "no variant"
    assert v.loc["evo04__e1", "change"] == "not made: one step left: nothing to drop"
    assert v.loc["evo03__e1__d1", "outcome"] == "failed"
    assert v.loc["evo03__e1__d1", "change"].startswith("not made: docker build failed")


def test_the_rate_before_is_the_chosen_agents_and_the_rate_that_chose_is_kept(planted):
    lineage, rollouts = planted
    v = ev.variants_frame(lineage, ev.pass_rates(rollouts, ev.AgentConfig(T2, T2_MODEL))).set_index("task_id")
    assert v.loc["evo00__d1", ["chose_r", "r_before", "r_after"]].tolist() == pytest.approx([1.0, 2 / 3, 0.0])
    assert math.isnan(v.loc["evo01__d1", "r_before"])    # terminus-2 never ran evo01


def test_per_operator_counts_and_mean_rates_before_and_after(planted):
    lineage, rollouts = planted
    s = ev.operator_summary(ev.variants_frame(lineage, ev.pass_rates(rollouts, NOISY))).set_index("operator")
    assert list(s.index) == ["harder", "context_switch", "easier"]
    assert s[["tried", "made", "accepted", "no_variant", "failed", "rated"]].values.tolist() == \
        [[3, 2, 2, 0, 1, 2], [4, 3, 2, 1, 0, 2], [2, 1, 1, 1, 0, 1]]
    # harder: (1 + .75)/2 -> (.5 + .25)/2; context switch: (.5 + .25)/2 -> (.25 + .5)/2; easier: 0 -> .75
    assert s["r_before"].tolist() == pytest.approx([0.875, 0.375, 0.0])
    assert s["r_after"].tolist() == pytest.approx([0.375, 0.375, 0.75])
    assert s["delta"].tolist() == pytest.approx([-0.5, 0.0, 0.75])
    assert s.loc["harder", "expected"] == "lowers r" and s.loc["easier", "expected"] == "raises r"


def test_an_operator_never_tried_reads_zero_not_missing():
    empty = ev.variants_frame(pd.DataFrame(), ev.pass_rates(pd.DataFrame(), NOISY))
    s = ev.operator_summary(empty)
    assert s["tried"].tolist() == [0, 0, 0] and s["r_before"].isna().all()
    assert ev.rates_by_round(empty).empty and ev.productive_share(pd.DataFrame(), pd.DataFrame(
        columns=ev.RATE_COLUMNS)).empty


def test_rates_per_round_and_operator(planted):
    lineage, rollouts = planted
    r = ev.rates_by_round(ev.variants_frame(lineage, ev.pass_rates(rollouts, NOISY)))
    assert r[["round", "operator", "rated"]].values.tolist() == [[1, "harder", 2], [1, "context_switch", 1],
                                                                 [1, "easier", 1], [2, "context_switch", 1]]
    assert r["r_after"].tolist() == pytest.approx([0.375, 0.5, 0.75, 0.25])


def test_the_productive_share_per_round(planted):
    lineage, rollouts = planted
    rates = ev.pass_rates(rollouts, NOISY)
    assert ev.round_tasks(lineage) == {0: ["evo00", "evo01", "evo02", "evo03", "evo04"],
                                       1: ["evo00__d1", "evo01__d1", "evo02__b1", "evo03__e1"],
                                       2: ["evo00__d1__b1"]}
    share = ev.productive_share(lineage, rates)
    # round 0: r = 1, .75, .25, 0, 0 -> 2 of 5; round 1: .5, .25, .5, .75 -> 4 of 4; round 2: .25 -> 1 of 1
    assert share[["round", "tasks", "productive", "unrated"]].values.tolist() == [[0, 5, 2, 0], [1, 4, 4, 0],
                                                                                  [2, 1, 1, 0]]
    assert share["share"].tolist() == pytest.approx([0.4, 1.0, 1.0])
    # by terminus-2 only evo00 (2/3) and evo00__d1 (0/3) have rates: the rest count as unrated
    t2 = ev.productive_share(lineage, ev.pass_rates(rollouts, ev.AgentConfig(T2, T2_MODEL)))
    assert t2[["round", "tasks", "productive", "unrated"]].values.tolist() == [[0, 1, 1, 4], [1, 1, 0, 3],
                                                                               [2, 0, 0, 1]]
    assert math.isnan(t2["share"].iloc[2])


def test_the_lineage_tree_of_a_root(planted, planted_ws):
    lineage, rollouts = planted
    rates = ev.pass_rates(rollouts, NOISY)
    assert ev.roots(lineage)[:2] == ["evo00", "evo01"]      # two variants tried each, then by id
    from workbench.store import tasks as task_store
    labels = ev.root_labels(lineage, task_store.tasks_frame(planted_ws.db))
    assert list(labels) == ev.roots(lineage) and labels["evo04"] == "evo04 · skillgraph/evo04 · 1 tried"
    tree = ev.lineage_tree(lineage, rates, "evo02")
    assert tree.edges == [("evo02", "evo02__b1"), ("evo02__b1", "evo02__b1__b1")]
    nodes = tree.nodes.set_index("task_id")
    assert nodes.loc["evo02", ["mark", "generation", "r", "outcome"]].tolist() == ["original", 0, 0.25, "original"]
    assert nodes.loc["evo02__b1", ["mark", "operator", "r", "rollouts"]].tolist() == ["b1", "context_switch", 0.5, K]
    assert nodes.loc["evo02__b1__b1", "outcome"] == "rejected" and math.isnan(nodes.loc["evo02__b1__b1", "r"])
    assert nodes["x"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="no variants were tried of 'nope'"):
        ev.lineage_tree(lineage, rates, "nope")


def test_a_branching_tree_gives_every_leaf_its_own_row(planted):
    lineage, rollouts = planted
    extra = lineage[lineage["task_id"] == "evo00__d1"].assign(task_id="evo00__d2", change="another bridge")
    more = lineage[lineage["task_id"] == "evo00__d1__b1"].assign(task_id="evo00__d1__b2")
    tree = ev.lineage_tree(pd.concat([lineage, extra, more]), ev.pass_rates(rollouts, NOISY), "evo00")
    pos = tree.nodes.set_index("task_id")[["x", "y"]]
    leaves = ["evo00__d1__b1", "evo00__d1__b2", "evo00__d2"]
    assert pos.loc[leaves, "y"].tolist() == [0.0, -1.0, -2.0]
    assert pos.loc["evo00__d1", "y"] == -0.5 and pos.loc["evo00", "y"] == pytest.approx(-1.25)
    assert len(set(map(tuple, pos.values))) == len(pos)        # no two nodes on one spot


def test_marks_and_outcomes():
    assert ev.mark("t") == "original" and ev.mark("t__d1__b2") == "b2"
    assert ev.outcome("made", "accepted") == "accepted" and ev.outcome("made", None) == "not verified"
    assert ev.outcome("no_variant", None) == "no variant" and ev.outcome("failed", None) == "failed"
    assert ev.rate_text(float("nan")) == "—" and ev.rate_text(0.5) == "0.50"
