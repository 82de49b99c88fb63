"""The fidelity rubric (0/1/2) and its offline scorer: a 2 only for the skill's own script or a
documented command line of the tool it is about, with quotes that exist in both texts; a generic
or set-up tool is at most 1; unrelated is 0."""
from __future__ import annotations

from dataclasses import replace

import pytest

from analysis.synth_fidelity import rubric_figures
from pipeline.synth.fidelity_rubric import quotes_exist, score_step, teaching

SKILL = """---
name: zstd-archiver
description: Compress build outputs with zstd and check them.
---
Install it first:

```bash
apt-get install -y zstd
git clone https://example.invalid/tools.git
```

Compress at a high level, then test the frame:

```bash
$ zstd -19 --long=27 build.tar -o build.tar.zst
zstd -t build.tar.zst
python3 scripts/manifest.py build.tar.zst
```

Stream an old gzip file through it: `gzip -dc old.gz | zstd -19 -q -o old.zst`.
"""
TEACH = teaching(SKILL, "zstd-archiver", "Compress build outputs with zstd and check them.")


def test_a_documented_command_of_the_tool_the_skill_is_about_scores_2_with_verbatim_quotes():
    assert TEACH.about == ("zstd",) and "scripts/manifest.py" in TEACH.scripts
    solve = "cd /app\nzstd -19 -q out.tar -o out.tar.zst\n"
    got = score_step(solve, TEACH, shared_tools=["zstd"])
    assert (got.score, got.via, got.uses) == (2, "command", "zstd")
    assert got.solution_quote == "zstd -19 -q out.tar -o out.tar.zst"
    assert got.skill_quote == "zstd -19 --long=27 build.tar -o build.tar.zst"   # the `$ ` prompt is not quoted
    assert quotes_exist(got, SKILL, solve)
    # a command after a pipe, on a continued line, and the quote is the line that runs it
    solve = "# zstd -19 in a comment is no command\ngzip -dc a.gz \\\n  | zstd -19 -o a.zst\n"
    got = score_step(solve, TEACH)
    assert got.score == 2 and got.solution_quote == "gzip -dc a.gz \\"


def test_the_bundled_script_scores_2_and_names_the_script():
    got = score_step("python3 /skills/zstd-archiver/scripts/manifest.py a.zst\n", TEACH)
    assert (got.score, got.via, got.uses) == (2, "script", "scripts/manifest.py")
    assert got.skill_quote == "python3 scripts/manifest.py build.tar.zst" and got.skill_quote in SKILL


def test_a_2_needs_quotes_that_exist_verbatim():
    solve = "zstd -19 -o x.zst x\n"
    got = score_step(solve, TEACH)
    assert got.score == 2 and quotes_exist(got, SKILL, solve)
    assert not quotes_exist(replace(got, skill_quote="zstd -19 --ultra x"), SKILL, solve)      # not in SKILL.md
    assert not quotes_exist(replace(got, solution_quote="zstd -19 -o y.zst y"), SKILL, solve)  # not in solve.sh
    assert not quotes_exist(replace(got, skill_quote=""), SKILL, solve)
    # the scorer itself never gives a 2 whose SKILL.md quote is not in the text it read
    forged = replace(TEACH, body=SKILL.replace("zstd -19", "zstd -3"))
    assert score_step(solve, forged, shared_tools=["zstd"]).score == 1


def test_a_set_up_or_generic_tool_is_at_most_1_and_unrelated_is_0():
    assert score_step("apt-get install -y zstd\n", TEACH).score == 0          # the installer line is set-up
    assert score_step("git clone /srv/tools.git t\n", TEACH).score == 0       # so is fetching with git
    assert score_step("zstd -d a.zst\n", TEACH, shared_tools=["zstd"]).score == 1   # zstd, but no documented use
    assert score_step("cp a b\n", TEACH, shared_kinds=["compressed-file"]).score == 1
    got = score_step("sort -u a > b\n", TEACH)
    assert (got.score, got.via) == (0, "none")
    # a general-purpose tool most of a skill's lines run is not what it is about unless named
    sorting = teaching("```bash\nsort -t, -k2 a.csv\nsort -u b.txt\n```\n", "tidy-reports", "Tidy the reports.")
    assert sorting.about == () and score_step("sort -u x > y\n", sorting, shared_tools=["sort"]).score == 1
    named = teaching("```bash\nsort -t, -k2 a.csv\n```\n", "sort-csv-by-column", "Sort a CSV by one column.")
    assert named.about == ("sort",) and score_step("sort -t, -k3 x.csv\n", named).score == 2


def test_the_tool_in_the_skills_name_is_what_it_is_about():
    """The issue's example: the tmux skill (send-keys, capture-pane) shows `git rebase -i` as a program
    to drive; a step that runs git is not an exercise of it (at most 1), one that drives tmux is."""
    desc = "Drive interactive programs such as vim or git rebase -i from tmux."
    body = ("```bash\ntmux new-session -d -s edit\ntmux send-keys -t edit 'git rebase -i HEAD~3' Enter\n"
            "tmux capture-pane -p -t edit\ngit rebase -i HEAD~3\n```\n")
    t = teaching(body, "using-tmux-for-interactive-commands", desc, ("tmux", "git"))
    assert t.about == ("tmux",)
    assert score_step("git rebase -i main\n", t, shared_tools=["git"]).score == 1
    assert score_step("tmux capture-pane -p -t work > /app/out/screen.txt\n", t).score == 2


def test_prose_and_sql_in_code_are_no_tools():
    body = ("---\nname: sqlite-dedupe\ndescription: Find duplicate rows in SQLite; it cannot fix them.\n---\n"
            "```\nSELECT email, count(*) FROM users GROUP BY email;\n```\n"
            "It says `cannot open database` when the path is wrong. Run `sqlite3 -box app.db '.tables'`.\n")
    t = teaching(body, "sqlite-dedupe", "Find duplicate rows in SQLite; it cannot fix them.", ("sqlite3",))
    assert t.about == ("sqlite3",) and [c.tool for c in t.commands] == ["sqlite3"]
    assert score_step("cannot open database\n", t).score == 0


def test_rubric_figures_count_scores_and_refuse_an_unknown_one():
    fig = rubric_figures([[{"score": 2}, {"score": 1}], [{"score": 0}, {"fidelity": "tool"}]])
    assert fig.counts == {2: 1, 1: 1, 0: 1} and fig.unscored == 1 and abs(fig.shares[2] - 1 / 3) < 1e-9
    with pytest.raises(ValueError, match="task 1, step 3: rubric score 5 is not 0, 1 or 2"):
        rubric_figures([[{"step": 3, "score": 5}]])


def _demo_step(category: str, name: str):
    from pathlib import Path

    from pipeline.synth.compose import PathStep
    from pipeline.synth.skill_fit import parts_from_skill
    from workbench.config import DEMO_CORPUS
    body = (Path(DEMO_CORPUS) / category / name / "SKILL.md").read_text(encoding="utf-8")
    desc = next(ln.split(":", 1)[1].strip() for ln in body.splitlines() if ln.startswith("description:"))
    return PathStep(name, name, category, desc, "a", "b", parts_from_skill(body)), body


def test_an_offline_task_on_a_demo_skill_carries_scores_and_evidence_in_its_metadata():
    """The bundled jq skill: the json-convert step runs its documented `jq -s -r` (2, both quotes
    verbatim, listed under the skills with how it is used); the table-filter-sort step only shares
    a state kind or tool (1: connective, not listed). Packages off: with them on, the skill's own documented
    jq command is its step (a command exercise, tests/pipeline/synth/exercise/test_command_step.py)."""
    from pipeline.synth.compose import synthesize_task
    from workbench.sandbox.task_toml import parse
    step, skill_md = _demo_step("data-processing", "jq-flatten-nested-json")
    exercised = parse(synthesize_task([step], 2, "workbench/base:latest").bundle.text("task.toml")).metadata
    assert (exercised.skill_fidelity[0].recipe, exercised.skill_fidelity[0].score) == ("command-exercise", 2)
    task = synthesize_task([step], 2, "workbench/base:latest", ship_skills=False)
    meta = parse(task.bundle.text("task.toml")).metadata.skill_fidelity
    assert [(f.recipe, f.score) for f in meta] == [("json-convert", 2), ("table-filter-sort", 1)]
    ev = meta[0].evidence
    assert ev.via == "command" and ev.uses == "jq"
    assert ev.skill_quote in skill_md and ev.solution_quote in task.bundle.text("solution/solve.sh")
    assert meta[1].evidence.via in ("tool", "kind") and meta[1].evidence.skill_quote == ""
    listed = [ln for ln in task.bundle.text("instruction.md").splitlines() if ln.startswith("- **")]
    assert listed == [f"- **jq-flatten-nested-json** (data-processing), used in step 1 (`jq` as its SKILL.md "
                      f"documents it): {step.description.split('. ')[0]}."]


def test_a_shipped_script_counts_when_skill_md_names_it_from_its_repository_root():
    body = "```bash\npython3 skills/hpc/doctor/scripts/doctor.py --json\n```\n"
    teach = teaching(body, "doctor")
    hit = score_step("python3 /skills/doctor/scripts/doctor.py --json > /app/out/d.json\n", teach)
    assert (hit.score, hit.via) == (2, "script")
    other = score_step("python3 /skills/doctor/tools/doctor.py --json\n", teach)   # another file of that name
    assert other.score < 2
