"""SKILL.md parsing: front matter, sections, steps, inputs/outputs, tools and metadata."""
from __future__ import annotations

import textwrap

import pytest

from pipeline.ingest import skill_markdown as smd

WHERE = "pkg/demo/SKILL.md"


def md(text: str) -> smd.SkillMarkdown:
    return smd.parse(textwrap.dedent(text).lstrip("\n"), WHERE)


# --- front matter ------------------------------------------------------------------------

def test_front_matter_is_split_from_body():
    m = md("""
        ---
        name: demo
        description: A demo.
        ---
        # Demo
        Body text.
    """)
    assert m.front_matter == {"name": "demo", "description": "A demo."}
    assert m.body == "# Demo\nBody text.\n"
    assert m.body_start_line == 5
    heading = [s for s in m.sections if s.title == "Demo"][0]
    assert heading.level == 1 and heading.start_line == 5


def test_front_matter_with_bom():
    text = "\ufeff---\nname: demo\ndescription: A demo.\n---\n# Demo\n"
    m = smd.parse(text, WHERE)
    assert m.front_matter["name"] == "demo"
    assert m.body == "# Demo\n"


def test_front_matter_with_crlf_line_endings():
    text = "---\r\nname: demo\r\ndescription: A demo.\r\n---\r\n# Demo\r\n"
    m = smd.parse(text, WHERE)
    assert m.front_matter == {"name": "demo", "description": "A demo."}
    assert m.body.startswith("# Demo")


def test_empty_front_matter_is_an_empty_mapping():
    m = md("""
        ---
        ---
        # Demo
    """)
    assert m.front_matter == {}


def test_no_front_matter():
    with pytest.raises(smd.SkillFormatError) as err:
        md("# Demo\n\nJust markdown.\n")
    assert str(err.value).startswith(WHERE + ":")
    assert "no YAML front matter" in str(err.value)


def test_unclosed_front_matter():
    with pytest.raises(smd.SkillFormatError) as err:
        md("""
            ---
            name: demo
            description: never closed

            # Demo
        """)
    assert WHERE in str(err.value)
    assert "never closes" in str(err.value)


def test_invalid_yaml_reports_the_file_line():
    # Line 1 is '---'; the bad line is line 3 of the file.
    with pytest.raises(smd.SkillFormatError) as err:
        md("""
            ---
            name: demo
            description: [unclosed, list
            license: MIT
            ---
            # Demo
        """)
    msg = str(err.value)
    assert "not valid YAML" in msg
    assert msg.startswith(f"{WHERE}: line ")
    line = int(msg.split("line ", 1)[1].split(":", 1)[0])
    assert 3 <= line <= 5


def test_invalid_yaml_line_number_points_at_the_bad_line():
    with pytest.raises(smd.SkillFormatError) as err:
        md("""
            ---
            name: demo
            description: ok
            bad: : value
            ---
        """)
    assert str(err.value).startswith(f"{WHERE}: line 4:")


def test_front_matter_that_is_not_a_mapping():
    with pytest.raises(smd.SkillFormatError) as err:
        md("""
            ---
            - name
            - description
            ---
            # Demo
        """)
    assert "front matter is a list, not a mapping" in str(err.value)


def test_headings_inside_code_blocks_are_not_sections():
    m = md("""
        ---
        name: demo
        ---
        # Demo
        ```bash
        # this is a shell comment
        jq . data.json
        ```
        ## Notes
    """)
    assert [s.title for s in m.sections] == ["", "Demo", "Notes"]
    assert m.code_lines == ["# this is a shell comment", "jq . data.json"]


# --- steps -------------------------------------------------------------------------------

def test_steps_from_numbered_list():
    m = md("""
        ---
        name: demo
        ---
        # Demo
        Some intro.

        ## Steps
        1. Start with `git bisect start HEAD v1.0`.
        2) Run **`git bisect run ./test.sh`**.
        3. Finish   with `git bisect reset`.
    """)
    assert smd.extract_steps(m) == [
        "Start with `git bisect start HEAD v1.0`.",
        "Run `git bisect run ./test.sh`.",
        "Finish with `git bisect reset`.",
    ]


def test_steps_from_step_subheadings():
    m = md("""
        ---
        name: demo
        ---
        # Demo

        ## Procedure

        ### Step 1: Mark the endpoints
        Run `git bisect start`.

        ### Step 2 - Automate the test
        Run `git bisect run ./test.sh`.

        ## Notes
        - not a step
    """)
    assert smd.extract_steps(m) == ["Mark the endpoints", "Automate the test"]


def test_steps_from_top_level_step_headings():
    m = md("""
        ---
        name: demo
        ---
        # Demo

        ## Step 1: Dump the database
        ## Step 2: Compress the dump
    """)
    assert smd.extract_steps(m) == ["Dump the database", "Compress the dump"]


def test_steps_from_workflow_bullets():
    m = md("""
        ---
        name: demo
        ---
        # Demo

        ## Workflow
        - Dump the database with `sqlite3 app.db .dump > app.sql`.
        - Compress the dump with `gzip app.sql`.

        ```bash
        - not a bullet, this is inside a code block
        ```
    """)
    assert smd.extract_steps(m) == ["Dump the database with `sqlite3 app.db .dump > app.sql`.",
                                    "Compress the dump with `gzip app.sql`."]


def test_no_steps_from_prose():
    m = md("""
        ---
        name: demo
        ---
        # Demo

        This skill helps you back up databases. Use sqlite3 and gzip as you see fit,
        and keep a few old copies around in case something goes wrong.

        ## Workflow
        Just do what seems right for the database at hand.
    """)
    assert smd.extract_steps(m) == []


# --- inputs / outputs --------------------------------------------------------------------

def test_inputs_and_outputs_sections():
    m = md("""
        ---
        name: demo
        ---
        # Demo

        ## Inputs
        - `app.db`: the SQLite database
        - `BACKUP_DIR`: where copies go

        ## Steps
        1. Dump.
        2. Compress.

        ## Outputs
        ### Files
        - `app-<date>.sql.gz` in `BACKUP_DIR`
    """)
    assert smd.extract_section_items(m, smd._INPUT_SECTIONS) == [
        "`app.db`: the SQLite database", "`BACKUP_DIR`: where copies go"]
    assert smd.extract_section_items(m, smd._OUTPUT_SECTIONS) == ["`app-<date>.sql.gz` in `BACKUP_DIR`"]


# --- as_list -----------------------------------------------------------------------------

def test_as_list_string_keeps_parenthesised_tools_whole():
    assert smd.as_list("Bash(git:*) Read") == ["Bash(git:*)", "Read"]
    assert smd.as_list("Bash(git log:*), Read, Write") == ["Bash(git log:*)", "Read", "Write"]


def test_as_list_list_none_and_others():
    assert smd.as_list(["jq", " git ", "", 3]) == ["jq", "git", "3"]
    assert smd.as_list(None) == []
    assert smd.as_list("") == []
    assert smd.as_list({"jq": "1.7", "git": None}) == ["jq", "git"]
    assert smd.as_list(3) == ["3"]


# --- openclaw metadata -------------------------------------------------------------------

def test_openclaw_meta_from_mapping():
    fm = {"metadata": {"openclaw": {"requires": {"bins": ["jq"]}, "os": ["linux"]}}}
    assert smd.openclaw_meta(fm) == {"requires": {"bins": ["jq"]}, "os": ["linux"]}


def test_openclaw_meta_from_legacy_key():
    assert smd.openclaw_meta({"metadata": {"clawdbot": {"os": ["linux"]}}}) == {"os": ["linux"]}


def test_openclaw_meta_from_json_string():
    fm = {"metadata": '{"openclaw": {"requires": {"bins": ["jq"], "env": ["DATA_DIR"]}}}'}
    assert smd.openclaw_meta(fm) == {"requires": {"bins": ["jq"], "env": ["DATA_DIR"]}}


def test_openclaw_meta_missing_or_broken():
    assert smd.openclaw_meta({}) == {}
    assert smd.openclaw_meta({"metadata": "{not json"}) == {}
    assert smd.openclaw_meta({"metadata": ["openclaw"]}) == {}
    assert smd.openclaw_meta({"metadata": {"openclaw": "yes"}}) == {}


# --- command_bins ------------------------------------------------------------------------

def test_command_bins_finds_jq_in_code_and_ignores_unknown_words():
    m = md("""
        ---
        name: demo
        ---
        # Demo
        ```bash
        $ cat data.json | jq '.items | length'
        frobnicate --all
        FOO=1 sudo sqlite3 app.db 'select 1'
        Usage: see below
        ```
    """)
    assert smd.command_bins(m, []) == ["cat", "jq", "sqlite3"]


def test_command_bins_reads_inline_code_of_steps_only():
    m = md("""
        ---
        name: demo
        ---
        # Demo
        Mention of `rsync` in prose.
    """)
    assert smd.command_bins(m, ["Run `git bisect start`.", "Then `/usr/bin/jq .`."]) == ["git", "jq"]


def test_unquoted_colon_in_a_description_is_read_leniently():
    fm, _, _ = smd.split_front_matter("---\nname: x\ndescription: Use when: the user asks for it\n---\nbody\n", WHERE)
    assert fm == {"name": "x", "description": "Use when: the user asks for it"}


def test_first_line_with_trailing_text_gets_a_precise_reason():
    with pytest.raises(smd.SkillFormatError, match="first line must be exactly '---'"):
        smd.split_front_matter("---（translated）\nname: x\n---（translated）\n", WHERE)


def test_numbers_in_code_blocks_are_not_steps():
    parsed = md("""
        ---
        name: demo
        description: d
        ---
        # Demo
        Example output:
        ```
        1. AWS Console (Production)
        2. AWS IAM (Dev)
        ```
    """)
    assert smd.extract_steps(parsed) == []


def test_numbered_step_headings_under_quick_start_are_steps():
    parsed = md("""
        ---
        name: demo
        description: d
        ---
        ## Quick Start
        ### 1. Set credentials
        Export the token.
        ### 2. List your zones
        Call the API.
    """)
    assert smd.extract_steps(parsed) == ["Set credentials", "List your zones"]


def test_renamed_openclaw_key_is_still_found():
    assert smd.openclaw_meta({"metadata": {"dna": {"os": ["darwin"], "requires": {"bins": ["memo"]}}}}) == {
        "os": ["darwin"], "requires": {"bins": ["memo"]}}


# --- hostile front matter ------------------------------------------------------------------

def test_alias_bomb_in_front_matter_is_refused_with_the_reason():
    from tests.pipeline.ingest.test_value_bounds import alias_bomb
    with pytest.raises(smd.SkillFormatError, match=r"^pkg/demo/SKILL.md: front matter expands to over 20,000 values"):
        smd.parse("---\nname: demo\n" + alias_bomb() + "---\n# Demo\n", WHERE)


def test_deeply_nested_front_matter_says_how_deep_it_may_be():
    text = "---\nname: demo\nmeta: " + "[" * 1000 + "]" * 1000 + "\n---\n# Demo\n"
    with pytest.raises(smd.SkillFormatError, match="front matter is nested deeper than 32 levels"):
        smd.parse(text, WHERE)


def test_python_object_tag_is_not_constructed():
    text = "---\nname: demo\nx: !!python/object/apply:os.system ['touch /tmp/pwned']\n---\n# Demo\n"
    with pytest.raises(smd.SkillFormatError, match="not valid YAML: could not determine a constructor"):
        smd.parse(text, WHERE)
