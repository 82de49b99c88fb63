"""The commands a SKILL.md shows: code blocks, inline code, bare command list items."""
from __future__ import annotations

import textwrap

from pipeline.ingest.shell_commands import shell_commands


def commands(body: str, known=()):
    text = "---\nname: demo\ndescription: demo\n---\n" + textwrap.dedent(body).lstrip("\n")
    return text, shell_commands(text, known)


def test_shell_block_lines_are_commands_with_their_file_line_and_pipeline():
    text, found = commands("""
        # Demo
        ```bash
        # count the rows
        csvcut -c 2 data.csv | sort | uniq -c > counts.txt
        ```
    """)
    assert len(found) == 1
    c = found[0]
    assert text.splitlines()[c.line - 1] == "csvcut -c 2 data.csv | sort | uniq -c > counts.txt"
    assert (c.program, c.args, c.programs, c.where) == ("csvcut", ("-c", "2", "data.csv"),
                                                         ("csvcut", "sort", "uniq"), "code")
    assert c.concrete and not c.setup


def test_backslash_continuations_are_one_command_and_redirections_name_no_program():
    _, found = commands("""
        ```sh
        ffmpeg -i in.mp4 \\
          -c:v libx264 out.mp4 2>&1 > log.txt
        ```
    """)
    assert [c.text for c in found] == ["ffmpeg -i in.mp4 -c:v libx264 out.mp4 2>&1 > log.txt"]
    assert found[0].programs == ("ffmpeg",)


def test_console_blocks_count_prompted_lines_only_and_plain_blocks_need_a_known_program():
    _, found = commands("""
        ```console
        $ tidyup --check src/
        3 files would change
        ```
        ```
        jq . report.json
        Total: 3 files
        ```
    """)
    assert [c.text for c in found] == ["tidyup --check src/", "jq . report.json"]


def test_setup_help_and_placeholders_are_not_concrete():
    _, found = commands("""
        ```bash
        pip install tabex
        git clone https://github.com/example/tabex.git
        docker run -d -p 8080:8080 example/tabex
        tabex --help
        tabex [command] [options]
        tabex extract report.pdf -o tables.csv
        ```
    """)
    assert [c.concrete for c in found] == [False, False, False, False, False, True]
    assert [c.setup for c in found] == [True, True, True, False, False, False]


def test_an_exported_command_is_read_from_its_value():
    _, found = commands("""
        - export KUBECTL_EXTERNAL_DIFF="kubectl-diffx between --omit-header"
    """, known={"kubectl-diffx"})
    assert [(c.program, c.args) for c in found] == [("kubectl-diffx", ("between", "--omit-header"))]


def test_programs_the_text_installs_are_known_in_list_items():
    _, found = commands("""
        - go install github.com/example/mdconv/cmd/mdconv@latest
        - mdconv report.docx -o report.md
    """)
    assert [c.program for c in found if c.concrete] == ["mdconv"]


def test_prose_is_not_a_command():
    _, found = commands("""
        - find the culprit with patience
        - npm Docs
        Use `config.yaml` and `--verbose` as needed; see `README.md`.
        ```python
        import json
        print(json.dumps({}))
        ```
        ```ini
        lg = log --graph
        ```
    """)
    assert found == []


def test_a_scraped_first_line_of_a_continued_command_and_a_scaffold_are_not_concrete():
    _, found = commands("""
        - docker run -it --rm \\
        - npx create-tabex-app my-app
        - tabex extract report.pdf -o tables.csv
    """, known={"tabex"})
    assert [c.text for c in found if c.concrete] == ["tabex extract report.pdf -o tables.csv"]
    assert [c.setup for c in found] == [True, False]
