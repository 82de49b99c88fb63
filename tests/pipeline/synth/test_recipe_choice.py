"""The composer honours each skill: a family is chosen by the tools and state kinds the skill
names before its category, a skill nothing fits is reported (never substituted), and every
step records what of its skill it uses (skill_fidelity)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.skill_fit import NoRecipeError, RepeatedFamilyError, SkillParts, solution_commands
from workbench.sandbox.task_toml import parse

BASE = "workbench/base:latest"
SEEDS = range(6)


def step(name: str, category: str, tools=(), consumes=(), produces=(), i: int = 0) -> PathStep:
    parts = SkillParts(tools=tuple(tools), consumes=tuple(consumes), produces=tuple(produces))
    return PathStep(f"{name}-id", name, category, f"{name} does its work.", f"sc-{i}", f"sc-{i + 1}", parts)


def plain(category: str, i: int = 1) -> PathStep:
    """A skill known by its category only."""
    return PathStep(f"plain-{category}-{i}", f"plain {category}", category, "Some work.", f"sc-{i}", f"sc-{i + 1}")


# A skill by one tool, in a category that would NOT give a family running it (so the tool decides),
# except where the category is the tool's own.
BY_TOOL = [
    ("jq", "log-analysis", ("jq",)),
    ("sqlite3", "text-processing", ("sqlite3",)),
    ("tar", "data-processing", ("tar",)),
    ("git", "file-operations", ("git",)),
    ("awk", "git", ("awk",)),
    ("sed", "databases", ("sed",)),
    ("make", "data-processing", ("make",)),
    ("chmod", "text-processing", ("chmod",)),
    ("diff", "databases", ("diff",)),
    ("sha256sum", "text-processing", ("sha256sum",)),
    ("xz", "archives-compression", ("xz",)),         # the packing family draws tar.xz for it
    ("uniq", "log-analysis", ("uniq",)),
    # Tools the base image gained for real skills (issue 12 item 4): each has a family that runs it.
    ("zstd", "text-processing", ("zstd",)),          # archive-recompress draws zstd for it
    ("curl", "databases", ("curl",)),
    ("openssl", "text-processing", ("openssl",)),
    ("setfacl", "databases", ("setfacl",)),          # shared-group-folder adds a reader's ACLs for it
    ("gpg", "text-processing", ("gpg",)),            # signed-drop-verify signs with gpg at image build for it
    ("ss", "databases", ("ss",)),                    # loopback-api-probe waits for its socket with ss -ltn
]


@pytest.mark.parametrize("tool,category,tools", BY_TOOL, ids=[t for t, _, _ in BY_TOOL])
def test_a_skill_gets_a_family_whose_solution_runs_its_tool(tool, category, tools):
    for seed in SEEDS:
        task = synthesize_task([step(f"{tool}-skill", category, tools), plain("file-operations")], seed, BASE)
        first = task.fidelity[0]
        assert tool in first.tools_used and first.fidelity == "tool", (seed, first)
        solve = task.bundle.text("solution/solve.sh").split("# --- step 2")[0]
        assert tool in solution_commands(solve), (seed, first.recipe)


# Tools no family runs (not in the image), but state kinds some family works on (zstd now has a
# family of its own too; its kinds still lead to the archive families).
BY_KIND = [
    ("zstd", ("zstd", "tar"), ("tar-archive", "compressed-file"), "archives-compression"),
    ("crontab", ("crontab",), ("cron-schedule",), "scheduling-automation"),
    ("pip", ("pip",), ("dependency-manifest",), "dependency-management"),
    ("sqlite-only", (), ("sqlite-database",), "databases"),
    ("git-history", (), ("git-history",), "git"),
]


@pytest.mark.parametrize("name,tools,kinds,family_category", BY_KIND, ids=[n for n, *_ in BY_KIND])
def test_a_skill_whose_tool_no_family_runs_gets_a_family_of_its_state_kinds(name, tools, kinds, family_category):
    for seed in SEEDS:
        task = synthesize_task([step(name, "text-processing", tools, consumes=kinds), plain("file-operations")],
                               seed, BASE)
        first = task.fidelity[0]
        assert R.REGISTRY[first.recipe].category == family_category, (seed, first)
        assert first.fidelity in ("tool", "artifact") and set(first.kinds_used) <= set(kinds), first
        assert first.kinds_used or first.tools_used, first


def test_zstd_skill_is_told_apart_from_a_log_skill():
    """The issue's example: a zstd recompression skill got tasks with no compression at all."""
    zstd = step("recompress-to-zstd", "archives-compression", ("zstd", "gzip", "find"), consumes=("compressed-file",))
    recipes = {synthesize_task([zstd, plain("log-analysis")], s, BASE).recipes[0] for s in SEEDS}
    assert recipes <= {r.name for r in R.by_category("archives-compression")}, recipes


def test_a_skill_that_no_family_fits_is_reported_not_replaced():
    # (gpg was the example until the image got gnupg: signed-drop-verify runs it now)
    kube = step("roll-out-with-kubectl", "security-permissions", ("kubectl", "helm"), consumes=("container-image",))
    with pytest.raises(NoRecipeError) as err:
        synthesize_task([plain("databases", 0), kube], 1, BASE)
    msg = str(err.value)
    assert msg.startswith("no offline recipe for roll-out-with-kubectl: needs ")
    assert "kubectl" in msg and "container-image" in msg
    assert err.value.skill_name == "roll-out-with-kubectl"


def test_plumbing_alone_is_no_evidence_and_falls_back_to_the_category():
    """A skill whose only tools are shell plumbing (cat, ls, echo) says nothing: its category's
    families are used, and the step says so ("category-only")."""
    cats = step("list-things", "git", ("cat", "ls", "echo", "apt-get"))
    task = synthesize_task([cats, plain("file-operations")], 2, BASE)
    assert R.REGISTRY[task.recipes[0]].category == "git"
    assert task.fidelity[0].fidelity == "category-only" and task.fidelity[0].tools_used == ()


def test_a_skill_with_no_evidence_and_no_known_category_is_reported():
    """An 'uncategorized' skill whose text names no tool or state kind: nothing says which family
    would honour it, so none is substituted (it used to become a file-operations task)."""
    vague = step("be-a-better-writer", "uncategorized")
    with pytest.raises(NoRecipeError, match=r"^no offline recipe for be-a-better-writer: needs nothing a recipe knows"
                                            r" \(no distinctive tools or state kinds, and category 'uncategorized'\)$"):
        synthesize_task([vague, plain("git")], 1, BASE)


JQ_SKILL_MD = """---
name: jq-reshape
description: Reshape JSON Lines records with jq.
---
```bash
jq -r -s 'sort_by(.id)[] | [.id, .name] | @csv' records.jsonl > out.csv
```
"""


def test_instruction_lists_only_the_skills_a_step_exercises_and_how():
    """Issue 24 item 4: "Skills in play" names a skill only where a step scores 2 on the rubric (here
    the jq family runs the documented `jq -r`), and says which step uses it and how; a skill the step
    only shares a tool with (jq, undocumented) or serves by category is connective: no claim."""
    documented = replace(step("jq-reshape", "data-processing", ("jq",)),
                         parts=SkillParts(tools=("jq",), body=JQ_SKILL_MD))
    task = synthesize_task([documented, plain("text-processing")], 4, BASE)
    assert [f.score for f in task.fidelity] == [2, 0]
    instruction = task.bundle.text("instruction.md")
    listed = [ln for ln in instruction.splitlines() if ln.startswith("- **")]
    assert listed == ["- **jq-reshape** (data-processing), used in step 1 (`jq` as its SKILL.md documents it): "
                      "jq-reshape does its work."]
    assert "plain text-processing" not in instruction     # served by category alone: not claimed as exercised

    undocumented = step("jq-reshape", "data-processing", ("jq",))     # shares the tool, teaches nothing checkable
    task = synthesize_task([undocumented, plain("text-processing")], 4, BASE)
    assert task.fidelity[0].fidelity == "tool" and task.fidelity[0].score == 1
    assert "**jq-reshape**" not in task.bundle.text("instruction.md")
    assert not any(ln.startswith("- **") for ln in task.bundle.text("instruction.md").splitlines())


def test_skill_fidelity_is_written_into_task_toml():
    steps = [step("jq-reshape", "data-processing", ("jq",)), step("db-load", "databases", ("sqlite3",), i=1),
             plain("git", 2)]
    task = synthesize_task(steps, 5, BASE)
    meta = parse(task.bundle.text("task.toml")).metadata
    got = [f.model_dump() for f in meta.skill_fidelity]
    assert got == [f.as_dict() for f in task.fidelity]
    assert [f["skill_id"] for f in got] == ["jq-reshape-id", "db-load-id", "plain-git-2"]
    assert [f["recipe"] for f in got] == task.recipes
    assert got[0]["fidelity"] == "tool" and got[0]["tools_used"] == ["jq"]
    assert got[2]["fidelity"] == "category-only"
    # every step carries its rubric score and evidence (no SKILL.md text here: a shared tool is 1)
    assert [f["score"] for f in got] == [1, 1, 0]
    assert got[0]["evidence"]["via"] == "tool" and got[0]["evidence"]["uses"] == "jq"
    assert got[2]["evidence"] == {"via": "none", "uses": "", "skill_quote": "", "solution_quote": "",
                                  "note": "nothing of the skill in this step"}


def test_parts_choose_the_family_but_the_same_path_still_gives_the_same_bytes():
    steps = [step("jq-reshape", "data-processing", ("jq",)), step("db-load", "databases", ("sqlite3",), i=1)]
    a, b = synthesize_task(steps, 9, BASE), synthesize_task(list(steps), 9, BASE)
    assert a.bundle.files == b.bundle.files and a.fidelity == b.fidelity


def test_solution_commands_skip_heredocs_quotes_and_own_functions():
    solve = """norm() { tr -d ' '; }
jq -r '.[] | map(.x) | select(.y)' in.json | sort -u > out.txt   # grep in a comment
python3 - <<'PY'
import os
PY
tar -C /tmp -cJf x.tar.xz top && X=1 awk '{print}' f | norm
echo "$(( i + 1 ))" $(wc -l < f)"""
    assert solution_commands(solve) == {"tr", "jq", "sort", "python3", "tar", "xz", "awk", "echo", "wc"}


def test_the_composer_rules_hold_among_the_fitting_families():
    """Two sqlite3 skills in a row get two different sqlite families (no repeat when another fits),
    each reading what the step before left."""
    steps = [step("db-one", "databases", ("sqlite3",)), step("db-two", "databases", ("sqlite3",), i=1)]
    for seed in SEEDS:
        task = synthesize_task(steps, seed, BASE)
        assert all("sqlite3" in f.tools_used for f in task.fidelity), task.fidelity
        assert task.recipes[0] != task.recipes[1], task.recipes


# ---------------------------------------------------------------- no family twice in a row (issue 12 item 4)
def test_skills_that_fit_only_one_family_on_consecutive_steps_fail_with_the_reason():
    # comm is run by line-diff alone: a second such skill right after would repeat it.
    steps = [step("comm-a", "text-processing", ("comm",)), step("comm-b", "text-processing", ("comm",), i=1)]
    with pytest.raises(RepeatedFamilyError, match=r"^comm-b fits only line-diff, which step 1 already uses"):
        synthesize_task(steps, 0, BASE)


def test_a_one_skill_path_that_only_one_family_serves_is_a_one_step_task():
    # a one-skill path is doubled into two steps; line-diff alone runs comm, so not twice: one step
    task = synthesize_task([step("comm-only", "text-processing", ("comm",))], 0, BASE)
    assert task.recipes == ["line-diff"]
    assert [f.fidelity for f in task.fidelity] == ["tool"]
    assert "step 2" not in task.bundle.text("solution/solve.sh")
    # a skill two families serve still gets two steps, of two families
    two = synthesize_task([step("jq-only", "data-processing", ("jq",))], 0, BASE)
    assert len(two.recipes) == 2 and two.recipes[0] != two.recipes[1]


def test_a_family_serves_at_most_two_steps_of_a_task():
    only_diff = [step(f"diff-{i}", "text-processing", ("diff",), i=i) for i in (0, 2, 4)]
    steps = [only_diff[0], step("make-1", "build-tools", ("make",), i=1), only_diff[1],
             step("zstd-3", "archives-compression", ("zstd",), i=3), only_diff[2]]
    with pytest.raises(RepeatedFamilyError, match=r"^diff-4 fits only line-diff, which steps 1 and 3 already use"):
        synthesize_task(steps, 0, BASE)


@pytest.mark.parametrize("tools", [("tar",), ("jq",), ("git",), ("zip",)])
def test_a_path_with_alternatives_never_repeats_a_family(tools):
    steps = [step(f"{tools[0]}-{i}", "data-processing", tools, i=i) for i in range(4)]
    for seed in SEEDS:
        recipes = synthesize_task(steps, seed, BASE).recipes
        assert all(a != b for a, b in zip(recipes, recipes[1:])), (seed, recipes)
        assert max(recipes.count(r) for r in recipes) <= 2, (seed, recipes)


def test_a_step_leaves_the_next_steps_only_family_to_it():
    # diff+wc fits line-diff, regex-extract and http-request-compose; the next skill fits line-diff only.
    steps = [step("diff-wc", "text-processing", ("diff", "wc")), step("comm", "text-processing", ("comm",), i=1)]
    for seed in SEEDS:
        assert synthesize_task(steps, seed, BASE).recipes[1] == "line-diff", seed


def test_a_refusal_is_deterministic():
    steps = [step("comm-a", "text-processing", ("comm",)), step("comm-b", "text-processing", ("comm",), i=1)]
    msgs = set()
    for _ in range(2):
        with pytest.raises(RepeatedFamilyError) as exc:
            synthesize_task(steps, 3, BASE)
        msgs.add(str(exc.value))
    assert len(msgs) == 1
