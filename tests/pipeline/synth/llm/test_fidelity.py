"""What each step of an LLM-built task uses of its skill, read from solve.sh and the handed files."""
from __future__ import annotations

from pipeline.synth.llm.fidelity import solve_parts, step_fidelities
from pipeline.synth.llm.models import Plan
from tests.pipeline.synth.llm.paid_orders import AWK_BODY, PATH, PLAN, SOLVE


def test_each_step_is_judged_on_its_own_part_of_solve_sh():
    fid = step_fidelities(PATH, Plan.model_validate(PLAN), SOLVE, {"/app/out/paid.json", "/app/out/totals.csv"})
    assert [(f.step, f.recipe, f.fidelity, f.tools_used) for f in fid] == [
        (1, "llm:jq-filter", "tool", ("jq",)), (2, "llm:awk-report", "tool", ("awk", "sort"))]
    assert fid[0].kinds_used == ("json-document",) and fid[1].kinds_used == ("csv-table", "json-document")


def test_an_llm_built_step_gets_the_rubric_score_and_evidence_as_offline_ones_do():
    """Step 2 runs the awk-report skill's documented `awk -F,` (2, quotes verbatim in both texts);
    step 1 runs jq, but not as its SKILL.md documents it (no shared flag or subcommand): 1."""
    fid = step_fidelities(PATH, Plan.model_validate(PLAN), SOLVE, {"/app/out/paid.json", "/app/out/totals.csv"})
    assert [(f.score, f.evidence["via"]) for f in fid] == [(1, "tool"), (2, "command")]
    ev = fid[1].evidence
    assert ev["uses"] == "awk" and ev["skill_quote"] in AWK_BODY and ev["solution_quote"] in SOLVE
    assert [f["score"] for f in (x.as_dict() for x in fid)] == [1, 2]     # what task.toml keeps


def test_a_step_whose_part_runs_none_of_its_skills_tools_says_so():
    solve = "#!/bin/bash\n# step 1: filter\njq . orders.json > a.json\n# step 2: copy\ncp a.json b.json\n"
    plan = Plan.model_validate({**PLAN, "handoffs": [], "initial_files": []})
    fid = step_fidelities(PATH, plan, solve)
    assert [f.fidelity for f in fid] == ["tool", "category-only"]


def test_without_step_markers_every_step_is_judged_on_the_whole_script():
    assert solve_parts("jq . a\nawk 1 b\n", 2) == {1: "jq . a\nawk 1 b\n", 2: "jq . a\nawk 1 b\n"}
    parts = solve_parts("set -e\n# --- step 1 (x) ---\njq . a\n# Step 2: y\nawk 1 b\n", 2)
    assert "jq" in parts[1] and "awk" not in parts[1] and "awk" in parts[2]
