"""From SKILL.md text to a parsed skill: inputs, outputs, tools and OpenClaw requirements."""
from __future__ import annotations

import textwrap

import pytest

from pipeline.ingest.skill_builder import build_skill
from pipeline.ingest.skill_markdown import SkillFormatError

WHERE = "pkg/demo/SKILL.md"


def skill(text: str):
    return build_skill(textwrap.dedent(text).lstrip("\n"), where=WHERE, skill_key="demo",
                       source_kind="folder", source_path="pkg/demo", source_ref=None,
                       package_files=["SKILL.md"], content_hash="x" * 64)


def test_inputs_and_outputs_through_build_skill():
    s = skill("""
        ---
        name: sqlite-backup
        description: Back up a SQLite database.
        metadata:
          outputs: [a compressed dump]
        ---
        # SQLite backup

        ## Prerequisites
        - sqlite3 installed
        - write access to `/backups`

        ## Steps
        1. Dump with `sqlite3 app.db .dump > app.sql`.
        2. Compress with `gzip app.sql`.
    """)
    assert s.inputs == ["sqlite3 installed", "write access to `/backups`"]
    assert s.outputs == ["a compressed dump"]
    assert s.steps == ["Dump with `sqlite3 app.db .dump > app.sql`.", "Compress with `gzip app.sql`."]

def test_allowed_tools_become_tools_and_bins():
    s = skill("""
        ---
        name: git-log
        description: Read the git history.
        allowed-tools: Bash(git:*) Read
        ---
        # Git log
    """)
    assert s.tools == ["Bash(git:*)", "Read"]
    assert "git" in s.bins

def test_openclaw_metadata_through_build_skill():
    s = skill("""
        ---
        name: csv-report
        description: Summarise a CSV file.
        metadata:
          openclaw:
            os: [Linux]
            requires:
              bins: [jq]
              anyBins: [mlr, csvstat]
              env: [DATA_DIR]
        ---
        # CSV report
    """)
    assert s.os == ["linux"]
    assert s.bins == ["csvstat", "jq", "mlr"]
    assert s.env_vars == ["DATA_DIR"]

def test_openclaw_json_string_metadata_through_build_skill():
    s = skill("""
        ---
        name: csv-report
        description: Summarise a CSV file.
        metadata: '{"openclaw": {"os": ["linux"], "requires": {"bins": ["jq"], "env": ["DATA_DIR"]}}}'
        ---
        # CSV report
    """)
    assert s.os == ["linux"]
    assert s.bins == ["jq"]
    assert s.env_vars == ["DATA_DIR"]


def test_a_too_long_name_says_so():
    text = "---\nname: " + "a" * 5000 + "\ndescription: Long.\n---\n# A\n"
    with pytest.raises(SkillFormatError, match="name is 5,000 characters long, longer than 128 characters"):
        skill(text)


@pytest.mark.parametrize("name", ["Helm Chart Diff & Upgrade Manager", "SSL/TLS Certificate Monitor",
                                  "Run context → spec → implement loops", "Crème brûlée timer",
                                  "Search PDFs, ebooks, and archives (one query)"])
def test_title_style_names_with_plain_punctuation_are_accepted(name):
    # Real collections name skills with titles, not slugs; these used to be refused outright.
    assert skill(f"---\nname: {name}\ndescription: A title-named skill.\n---\n# A\n").name == name


@pytest.mark.parametrize("name", ["bold **name**", "[click](javascript:alert(1))", "<img src=x>",
                                  "a `cmd` name", "rm -rf $HOME", "it's quoted", "a | b", "_leading"])
def test_names_with_markup_or_quoting_characters_are_refused(name):
    with pytest.raises(SkillFormatError, match="has characters a skill name may not use"):
        skill(f"---\nname: \"{name}\"\ndescription: Hostile name.\n---\n# A\n")
