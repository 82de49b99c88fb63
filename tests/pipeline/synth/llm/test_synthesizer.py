"""LLMSynthesizer end to end on one scripted path: real client over HTTP against the replay
server, real Docker builds, Sessions and verification."""
from __future__ import annotations

import threading
import tomllib

import pytest

from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.synthesizer import LLMSynthesizer
from pipeline.synth.protocol import SynthTools
from tests.pipeline.synth.llm.paid_orders import PATH, SOLVE, PaidOrders
from tests.workbench.llm.conftest import make_settings
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer, Rule
from workbench.sandbox.base_image import base_image_name


@pytest.fixture
def synth_with():
    """synth_with(script, **kw) -> (outcome, synthesizer): one path through a fresh server."""
    live = []

    def run(script: PaidOrders, **kw):
        from workbench.sandbox.engine import Engine
        srv = ReplayServer().start()
        srv.add_rule(script.rule())
        caller = LLMCaller(LLMClient(make_settings(srv)))
        live.append((srv, caller))
        synth = LLMSynthesizer(caller, model="test-model", solve_timeout_s=kw.pop("solve_timeout_s", 20), **kw)
        tools = SynthTools(engine=Engine(), base_image=base_image_name())
        return synth.synthesize(PATH, 7, tools), synth
    yield run
    for srv, caller in live:
        caller.close()
        srv.stop()


def test_task_id_is_known_before_any_call_and_names_what_the_task_is_made_from():
    srv = ReplayServer().start()
    try:
        caller = LLMCaller(LLMClient(make_settings(srv)))
        a = LLMSynthesizer(caller, model="m1", base_image="img:1")
        assert a.task_id(PATH, 1) == LLMSynthesizer(caller, model="m1", base_image="img:1").task_id(PATH, 1)
        assert a.task_id(PATH, 1) != a.task_id(PATH, 2)
        assert a.task_id(PATH, 1) != LLMSynthesizer(caller, model="m2", base_image="img:1").task_id(PATH, 1)
        assert a.task_id(PATH, 1) != LLMSynthesizer(caller, model="m1", base_image="img:2").task_id(PATH, 1)
        assert srv.stats.requests_total == 0
        caller.close()
    finally:
        srv.stop()


def test_a_stop_during_the_work_leaves_the_path_unfinished_without_further_calls():
    """The batch's stop (SynthTools.stop) is honoured before every LLM call: no task, nothing built."""
    from pipeline.synth.llm.synthesizer import STOPPED
    stop = threading.Event()
    script = PaidOrders()

    def reply(body):
        stop.set()          # the user pressed stop while the plan was being written
        return script.reply(body)
    srv = ReplayServer().start()
    try:
        srv.add_rule(Rule(match=None, reply=reply))
        caller = LLMCaller(LLMClient(make_settings(srv)))
        tools = SynthTools(engine=None, base_image="img:1", stop=stop)
        out = LLMSynthesizer(caller, model="test-model").synthesize(PATH, 1, tools)
        caller.close()
    finally:
        srv.stop()
    assert out.task is None and out.error == STOPPED
    assert dict(script.calls) == {"synth_plan": 1}


def test_a_spent_budget_is_raised_to_the_batch_not_counted_as_a_failed_artifact():
    """BudgetExceeded after the plan: no repair attempt, no error outcome; the batch stops cleanly."""
    from workbench.llm.budget import Budget, BudgetExceeded
    script = PaidOrders()
    srv = ReplayServer().start()
    try:
        srv.add_rule(script.rule())
        caller = LLMCaller(LLMClient(make_settings(srv), budget=Budget(0.001)))
        tools = SynthTools(engine=None, base_image="img:1")
        with pytest.raises(BudgetExceeded):
            LLMSynthesizer(caller, model="test-model").synthesize(PATH, 1, tools)
        caller.close()
    finally:
        srv.stop()
    assert dict(script.calls) == {"synth_plan": 1}


@pytest.mark.docker
def test_a_scripted_path_becomes_an_accepted_task_that_uses_its_skills(synth_with):
    script = PaidOrders()
    out, synth = synth_with(script)
    assert out.error is None and out.task is not None, out.error
    assert {c.name: c.passed for c in out.checks} == dict.fromkeys(
        ["build", "noop", "oracle", "rubric", "decontam", "judge"], True), [(c.name, c.reason) for c in out.checks]
    assert out.attempts == []
    task = out.task
    assert task.task_id == synth.task_id(PATH, 7) and task.name.startswith("workbench/llm-")
    assert task.recipes == ["llm:jq-filter", "llm:awk-report"]
    assert task.category == "data-processing" and task.difficulty in ("medium", "hard")
    assert [(f.step, f.fidelity, f.tools_used) for f in task.fidelity] == [(1, "tool", ("jq",)),
                                                                        (2, "tool", ("awk", "sort"))]
    meta = tomllib.loads(task.bundle.text("task.toml"))["metadata"]
    assert meta["provider"] == "llm" and meta["path_id"] == "path-paid-1" and meta["skill_ids"] == ["sk-jq", "sk-awk"]
    assert task.bundle.text("solution/solve.sh") == SOLVE
    # one call per stage, in FACET's forward order, then the judge
    assert dict(script.calls) == dict.fromkeys(["synth_plan", "synth_environment", "synth_instruction",
                                                "synth_solution", "synth_tests", "task_judge"], 1)
    # the instruction and tests were written from the real container state and the solution's effects
    by_stage = {b["messages"][0]["content"].split("\n", 1)[0]: b["messages"][1]["content"] for b in script.bodies}
    assert "/app/orders.json" in by_stage["Stage: synth_instruction."]
    assert "/app/out/totals.csv" in by_stage["Stage: synth_tests."]
    assert set(out.timings) >= {"llm_s", "docker_s", "total_s"} and out.timings["docker_s"] > 0


@pytest.mark.docker
def test_a_crashing_solution_is_repaired_from_its_output_and_only_it_is_rewritten(synth_with):
    crash = {"solve_sh": "#!/bin/bash\nset -euo pipefail\ncd /app\n# step 1: filter\njq '.[' orders.json > out/paid.json\n"}
    script = PaidOrders({"synth_solution": [crash]})
    out, _ = synth_with(script)
    assert out.error is None and out.task is not None and all(c.passed for c in out.checks), out.error
    [attempt] = out.attempts
    assert (attempt.artifact, attempt.check, attempt.outcome) == ("solution", "solve", "fixed")
    assert "solution/solve.sh exited with code" in attempt.reason
    assert attempt.diff.startswith("--- a/solution/solve.sh") and "+jq '[.[] | select" in attempt.diff
    assert attempt.prompt_tokens > 0 and attempt.cost_usd > 0
    assert script.calls["synth_repair_solution"] == 1
    assert sum(script.calls[s] for s in ("synth_repair_environment", "synth_repair_tests",
                                         "synth_repair_instruction")) == 0
    repair_prompt = next(b for b in script.bodies if "Stage: synth_repair_solution." in b["messages"][0]["content"])
    assert "jq '.[' orders.json" in repair_prompt["messages"][1]["content"]    # the current artifact
    assert out.task.bundle.text("solution/solve.sh") == SOLVE


def test_two_instructions_that_differ_only_in_numbers_share_a_near_duplicate_key():
    from pipeline.synth.llm.synthesizer import near_duplicate_key
    a = near_duplicate_key("# Totals\n\n1. Keep the 3 largest rows of /app/a.csv, rounded to 2 decimals.\n")
    b = near_duplicate_key("# Totals\n\n1. Keep the 15 largest   rows of /app/a.csv, rounded to 2.5 decimals.\n")
    assert a == b and a != near_duplicate_key("# Totals\n\n1. Keep the 3 smallest rows of /app/a.csv.\n")
