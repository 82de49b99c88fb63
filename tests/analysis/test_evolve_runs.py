"""analysis/evolve_runs.py: the run's own agent config, the run picker's labels, a running run's
progress, what a round may evolve and the launch form's parameters, on the planted evolve run
(tests/pages/evolution_fixture.py)."""
from __future__ import annotations

import pytest

from analysis import evolution as ev
from analysis import evolve_runs as er
from tests.pages.evolution_fixture import AGENT, LABEL, P, T2, T2_MODEL, planted_workspace
from workbench.store import lineage as lineage_store
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

NOISY = ev.AgentConfig(AGENT, "", LABEL)


@pytest.fixture(scope="module")
def planted_ws(tmp_path_factory):
    return planted_workspace(tmp_path_factory)


def test_the_runs_own_config_is_the_default(planted_ws):
    rollouts = ro_store.rollouts_frame(planted_ws.db)
    configs = ev.agent_configs(rollouts)
    assert er.run_config(AGENT, None, f'{{"keep_p": {P}}}') == NOISY
    assert ev.default_config(configs, er.run_config(AGENT, None, {"keep_p": P})) == 1
    assert ev.default_config(configs, er.run_config(T2, T2_MODEL, "{}")) == 2
    assert ev.default_config(configs, ev.AgentConfig("oracle")) == 0      # none of its rollouts: the first
    assert er.run_config("harbor-agent", None, {}) == ev.AgentConfig("harbor-agent")


def test_run_labels_and_progress(planted_ws):
    runs = lineage_store.evolve_runs_frame(planted_ws.db)
    assert er.run_labels(runs) == {"evofix-run1": "evofix-run1 · noisy-oracle · round 2/2 · 6 made, 5 accepted · done"}
    assert er.run_progress('{"progress": {"round": 2, "phase": "rollouts", "done": 3, "total": 12}}') == \
        (0.25, "round 2 · rollouts: 3/12")
    assert er.run_progress("{}") is None and er.run_progress("not json") is None and er.run_progress(None) is None


def test_the_tasks_a_round_may_evolve_are_the_accepted_ones(planted_ws):
    tasks = task_store.tasks_frame(planted_ws.db)
    got = er.evolvable_tasks(tasks)
    assert "evo02__b1__b1" not in got                      # rejected
    assert {"evo00", "evo04", "evo00__d1", "evo03__e1"} <= set(got) and len(got) == 10
    assert er.evolvable_tasks(tasks.assign(withdrawn=tasks["task_id"] == "evo00")).count("evo00") == 0


def test_the_launch_forms_fields_as_the_drivers_params():
    p = er.form_params(task_ids=["evo00"], rounds=2, agent=AGENT, k=3, keep_p=0.6, executor="ray",
                       ray_address="  127.0.0.1:6379 ")
    assert (p.task_ids, p.rounds, p.agent, p.k, p.keep_p, p.executor, p.ray_address) == \
        (("evo00",), 2, AGENT, 3, 0.6, "ray", "127.0.0.1:6379")
    other = er.form_params(task_ids=[], rounds=1, agent="oracle", k=4, keep_p=0.8, executor="local",
                           ray_address="host:1")
    assert (other.task_ids, other.keep_p, other.ray_address) == ((), None, None)
