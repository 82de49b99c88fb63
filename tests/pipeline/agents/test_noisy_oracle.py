"""pipeline.agents.noisy_oracle: the oracle with each solution step kept with probability p,
drawn per (seed, task); labelled as simulated and keyed by p. Unit tests first (no container),
then trials in real Docker on a verified multi-step demo task."""
import json

import pytest

from pipeline.agents.factory import make_agent
from pipeline.agents.noisy_oracle import NoisyOracleAgent, draw_kept
from pipeline.agents.protocol import AGENT_LABELS, AgentContext
from pipeline.agents.solution_steps import solution_steps, without_steps
from pipeline.trajectories.atif import validate_with_harbor
from pipeline.trials.trial import run_trial
from pipeline.verify.docker_checks import check_build
from tests.helpers import sum_bundle
from tests.pipeline.agents.test_ablation import OFFLINE
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401
from workbench.sandbox.bundle import read_bundle
from workbench.sandbox.task_toml import parse
from workbench.store import tasks as task_store
from workbench.workspace import Workspace


class Untouchable:
    def __getattr__(self, name):
        raise AssertionError(f"the noisy oracle used its box ({name}) with nothing to run")


def _ctx(bundle, seed=0, box=None):
    return AgentContext(task_id="t", trial_id=f"trial-noisy-{seed}", instruction="Sum.", bundle=bundle,
                        box=box or Untouchable(), timeout_s=30, seed=seed)


def test_it_is_labelled_simulated_and_keyed_by_p():
    agent = make_agent("noisy-oracle")
    assert isinstance(agent, NoisyOracleAgent) and agent.model is None and agent.keep_p == 0.8
    assert agent.label == AGENT_LABELS["noisy-oracle"] + " · p=0.8" and "simulated, not a model" in agent.label
    assert agent.config_key() == "noisy-oracle@1:p=0.8"
    # rollouts at another p are other work: another content key, however close the p
    keys = {make_agent("noisy-oracle", keep_p=p).config_key() for p in (0.8, 0.5, 0.3333331, 0.3333332, 1, 0)}
    assert len(keys) == 6


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), "0.8", True])
def test_a_p_that_is_no_probability_is_refused(p):
    with pytest.raises(ValueError, match="noisy-oracle: p .* must be"):
        make_agent("noisy-oracle", keep_p=p)


def test_p_is_refused_for_other_agents_where_it_would_be_ignored():
    with pytest.raises(ValueError, match="'oracle'.*for noisy-oracle only"):
        make_agent("oracle", keep_p=0.5)


def test_the_draw_is_per_seed_and_task_and_the_same_on_a_rerun():
    steps = solution_steps(OFFLINE)
    draws = [tuple(draw_kept(steps, 0.5, seed=s, task_id="t")) for s in range(12)]
    assert draws == [tuple(draw_kept(steps, 0.5, seed=s, task_id="t")) for s in range(12)]   # a rerun draws the same
    assert len(set(draws)) >= 4                                                            # k samples differ
    assert draws != [tuple(draw_kept(steps, 0.5, seed=s, task_id="u")) for s in range(12)]  # per task
    assert all(all(draw_kept(steps, 1.0, seed=s, task_id="t")) for s in range(50))
    assert not any(any(draw_kept(steps, 0.0, seed=s, task_id="t")) for s in range(50))
    share = sum(sum(draw_kept(steps, 0.8, seed=s, task_id="t")) for s in range(500)) / 1500
    assert 0.75 < share < 0.85


def test_without_steps_leaves_out_every_step_given_and_names_who():
    steps = solution_steps(OFFLINE)
    cut = without_steps(OFFLINE, [steps[0], steps[2]], by="the noisy oracle")
    assert "diff -u a b" in cut and 'print("filtered")' not in cut and "sort -u" not in cut
    assert cut.count("# (left out by the noisy oracle: ") == 2 and "set -euo pipefail" in cut


def test_at_p_0_nothing_runs_and_the_container_is_untouched(tmp_path):
    bundle = sum_bundle()
    bundle.files["solution/solve.sh"] = OFFLINE.encode()
    result = NoisyOracleAgent(0.0).run(_ctx(bundle))
    assert result.status == "completed" and result.turns == 0
    assert result.details["kept"] == [] and [d["step"] for d in result.details["dropped"]] == [1, 2, 3]
    assert "every one of the 3 solution steps was dropped" in result.details["nothing_run"]
    (tmp_path / "t.json").write_text(json.dumps(result.trajectory))
    assert validate_with_harbor(tmp_path / "t.json") == []


def test_a_script_without_step_markers_runs_whole_or_not_at_all():
    bundle = sum_bundle()        # one unmarked command
    result = NoisyOracleAgent(0.0).run(_ctx(bundle))
    assert result.status == "completed" and result.details["whole_script"] and not result.details["kept_whole"]
    assert "no step markers" in result.details["note"] and "dropped it whole" in result.details["nothing_run"]


# ------------------------------------------------------------------ in Docker, on a demo task

@pytest.fixture(scope="module")
def multi_step_task(tasks_template, engine):
    """(bundle, image, task config) of a verified demo task with at least two marked solution steps."""
    root, ids = tasks_template
    ws = Workspace.open(root)
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    bundle = read_bundle(root / frame.loc[ids[0], "bundle_dir"])
    assert len([s for s in solution_steps(bundle.text("solution/solve.sh")) if s.marked]) >= 2
    cfg = parse(bundle.text("task.toml"))
    build, res = check_build(engine, bundle, cfg, 1.0)
    assert build.passed, build.reason
    return ids[0], bundle, res.image, cfg


def _trial(engine, task, agent, seed):
    task_id, bundle, image, cfg = task
    return run_trial(engine, image, bundle, cfg, agent, trial_id=f"noisy-{seed}-{agent.keep_p}", task_id=task_id,
                     seed=seed)


def _seed_where(task_id, steps, p, want):
    return next(s for s in range(200) if want(draw_kept(steps, p, seed=s, task_id=task_id)))


@pytest.mark.docker
def test_p_1_is_the_oracle_and_p_0_fails_the_tests(engine, multi_step_task):
    full = _trial(engine, multi_step_task, NoisyOracleAgent(1.0), seed=3)
    assert full.passed and full.reward == 1.0 and full.agent.status == "completed"
    assert full.agent.details["dropped"] == [] and full.agent.exit_code == 0
    none = _trial(engine, multi_step_task, NoisyOracleAgent(0.0), seed=3)
    assert not none.passed and none.reward == 0.0 and none.agent.details["nothing_run"]
    assert none.failure_class == "test_assertion"


@pytest.mark.docker
def test_between_0_and_1_the_seeds_give_a_spread_of_rewards_and_a_rerun_the_same(engine, multi_step_task):
    task_id, bundle, _, _ = multi_step_task
    steps = [s for s in solution_steps(bundle.text("solution/solve.sh")) if s.marked]
    p = 0.5
    seeds = {"all": _seed_where(task_id, steps, p, all),
             "partial": _seed_where(task_id, steps, p, lambda d: any(d) and not all(d)),
             "none": _seed_where(task_id, steps, p, lambda d: not any(d))}
    agent = NoisyOracleAgent(p)
    trials = {kind: _trial(engine, multi_step_task, agent, seed) for kind, seed in seeds.items()}
    assert trials["all"].reward == 1.0 and trials["none"].reward == 0.0          # a spread, from one p
    partial = trials["partial"].agent.details
    assert partial["dropped"] and partial["kept"] and partial["steps"] == len(steps)
    again = _trial(engine, multi_step_task, agent, seeds["partial"])
    assert again.agent.details["kept"] == partial["kept"] and again.reward == trials["partial"].reward
    assert [t["outcome"] for t in again.tests] == [t["outcome"] for t in trials["partial"].tests]


@pytest.mark.docker
def test_rollouts_at_another_p_are_other_work_and_are_labelled_with_it(tasks_ws, engine):
    from pipeline.rollouts.batch import run_rollouts
    from workbench.store import rollouts as ro_store
    ws, ids = tasks_ws
    first = run_rollouts(ws, agent="noisy-oracle", task_ids=ids[:1], k=2, keep_p=0.8, engine=engine)
    same = run_rollouts(ws, agent="noisy-oracle", task_ids=ids[:1], k=2, keep_p=0.8, engine=engine)
    other = run_rollouts(ws, agent="noisy-oracle", task_ids=ids[:1], k=2, keep_p=0.5, engine=engine)
    assert (first.ran, same.ran, same.skipped, other.ran) == (2, 0, 2, 2)
    frame = ro_store.rollouts_frame(ws.db)
    assert set(frame["agent_label"]) == {NoisyOracleAgent(0.8).label, NoisyOracleAgent(0.5).label}
    details = [json.loads(d) if isinstance(d, str) else d for d in frame["details"]]
    assert {d["keep_p"] for d in details} == {0.8, 0.5} and all("kept" in d for d in details)
