"""The scripted evolution double's operators on the artifacts of an LLM-built demo task (no Docker:
what the variants hold; test_llm_operator.py verifies them in containers)."""
from __future__ import annotations

import shutil

import pytest

from pipeline.evolve.llm_scripted import Artifacts, NoScriptedVariant, ScriptedEvolution, easier, harder, switched
from pipeline.synth.llm import render
from pipeline.synth.llm.scripted import scripted_task
from pipeline.verify.rubric import check_rubric
from tests.pipeline.synth.llm.demo_paths import tool_paths
from workbench.workspace import Workspace


@pytest.fixture(scope="module")
def parent(graph_workspace_template, tmp_path_factory):
    root = tmp_path_factory.mktemp("scripted-evolve") / "ws"
    shutil.copytree(graph_workspace_template, root)
    [(pid, ctx)] = tool_paths(Workspace.open(root), 1).items()
    t = scripted_task(ctx)
    return ctx, Artifacts(t.manifest, t.instruction, t.solution, t.tests)


def _rubric(a: Artifacts):
    bundle = render.bundle_from_artifacts(name="workbench/v", category="data-processing", difficulty="medium",
                                          manifest=a.manifest, instruction=a.instruction, solution=a.solution,
                                          tests=a.tests, base_image="base")
    return check_rubric(bundle)


def _n_steps(a: Artifacts) -> int:
    return a.instruction.text.count("## Step ")


def test_harder_adds_one_checked_step_then_another_then_says_it_has_none_left(parent):
    _, a = parent
    d1, change = harder(a)
    assert _n_steps(d1) == _n_steps(a) + 1 and "SHA256SUMS" in change
    assert "def test_s3_manifest" in d1.tests.test_py and "/app/out/SHA256SUMS" in d1.solution.solve_sh
    assert d1.solution.solve_sh.startswith(a.solution.solve_sh.rstrip("\n"))   # the parent's work, then more
    assert _rubric(d1).passed, _rubric(d1).reason
    d2, change = harder(d1)
    assert _n_steps(d2) == _n_steps(a) + 2 and "SIZES.tsv" in change and _rubric(d2).passed
    with pytest.raises(NoScriptedVariant, match="every extra output"):
        harder(d2)


def test_easier_drops_the_last_step_then_an_edge_case(parent):
    _, a = parent
    e1, change = easier(a)
    assert _n_steps(e1) == 1 and change.startswith("dropped step 2")
    assert "test_s2_" not in e1.tests.test_py and "# --- step 2" not in e1.solution.solve_sh
    assert "Each of the" not in e1.instruction.text       # no "Each of the 1 steps"
    assert _rubric(e1).passed, _rubric(e1).reason
    e2, change = easier(e1)
    assert e2.tests.test_py.count("def test_") == e1.tests.test_py.count("def test_") - 1
    assert "dropped the check" in change and _rubric(e2).passed, _rubric(e2).reason


def test_a_context_switch_serves_one_step_with_another_family_and_keeps_the_step_count(parent):
    ctx, a = parent
    b1, change = switched(ctx, [("context_switch", 1)], seed=0, base_image="base")
    assert "instead of" in change and _n_steps(b1) == _n_steps(a) and b1.solution.solve_sh != a.solution.solve_sh
    assert _rubric(b1).passed
    # a switch of a harder variant keeps its extra step
    d1b1, _ = switched(ctx, [("harder", 1), ("context_switch", 1)], seed=0, base_image="base")
    assert _n_steps(d1b1) == _n_steps(a) + 1 and "SHA256SUMS" in d1b1.instruction.text


def test_unknown_faults_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown fault.*sideways.*garbage"):
        ScriptedEvolution(None, {"t__d1": "sideways"})


def test_a_repair_asked_after_a_restart_is_answered_from_the_stored_parent(parent, tmp_path):
    """A resumed run may ask a fresh double to repair a variant it never made: it reads the parent
    from the workspace and answers the variant's correct artifact."""
    from workbench.llm.prompts import load_template
    from workbench.sandbox.bundle import write_bundle
    ctx, a = parent
    ws = Workspace.open(tmp_path / "ws")
    bundle = render.bundle_from_artifacts(name="workbench/p", category="data-processing", difficulty="medium",
                                          manifest=a.manifest, instruction=a.instruction, solution=a.solution,
                                          tests=a.tests, base_image="base", metadata={"path_id": ctx.path_id})
    write_bundle(bundle, ws.tasks_dir / "p1")
    values = dict.fromkeys(("check", "reason", "evidence", "current", "history", "context"), "x")
    body = {"messages": load_template("synth_repair_solution").render(path_id="evolve:p1__d1", **values)}
    reply = ScriptedEvolution(ws).answer(body)
    assert reply == {"solve_sh": harder(a)[0].solution.solve_sh}
