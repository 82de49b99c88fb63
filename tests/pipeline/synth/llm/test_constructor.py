"""The constructor's forward order and its repairs on one scripted path (real client against the
replay server, real Docker). Helper E's suite covers every route on the demo paths; these pin
the constructor's own rules: repaired from the build log, bad JSON counted as an attempt of its
artifact, a solve.sh that never ends cut at the agent timeout, budgets that run out."""
from __future__ import annotations

import os

import pytest

from pipeline.repair.route import RepairBudget
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.constructor import Exhausted, Work
from pipeline.synth.llm.models import Plan
from pipeline.synth.llm.repair_loop import verify_and_repair
from pipeline.synth.llm.synthesizer import task_bundle
from pipeline.synth.protocol import SynthTools
from tests.pipeline.synth.llm.paid_orders import MANIFEST, PATH, PLAN, TESTS, PaidOrders
from tests.workbench.llm.conftest import make_settings
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name

pytestmark = pytest.mark.docker


@pytest.fixture
def work_with():
    """work_with(script, budget=None, agent_timeout_s=20) -> Work on PATH with the fixture plan."""
    live = []

    def make(script: PaidOrders, budget: RepairBudget | None = None, agent_timeout_s: float = 20) -> Work:
        from workbench.sandbox.engine import Engine
        srv = ReplayServer().start()
        srv.add_rule(script.rule())
        caller = LLMCaller(LLMClient(make_settings(srv)))
        live.append((srv, caller))
        tools = SynthTools(engine=Engine(), base_image=base_image_name())
        return Work(caller, PATH, Plan.model_validate(PLAN), tools, item="task-c", agent_timeout_s=agent_timeout_s,
                    timer={}, budget=budget)
    yield make
    for srv, caller in live:
        caller.close()
        srv.stop()


def test_a_build_that_fails_is_repaired_from_its_log(work_with):
    broken = {**MANIFEST, "setup_commands": ["cp /app/orders.json /app/missing/dir/"]}
    script = PaidOrders({"synth_environment": [broken]})
    work = work_with(script)
    draft = work.construct()
    assert draft.image and draft.before.exists("/app/orders.json")
    [a] = work.attempts
    assert (a.artifact, a.check, a.outcome) == ("environment", "build", "fixed")
    assert a.reason.startswith("build failed") and any("missing/dir" in line for line in a.evidence)
    assert '-  "cp /app/orders.json /app/missing/dir/"' in a.diff
    prompt = next(b for b in script.bodies if "Stage: synth_repair_environment." in b["messages"][0]["content"])
    assert "missing/dir" in prompt["messages"][1]["content"]      # the build log excerpt went to the repair


def test_a_reply_that_is_never_json_counts_as_an_attempt_of_its_artifact(work_with):
    script = PaidOrders({"synth_tests": ["def test_x(): pass  # not JSON"] * 3})
    work = work_with(script)
    draft = work.construct()
    assert draft.tests.test_py == TESTS
    [a] = work.attempts
    assert (a.artifact, a.check, a.outcome) == ("tests", "guard.reply", "fixed")
    assert "synth_tests reply is not valid JSON" in a.reason
    assert "def test_x(): pass  # not JSON" in "\n".join(a.evidence)   # the raw text excerpt
    assert script.calls["synth_tests"] == 3 and script.calls["synth_repair_tests"] == 1


def test_a_solution_that_never_ends_is_cut_at_the_agent_timeout_and_repaired(work_with):
    script = PaidOrders({"synth_solution": [{"solve_sh": "#!/bin/bash\n# step 1: wait\nsleep 3600\n"}]})
    work = work_with(script, agent_timeout_s=4)
    draft = work.construct()
    [a] = work.attempts
    assert (a.artifact, a.check, a.outcome) == ("solution", "solve", "fixed")
    assert "ran past its 4 s limit" in a.reason
    assert "/app/out/totals.csv" in draft.diff.changed_paths


def test_an_environment_that_never_builds_is_exhausted_after_three_repairs(work_with):
    def broken(n: int) -> dict:    # each repair tries something else, none builds
        return {**MANIFEST, "setup_commands": [f"exit {n}"]}
    script = PaidOrders({"synth_environment": [broken(3)],
                         "synth_repair_environment": [broken(4 + i) for i in range(5)]})
    work = work_with(script)
    with pytest.raises(Exhausted) as exc:
        work.construct()
    assert [a.outcome for a in work.attempts] == ["still_failing", "still_failing", "exhausted"]
    assert {a.artifact for a in work.attempts} == {"environment"} and script.calls["synth_repair_environment"] == 3
    assert exc.value.failures[0].check == "build"


def test_tests_that_pass_untouched_are_routed_to_the_tests_and_repaired(work_with):
    lazy = {"test_py": 'from pathlib import Path\n\n\ndef test_paid_orders():\n    """' +
            'Write the orders whose status is "paid" to /app/out/paid.json as a JSON array, in their original order.'
            + '"""\n    assert Path("/app").exists()\n', "weights": {}}
    script = PaidOrders({"synth_tests": [lazy]})
    work = work_with(script)
    draft = work.construct()
    verified = verify_and_repair(work, draft, lambda d: task_bundle(
        d, path=PATH, plan=work.plan, seed=1, name="workbench/llm-paid", category="data-processing",
        difficulty="medium", base_image=base_image_name(), agent_timeout_s=20), judge=False)
    assert verified.error is None and all(c.passed for c in verified.checks), verified.error
    [a] = work.attempts
    assert (a.artifact, a.check, a.outcome) == ("tests", "noop", "fixed")
    assert "pass on the untouched environment" in a.reason


def test_a_waiting_session_that_died_is_not_blamed_on_the_solution(work_with):
    """The first solve.sh runs in the Session the state was read in; one that ended while the
    solution was being written (its lifetime, the daemon) gives way to a fresh Session."""
    import docker
    script = PaidOrders()

    def solution_after_killing_the_waiting_session(body):
        client = docker.from_env()
        for c in client.containers.list(filters={"label": "workbench.purpose=synth-state"}):
            if c.labels.get("workbench.owner", "").endswith(f":{os.getpid()}"):
                c.kill()
        return script.reply(body)
    script.faults["synth_solution"] = [solution_after_killing_the_waiting_session]
    work = work_with(script)
    draft = work.construct()
    assert work.attempts == [] and "/app/out/totals.csv" in draft.diff.changed_paths


def test_a_path_the_instruction_names_that_only_solve_sh_names_is_no_missing_file(work_with):
    """A log a scheduled job will write later is named by solve.sh, not made by it: the instruction
    guard is given the solution, so such a path is not a missing file."""
    from tests.pipeline.synth.llm.paid_orders import INSTRUCTION, SOLVE
    later = "A nightly job will append to /app/logs/refresh.log; leave room for it."
    instruction = {**INSTRUCTION, "text": INSTRUCTION["text"] + f"\n{later}\n"}
    solve = SOLVE + "echo '0 2 * * * /app/refresh.sh >> /app/logs/refresh.log' > out/crontab.txt\n"
    script = PaidOrders({"synth_instruction": [instruction], "synth_solution": [{"solve_sh": solve}]})
    work = work_with(script)
    draft = work.construct()
    assert work.attempts == [] and later in draft.instruction.text


def test_a_manifest_the_bundle_rules_refuse_fails_before_any_build():
    """Too many files for a bundle: the environment's fault, said before Docker is asked (no engine here)."""
    from pipeline.synth.llm.constructor import RENDER_CHECK, Draft
    from pipeline.synth.llm.models import EnvManifest
    tools = SynthTools(engine=None, base_image="img:1")
    work = Work(None, PATH, Plan.model_validate(PLAN), tools, item="t", agent_timeout_s=5, timer={})
    many = EnvManifest(files=[{"path": f"/app/in/f{i}.txt", "content": "x"} for i in range(400)])
    [failure] = work.check_environment(Draft())(many)
    assert (failure.check, failure.artifact) == (RENDER_CHECK, "environment")
    assert "files; at most 400 are allowed" in failure.reason


def test_an_environment_that_already_holds_the_goal_is_routed_to_the_environment(work_with):
    """The reference solution changed nothing and the tests pass untouched: the no-op check's
    fault is the environment's (the constructor's hint), not the tests'. After the environment
    repair the state is read again and the kept solution run again; its own fault comes next."""
    from tests.pipeline.synth.llm.paid_orders import SOLVE
    done = {**MANIFEST, "files": MANIFEST["files"] + [
        {"path": "/app/out/paid.json", "content": '[{"id": 1}, {"id": 3}, {"id": 4}]\n'},
        {"path": "/app/out/totals.csv", "content": "alice,35\nbob,7\n"}]}
    idle = {"solve_sh": "#!/bin/bash\n# step 1: check\ntest -f /app/out/paid.json\n"}
    script = PaidOrders({"synth_environment": [done], "synth_solution": [idle]})
    work = work_with(script)
    draft = work.construct()
    assert draft.diff.changed_paths == []
    verified = verify_and_repair(work, draft, lambda d: task_bundle(
        d, path=PATH, plan=work.plan, seed=1, name="workbench/llm-paid", category="data-processing",
        difficulty="medium", base_image=base_image_name(), agent_timeout_s=20), judge=False)
    assert verified.error is None and all(c.passed for c in verified.checks), verified.error
    assert [(a.artifact, a.check, a.outcome) for a in work.attempts] == [
        ("environment", "noop", "moved_on"), ("solution", "oracle", "fixed")]
    assert not draft.before.exists("/app/out/totals.csv") and draft.solution.solve_sh == SOLVE


def _bad_tests(module: str) -> dict:
    return {"test_py": f"import {module}\n" + TESTS, "weights": {}}


def test_a_repair_that_changes_nothing_ends_that_artifacts_repairs_at_once(work_with):
    """The same failure and the same artifact would ask the same question again (and get the cached answer)."""
    from pipeline.synth.llm.constructor import UNCHANGED
    script = PaidOrders({"synth_tests": [_bad_tests("numpy")], "synth_repair_tests": [_bad_tests("numpy")] * 5})
    work = work_with(script)
    with pytest.raises(Exhausted) as exc:
        work.construct()
    [a] = work.attempts
    assert (a.artifact, a.outcome, a.diff) == ("tests", "exhausted", "")
    assert exc.value.failures[0].reason.startswith(UNCHANGED) and "numpy" in exc.value.failures[0].reason
    assert script.calls["synth_repair_tests"] == 1


def test_a_repair_prompt_names_the_earlier_repairs_of_its_artifact(work_with):
    script = PaidOrders({"synth_tests": [_bad_tests("numpy")], "synth_repair_tests": [_bad_tests("pandas")]})
    work = work_with(script)
    draft = work.construct()
    assert draft.tests.test_py == TESTS
    assert [(a.artifact, a.outcome) for a in work.attempts] == [("tests", "still_failing"), ("tests", "fixed")]
    first, second = [b["messages"][1]["content"] for b in script.bodies
                     if "Stage: synth_repair_tests." in b["messages"][0]["content"]]
    assert "Earlier repairs of this artifact (do not repeat one that did not work):\n(none)" in first
    assert "- attempt 1 (guard.tests_import):" in second and "numpy" in second and "-> still_failing" in second
