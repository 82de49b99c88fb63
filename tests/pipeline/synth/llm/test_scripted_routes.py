"""The scripted replies themselves: correct replies are the path's offline task and fit the
planner's checks; each fault's first reply is broken in the way its route needs (a guard, the
static rubric, or a real verification in Docker blames the fault's artifact), its repair reply
is the correct artifact; the judge's verdicts quote the bundle; calls are counted per stage."""
from __future__ import annotations

import json
import shutil

import pytest

from pipeline.judge.task_judge import JudgedText, TaskJudgement, criteria_of
from pipeline.synth.llm import guard
from pipeline.synth.llm import models as M
from pipeline.synth.llm.planner import plan_problems
from pipeline.synth.llm.render import bundle_from_artifacts
from pipeline.synth.llm.scripted import FAULTS, MISSING_FILE, ScriptedSynthesis, correct_reply, judge_reply
from pipeline.verify.failures import failures_of
from pipeline.verify.rubric import check_rubric
from tests.pipeline.synth.llm.demo_paths import tool_paths
from workbench.workspace import Workspace

SCHEMA = {M.ENVIRONMENT: M.EnvManifest, M.INSTRUCTION: M.Instruction, M.SOLUTION: M.Solution, M.TESTS: M.TestsDraft}


@pytest.fixture(scope="module")
def scripted(graph_workspace_template, tmp_path_factory):
    root = tmp_path_factory.mktemp("scripted-routes") / "ws"
    shutil.copytree(graph_workspace_template, root)
    contexts = tool_paths(Workspace.open(root), 1)
    pid = next(iter(contexts))
    return ScriptedSynthesis(contexts), pid, contexts[pid]


def _request(stage: str, path_id: str, extra: str = "") -> dict:
    return {"messages": [{"role": "system", "content": f"Stage: {stage}.\nYou write things."},
                         {"role": "user", "content": f"Path: {path_id}\n{extra}"}]}


def _bundle(t, *, manifest=None, instruction=None, solution=None, tests=None, timeout=120.0):
    from workbench.sandbox.base_image import base_image_name
    return bundle_from_artifacts(name="workbench/llm-scripted", category="file-operations", difficulty="easy",
                                 manifest=manifest or t.manifest, instruction=instruction or t.instruction,
                                 solution=solution or t.solution, tests=tests or t.tests,
                                 base_image=base_image_name(), agent_timeout_sec=timeout, verifier_timeout_sec=120)


def test_correct_replies_are_the_offline_task_and_the_plan_fits_the_path(scripted):
    s, pid, ctx = scripted
    t = s.task(pid)
    plan = M.Plan.model_validate(s.answer(_request(M.PLAN, pid)))
    assert plan_problems(plan, ctx) == []
    assert [g.skill for g in plan.subgoals] == [sc.step.skill_name for sc in ctx.steps]
    assert all(g.success_conditions and g.tools for g in plan.subgoals)
    # the success conditions are the requirement sentences the tests' docstrings carry
    assert plan.subgoals[0].success_conditions[0] in t.tests.test_py
    for stage, schema in SCHEMA.items():
        assert schema.model_validate(s.answer(_request(stage, pid))) == getattr(
            t, {M.ENVIRONMENT: "manifest", M.INSTRUCTION: "instruction", M.SOLUTION: "solution", M.TESTS: "tests"}[stage])
    assert s.calls_for(pid) == {M.PLAN: 1, M.ENVIRONMENT: 1, M.INSTRUCTION: 1, M.SOLUTION: 1, M.TESTS: 1}
    assert t.skills_block and all(f"**{sc.step.skill_name}**" in t.skills_block for sc in ctx.steps)


def test_every_fault_breaks_only_its_artifact_and_its_repair_reply_is_correct(scripted):
    _, pid, ctx = scripted
    for fault, artifact in FAULTS.items():
        s = ScriptedSynthesis({pid: ctx}, {pid: fault})
        t = s.task(pid)
        first = {stage: s.answer(_request(stage, pid)) for stage in SCHEMA}
        faulty = {stage for stage, reply in first.items() if reply != correct_reply(stage, t)}
        stage_of = {"environment": M.ENVIRONMENT, "instruction": M.INSTRUCTION, "solution": M.SOLUTION, "tests": M.TESTS}
        assert faulty == {stage_of[artifact]}, fault
        repaired = s.answer(_request(M.REPAIR[artifact], pid))
        if fault == "exhaust":       # every repair is buggy too, each differently
            again = s.answer(_request(M.REPAIR[artifact], pid))
            assert repaired != correct_reply(M.TESTS, t) and again != repaired
        else:
            assert repaired == correct_reply(M.REPAIR[artifact], t), fault


def test_the_guards_blame_the_artifact_of_the_static_faults(scripted):
    _, pid, ctx = scripted

    def first(fault, stage):
        s = ScriptedSynthesis({pid: ctx}, {pid: fault})
        return s.answer(_request(stage, pid)), s.task(pid)
    pulled, _ = first("registry_pull", M.ENVIRONMENT)
    found = guard.check_manifest(M.EnvManifest.model_validate(pulled), {"base"})
    assert found and {f.artifact for f in found} == {"environment"} and "pip" in found[0].reason
    numpy, t = first("bad_imports", M.TESTS)
    found = guard.check_tests(M.TestsDraft.model_validate(numpy).test_py)
    assert found and {f.artifact for f in found} == {"tests"} and "numpy" in found[0].reason
    assert guard.check_tests(t.tests.test_py) == []
    assert guard.check_manifest(t.manifest, {"base"}) == []
    missing, _ = first("missing_file", M.INSTRUCTION)
    assert MISSING_FILE in M.Instruction.model_validate(missing).text
    prose, _ = first("invalid_json", M.SOLUTION)
    with pytest.raises(json.JSONDecodeError):
        json.loads(prose)
    leaking, t = first("leaking_instruction", M.INSTRUCTION)
    rubric = check_rubric(_bundle(t, instruction=M.Instruction.model_validate(leaking)))
    assert not rubric.passed and {f.artifact for f in failures_of([rubric])} == {"instruction"}
    assert check_rubric(_bundle(t)).passed


def test_the_judge_quotes_the_bundle_and_flags_the_instruction_without_skills(scripted):
    _, pid, ctx = scripted
    s = ScriptedSynthesis({pid: ctx}, {pid: "judge_flags"})
    t = s.task(pid)
    bad = M.Instruction.model_validate(s.answer(_request(M.INSTRUCTION, pid)))
    for instruction, passes in ((t.instruction, True), (bad, False)):
        bundle = _bundle(t, instruction=instruction)
        text = JudgedText.of(bundle)
        shown = f"<instruction_md>\n{text.instruction}</instruction_md>\n<tests>\n{t.tests.test_py}</tests>"
        reply = TaskJudgement.model_validate(s.answer(_request(M.JUDGE, pid, shown)))
        criteria, problem = criteria_of(reply, text)
        assert problem is None, problem                      # every quote is in the bundle
        failed = [c["name"] for c in criteria if not c["passed"]]
        assert failed == ([] if passes else ["exercises_skills"])
    plain = judge_reply(t.instruction.text, ["test_a"], flag_skills=False)
    assert all(v["passed"] for v in plain.values())


def test_an_unknown_path_or_a_request_without_stage_gets_an_answer_that_says_so(scripted):
    s, pid, _ = scripted
    assert "not in this workspace" in s.answer(_request(M.PLAN, "nope-1"))
    body = {"messages": [{"role": "user", "content": "hello"}],
            "response_format": {"type": "json_schema", "json_schema": {"schema": M.Solution.model_json_schema()}}}
    assert set(s.answer(body)) == {"solve_sh"}
    with pytest.raises(ValueError, match="unknown fault"):
        ScriptedSynthesis({}, {pid: "typo"})


@pytest.mark.docker
def test_the_docker_faults_fail_the_check_that_routes_to_their_artifact(scripted):
    """Real verification of each broken first reply (the correct task passes): a failing RUN fails
    the build, a crashing or endless solve.sh the oracle (solution), a test bug the oracle (tests),
    tests that hold untouched the no-op (tests)."""
    from pipeline.verify.run import verify_bundle
    from workbench.sandbox.engine import Engine
    _, pid, ctx = scripted
    engine = Engine()

    def first(fault, stage, schema):
        s = ScriptedSynthesis({pid: ctx}, {pid: fault})
        return schema.model_validate(s.answer(_request(stage, pid))), s.task(pid)

    def blamed(bundle):
        checks = verify_bundle(bundle, engine=engine)
        return {(f.check, f.artifact) for f in failures_of(checks)}, checks

    _, t = first("test_bug", M.TESTS, M.TestsDraft)
    found, checks = blamed(_bundle(t))
    assert found == set(), [(c.name, c.reason) for c in checks if not c.passed]
    manifest, _ = first("broken_dockerfile", M.ENVIRONMENT, M.EnvManifest)
    assert blamed(_bundle(t, manifest=manifest))[0] == {("build", "environment")}
    crash, _ = first("crashing_solution", M.SOLUTION, M.Solution)
    assert blamed(_bundle(t, solution=crash))[0] == {("oracle", "solution")}
    endless, _ = first("never_ends", M.SOLUTION, M.Solution)
    found, checks = blamed(_bundle(t, solution=endless, timeout=8))
    assert found == {("oracle", "solution")} and "past its 8 s limit" in next(c for c in checks if c.name == "oracle").reason
    bug, _ = first("test_bug", M.TESTS, M.TestsDraft)
    assert blamed(_bundle(t, tests=bug))[0] == {("oracle", "tests")}
    untouched, _ = first("passes_untouched", M.TESTS, M.TestsDraft)
    assert blamed(_bundle(t, tests=untouched))[0] == {("noop", "tests")}
