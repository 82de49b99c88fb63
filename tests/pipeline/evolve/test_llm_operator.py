"""LlmOperator on an LLM-built demo task: the real client over HTTP against the replay server
(the scripted evolution and synthesis doubles), real Docker builds, Sessions and verification."""
from __future__ import annotations

import shutil
import tomllib
from types import SimpleNamespace

import pytest

from pipeline.evolve.llm_operator import EVOLVE, LlmOperator
from pipeline.evolve.llm_scripted import ScriptedEvolution
from pipeline.evolve.models import NoVariant, ParentTask, variant_id
from pipeline.synth.llm import render
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.scripted import ScriptedSynthesis, scripted_task
from pipeline.synth.llm.synthesizer import LLMSynthesizer
from pipeline.synth.protocol import SynthTools
from tests.pipeline.synth.llm.demo_paths import tool_paths
from tests.workbench.llm.conftest import make_settings
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name
from workbench.workspace import Workspace

CRASH = "harder"          # the operator whose variant n=2 gets a crashing first solve.sh
TEST_BUG = "easier"       # n=2: its first tests hold a bug, fixed by the tests' repair


def _ws(template, tmp_path_factory, name: str) -> Workspace:
    root = tmp_path_factory.mktemp(name) / "ws"
    shutil.copytree(template, root)
    return Workspace.open(root)


def _serve(ws, faults):
    """A replay server with the evolution double first, the synthesis double after."""
    evolution = ScriptedEvolution(ws, faults, base_image=base_image_name())
    synthesis = ScriptedSynthesis(ws, base_image=base_image_name())
    srv = ReplayServer().start()
    srv.add_rule(evolution.rule())
    srv.add_rule(synthesis.rule())
    caller = LLMCaller(LLMClient(make_settings(srv), log=CallLog(ws.db)))
    return srv, caller, evolution


@pytest.fixture(scope="module")
def built(graph_workspace_template, tmp_path_factory):
    """One LLM-built parent (two steps, made by the LLM synthesizer against the scripted model, accepted)."""
    from workbench.sandbox.engine import Engine
    ws = _ws(graph_workspace_template, tmp_path_factory, "evolve-llm")
    [(pid, ctx)] = tool_paths(ws, 1).items()
    parent_id = "llmparent"
    faults = {variant_id(parent_id, CRASH, 2): "crashing_solution", variant_id(parent_id, TEST_BUG, 2): "test_bug"}
    srv, caller, evolution = _serve(ws, faults)
    engine = Engine()
    try:
        out = LLMSynthesizer(caller, model="test-model", solve_timeout_s=30).synthesize(
            ctx, 0, SynthTools(engine=engine, base_image=base_image_name()))
        assert out.task is not None and out.error is None and all(c.passed for c in out.checks), out.error
        parent = ParentTask(task_id=parent_id, bundle=out.task.bundle, record={"provider": "llm", "path_id": pid},
                            pass_rate=0.75, rollouts=4)
        op = LlmOperator(caller, engine=engine, base_image=base_image_name(), ws=ws, solve_timeout_s=30)
        yield SimpleNamespace(ws=ws, parent=parent, op=op, evolution=evolution, caller=caller, pid=pid)
    finally:
        caller.close()
        srv.stop()


def _steps(bundle) -> int:
    return bundle.text("instruction.md").count("\n## Step ")


def _calls_of(ws, item: str) -> dict[str, int]:
    with ws.db.read() as con:
        rows = con.execute("SELECT stage, count(*) FROM llm_calls WHERE item = ? GROUP BY stage", [item]).fetchall()
    return dict(rows)


@pytest.mark.docker
@pytest.mark.parametrize("operator,step_delta", [("harder", 1), ("context_switch", 0), ("easier", -1)])
def test_each_operator_makes_a_variant_that_passes_verification(built, operator, step_delta):
    draft = built.op.make(built.parent, operator, 1)
    vid = variant_id(built.parent.task_id, operator, 1)
    checks = {c["name"]: c["passed"] for c in draft.details["checks"]}
    assert checks == dict.fromkeys(["build", "noop", "oracle", "rubric", "decontam", "judge"], True), \
        [(c["name"], c["reason"]) for c in draft.details["checks"]]
    assert draft.details["error"] is None and draft.details["attempts"] == []
    assert (draft.task_id, draft.parent_id, draft.operator, draft.provider) == (vid, "llmparent", operator, "llm")
    assert draft.change.strip() and "\n" not in draft.change
    assert _steps(draft.bundle) == _steps(built.parent.bundle) + step_delta == draft.n_steps
    meta = tomllib.loads(draft.bundle.text("task.toml"))
    assert meta["task"]["name"] == tomllib.loads(built.parent.bundle.text("task.toml"))["task"]["name"] + f"-{vid[-2:]}"
    assert meta["metadata"]["provider"] == "llm" and meta["metadata"]["path_id"] == built.pid
    assert (meta["metadata"]["parent_id"], meta["metadata"]["operator"]) == ("llmparent", operator)
    assert operator in meta["metadata"]["tags"]
    # per path step the variant keeps, what of its skill it uses (an easier variant keeps one of the two)
    fidelity = draft.details["skill_fidelity"]
    assert [f["step"] for f in fidelity] == list(range(1, min(2, draft.n_steps) + 1)) == \
        [f["step"] for f in meta["metadata"]["skill_fidelity"]]
    assert len(draft.recipes) == len(fidelity)
    parent_solve = built.parent.bundle.text("solution/solve.sh")
    if operator == "harder":      # one more checked output the parent's solution never writes
        assert "def test_s3_manifest" in draft.bundle.text("tests/test_outputs.py")
        assert draft.bundle.text("solution/solve.sh").startswith(parent_solve.rstrip("\n"))
    elif operator == "easier":    # the parent's last step and its tests are gone
        assert "test_s2_" not in draft.bundle.text("tests/test_outputs.py")
    else:                         # another family (tool) for one step
        assert draft.bundle.text("solution/solve.sh") != parent_solve and "instead of" in draft.change
    # nothing written by the operator: no task folder; its calls are accounted to the variant
    assert not (built.ws.tasks_dir / vid).exists()
    built.caller.client.log.flush()
    calls = _calls_of(built.ws, vid)
    assert calls.get(EVOLVE) == 1 and calls.get("task_judge") == 1, calls


@pytest.mark.docker
@pytest.mark.parametrize("operator,artifact,check,stage", [
    (CRASH, "solution", "solve", "synth_repair_solution"),
    (TEST_BUG, "tests", "oracle", "synth_repair_tests")])
def test_a_faulty_reply_is_repaired_at_the_artifact_at_fault_only(built, operator, artifact, check, stage):
    draft = built.op.make(built.parent, operator, 2)
    vid = variant_id(built.parent.task_id, operator, 2)
    assert draft.details["error"] is None and all(c["passed"] for c in draft.details["checks"]), draft.details
    [attempt] = draft.details["attempts"]
    assert (attempt["artifact"], attempt["check"], attempt["outcome"]) == (artifact, check, "fixed")
    calls = built.evolution.calls_for(vid)
    assert calls[stage] == 1
    assert sum(n for s, n in calls.items() if s.startswith("synth_repair_") and s != stage) == 0, calls


# --- without Docker: replies that are no variant --------------------------------------------------

@pytest.fixture
def cheap(graph_workspace_template, tmp_path_factory):
    """A parent laid out from the scripted LLM artifacts (not verified: these replies never reach Docker)."""
    ws = _ws(graph_workspace_template, tmp_path_factory, "evolve-garbage")
    [(pid, ctx)] = tool_paths(ws, 1).items()
    t = scripted_task(ctx, base_image=base_image_name())
    bundle = render.bundle_from_artifacts(name="workbench/llm-parent", category="data-processing", difficulty="medium",
                                          manifest=t.manifest, instruction=t.instruction, solution=t.solution,
                                          tests=t.tests, base_image=base_image_name(), metadata={"path_id": pid})
    parent = ParentTask(task_id="p1", bundle=bundle, record={"provider": "llm", "path_id": pid}, pass_rate=0.0,
                        rollouts=4)
    faults = {"p1__e1": "garbage", "p1__d1": "empty_change"}
    srv, caller, evolution = _serve(ws, faults)
    yield SimpleNamespace(ws=ws, parent=parent, evolution=evolution,
                          op=LlmOperator(caller, engine=None, base_image=base_image_name(), ws=ws))
    caller.close()
    srv.stop()


@pytest.mark.parametrize("operator,said", [
    ("easier", "evolve_task (easier) of p1: the reply is not valid JSON for its schema"),
    ("harder", "change is empty")])
def test_a_reply_that_is_no_variant_is_a_clear_error_and_nothing_is_built_or_stored(cheap, operator, said):
    with pytest.raises(NoVariant, match="evolve_task") as info:
        cheap.op.make(cheap.parent, operator, 1)     # engine=None: any Docker use would raise something else
    assert said in str(info.value)
    vid = variant_id("p1", operator, 1)
    assert set(cheap.evolution.calls_for(vid)) == {EVOLVE}     # no repair or judge call follows
    assert not (cheap.ws.tasks_dir / vid).exists()
    with cheap.ws.db.read() as con:
        assert con.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


def test_an_unknown_operator_is_refused_before_any_call(cheap):
    with pytest.raises(ValueError, match="operator 'sideways'"):
        cheap.op.make(cheap.parent, "sideways", 1)
    assert not cheap.evolution.calls


def test_a_large_parent_file_travels_as_kept_and_comes_back_with_the_parents_bytes():
    from pipeline.evolve.llm_operator import KEPT, SHOWN_CAP, excerpts, shown_manifest, with_kept_files
    from pipeline.synth.llm.models import EnvManifest, FileSpec
    big = "\n".join(f"row {i},{i * i}" for i in range(2000))
    assert len(big) > SHOWN_CAP
    parent = EnvManifest(files=[FileSpec(path="/app/input/big.csv", content=big),
                                FileSpec(path="/app/input/small.txt", content="hello\n")])
    shown = shown_manifest(parent)
    assert [f.content for f in shown.files] == [KEPT, "hello\n"]
    assert "/app/input/big.csv" in excerpts(parent) and "row 19," in excerpts(parent) and "row 20," not in excerpts(parent)
    reply = EnvManifest(files=[FileSpec(path="/app/input/big.csv", content=KEPT),
                               FileSpec(path="/app/input/small.txt", content="changed\n")], setup_commands=["true"])
    back = with_kept_files(reply, parent)
    assert [f.content for f in back.files] == [big, "changed\n"] and back.setup_commands == ["true"]
    with pytest.raises(ValueError, match=r"files\[0\] \('/app/nowhere.csv'\) is marked <<unchanged>>, but the parent"):
        with_kept_files(EnvManifest(files=[FileSpec(path="/app/nowhere.csv", content=KEPT)]), parent)
