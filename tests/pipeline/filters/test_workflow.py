"""Workflow rule: a skill needs at least two concrete steps."""
from __future__ import annotations

import textwrap

from pipeline.filters import workflow
from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome, ParsedSkill

RULE = "workflow.steps"


def make_skill(body: str) -> ParsedSkill:
    text = ("---\nname: demo-skill\ndescription: Find the commit that broke the build.\n---\n"
            + textwrap.dedent(body).lstrip("\n"))
    return build_skill(text, where="demo/SKILL.md", skill_key="demo", source_kind="folder",
                       source_path="demo", source_ref=None, package_files=["SKILL.md"],
                       content_hash="x" * 64)


def test_flags_vague_prose():
    skill = make_skill("""
        # Bisect helper

        This skill helps you figure out what went wrong in your repository. Look around,
        think about the history and use git to narrow things down until you find the culprit.
    """)
    res = workflow.structured_steps(skill)
    assert res.rule == RULE
    assert res.outcome == Outcome.FAIL
    assert "found 0 workflow step(s)" in res.evidence
    assert res.location == "SKILL.md body"


def test_flags_a_single_step():
    skill = make_skill("""
        # Bisect helper

        ## Steps
        1. Run `git bisect run ./test.sh` and read the result.
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    # extract_steps only reports lists of two or more, so the count shown is 0 here.
    assert "workflow step(s)" in res.evidence
    assert "at least 2 steps" in res.evidence


def test_flags_prose_with_one_numbered_remark_per_section():
    skill = make_skill("""
        # Bisect helper

        ## Background
        1. Bisecting needs a known good commit.

        ## Notes
        1. Mark skipped commits with `git bisect skip`.
    """)
    assert workflow.structured_steps(skill).outcome == Outcome.FAIL


def test_passes_two_step_numbered_workflow():
    skill = make_skill("""
        # Bisect helper

        ## Steps
        1. Start with `git bisect start HEAD v1.0`.
        2. Run `git bisect run ./test.sh` and note the first bad commit.
    """)
    res = workflow.structured_steps(skill)
    assert res.rule == RULE
    assert res.outcome == Outcome.PASS
    assert res.evidence.startswith("2 steps, first: Start with `git bisect start HEAD v1.0`.")


def test_passes_step_subheadings():
    skill = make_skill("""
        # Bisect helper

        ## Workflow

        ### Step 1: Mark the endpoints
        Run `git bisect start HEAD v1.0`.

        ### Step 2: Automate the test
        Run `git bisect run ./test.sh`.

        ### Step 3: Clean up
        Run `git bisect reset`.
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.PASS
    assert res.evidence.startswith("3 steps, first: Mark the endpoints")


def test_passes_bulleted_workflow_section():
    skill = make_skill("""
        # Bisect helper

        ## Workflow
        - Start bisecting with `git bisect start HEAD v1.0`.
        - Let `git bisect run ./test.sh` find the first bad commit.
        - Finish with `git bisect reset`.
    """)
    assert workflow.structured_steps(skill).outcome == Outcome.PASS


# --- CLI references: no step list, concrete commands -------------------------------------

def test_passes_a_cli_reference_with_commands_in_code_blocks():
    skill = make_skill("""
        # jq cookbook

        ## Pick fields
        ```bash
        jq '.items[] | {id, name}' data.json
        ```

        ## Filter and count
        ```bash
        jq '[.items[] | select(.active)] | length' data.json
        jq -r '.items[].name' data.json | sort | uniq -c
        ```
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.PASS, res.evidence
    assert res.evidence.startswith("a CLI reference: 3 concrete commands of jq")
    assert "jq '.items[] | {id, name}' data.json" in res.evidence
    first = skill.raw_text.splitlines().index("jq '.items[] | {id, name}' data.json") + 1
    assert res.location == f"SKILL.md:{first}"


def test_passes_a_table_of_subcommands_with_examples():
    skill = make_skill("""
        # gopass

        | Task | Command |
        | --- | --- |
        | Show a secret | `gopass show -c websites/example.org` |
        | Generate one | `gopass generate websites/new.org 24` |
        | Find entries | `gopass find example` |
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.PASS, res.evidence
    assert "3 concrete commands of gopass" in res.evidence


def test_passes_bare_command_list_items_of_the_tool_the_skill_installs():
    skill = make_skill("""
        # Convert documents to markdown

        Install it with:
        - go install github.com/example/mdconv/cmd/mdconv@latest

        Usage:
        - mdconv report.docx -o report.md
        - mdconv slides.pptx --images assets/ -o slides.md
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.PASS, res.evidence
    assert "2 concrete commands of mdconv" in res.evidence


def test_flags_scraped_fragments_with_broken_option_lists():
    skill = make_skill("""
        # Table extraction agent

        ## Installation
        Basic usage or getting-started notes:
        - ## Commandline Usage Examples
        - [-g] [-h] [-i] [-l] [-n] [-o <OUTFILE>] [-p <PAGES>] [-r] [-s
        - tabex [command] [options]
        - --version Show version information
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    assert "found 0 workflow step(s) and 0 concrete command(s)" in res.evidence


def test_flags_install_lines_without_any_use_of_the_tool():
    skill = make_skill("""
        # Icon generator

        ## Installation
        - pip install Pillow
        - git clone https://github.com/example/icon-gen.git
        ```bash
        npm install -g icon-gen
        icon-gen --help
        ```
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    assert "0 concrete command(s)" in res.evidence
    assert "only install/set-up lines besides (line" in res.evidence
    assert "pip install Pillow" in res.evidence


def test_prose_list_items_that_start_with_a_program_name_are_no_commands():
    skill = make_skill("""
        # Debugging mindset

        - find the smallest input that still fails
        - make sure the fix has a test
        - watch the logs while you reproduce
    """)
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    assert "0 concrete command(s)" in res.evidence


# --- workflow.not_terminal ----------------------------------------------------------------

NOT_TERMINAL = "workflow.not_terminal"


def test_not_terminal_flags_copywriting_guidance_without_commands():
    skill = make_skill("""
        # Headline workshop

        You are a senior copywriter. Turn the offer into headlines for the audience.

        ## Steps
        1. Name the buyer and the one outcome they want from the offer.
        2. Write ten headlines across angles: curiosity, proof, urgency, story.
        3. Rank the headlines by how well the copy speaks to the buyer's objections.
    """)
    res = workflow.not_terminal(skill)
    assert res.rule == NOT_TERMINAL
    assert res.outcome == Outcome.FAIL, res.evidence
    assert res.evidence.startswith("the core work is not done in a shell:")
    assert "headlines ×" in res.evidence and "0 concrete command(s) and no code" in res.evidence
    n = skill.raw_text.splitlines().index("3. Rank the headlines by how well the copy speaks to the buyer's objections.") + 1
    assert f"line {n}:" in res.evidence


def test_not_terminal_flags_business_coaching_even_with_one_command_in_passing():
    skill = make_skill("""
        # Find your first customers

        Coach the founder through a strategy for selling to the first customers of the business.

        ## Steps
        1. List the people and communities the founder already belongs to.
        2. Talk to ten customers a week; keep notes with `cat >> notes.md`.
        3. Turn the conversations into an offer and a pricing page for the community.
    """)
    assert workflow.not_terminal(skill).outcome == Outcome.FAIL


def test_not_terminal_does_not_fail_prose_guidance_for_terminal_work():
    # advice, no commands, but its subject is code, tests and files: a person decides
    skill = make_skill("""
        # Review a pull request

        ## Steps
        1. Read the diff file by file and note each function whose error handling changed.
        2. Check that every new code path has a test and the test names the bug it guards.
        3. Look for config values and paths that are hard-coded in the module.
    """)
    assert workflow.not_terminal(skill).outcome == Outcome.WARN


def test_not_terminal_passes_marketing_work_done_with_real_commands():
    # conservative: real shell commands in the core steps pass whatever the subject
    skill = make_skill("""
        # Campaign report

        Summarise the marketing campaign results for the audience and the brand team.

        ## Steps
        1. Join the ad exports with `mlr --icsv --ojson join -j campaign -f ads.csv leads.csv > joined.json`.
        2. Count leads per campaign with `jq 'group_by(.campaign) | map({c: .[0].campaign, n: length})' joined.json`.
    """)
    res = workflow.not_terminal(skill)
    assert res.outcome == Outcome.PASS, res.evidence
    assert res.evidence.startswith("terminal work: 2 concrete command(s)")


def test_not_terminal_passes_a_skill_with_code():
    skill = make_skill("""
        # Tone checker

        Score the tone of customer emails for the support team's brand voice.

        ```python
        import sys
        print(len(sys.stdin.read().split()))
        ```
    """)
    assert workflow.not_terminal(skill).outcome == Outcome.PASS


def test_not_terminal_warns_on_steps_that_never_name_a_command_or_show_code():
    skill = make_skill("""
        # Execute a plan

        ## Steps
        1. Load the plan and review it critically before starting.
        2. Work through the tasks in batches and report after each batch.
        3. Stop and ask when a task is blocked.
    """)
    res = workflow.not_terminal(skill)
    assert res.outcome == Outcome.WARN, res.evidence
    assert res.evidence.startswith("no command and no code anywhere, so maybe not shell work: 0 concrete command(s)")
    # the step list itself is a workflow
    assert workflow.structured_steps(skill).outcome == Outcome.PASS


# --- commands that run a script the package does not ship ----------------------------------

def _packaged(body: str, files: list[str]) -> ParsedSkill:
    text = ("---\nname: demo-skill\ndescription: Set up an experiment folder.\n---\n"
            + textwrap.dedent(body).lstrip("\n"))
    return build_skill(text, where="demo/SKILL.md", skill_key="demo", source_kind="folder", source_path="demo",
                       source_ref=None, package_files=files, content_hash="x" * 64)


SCRIPTED = """
    # Experiment setup

    ## Steps
    1. Create the experiment.
    2. List what exists.

    ```bash
    python {skill_path}/scripts/setup_experiment.py --name baseline --target results/
    python {skill_path}/scripts/setup_experiment.py --list
    ```
"""


def test_flags_commands_that_all_run_a_script_the_package_does_not_ship():
    skill = _packaged(SCRIPTED, ["SKILL.md"])
    res = workflow.structured_steps(skill)
    assert res.outcome == Outcome.FAIL
    assert res.evidence.startswith("every command runs a script of the skill that its package does not ship: "
                                   "scripts/setup_experiment.py")
    n = skill.raw_text.splitlines().index(
        "python {skill_path}/scripts/setup_experiment.py --name baseline --target results/") + 1
    assert res.location == f"SKILL.md:{n}"


def test_passes_when_the_package_ships_the_script():
    skill = _packaged(SCRIPTED, ["SKILL.md", "scripts/setup_experiment.py"])
    assert workflow.structured_steps(skill).outcome == Outcome.PASS
