"""pipeline.shell_syntax: the one reader of shell command lines in Markdown and scripts."""
from pipeline.artifacts.extract import extract
from pipeline.ingest.shell_commands import shell_commands
from pipeline.shell_syntax import markdown_lines, names_file, script_commands, simple_commands, unquote
from pipeline.synth.skill_fit import solution_commands


def test_a_line_splits_into_simple_commands_with_redirections_kept():
    assert simple_commands("jq -r '.[] | .a' in.json | sort -u > out.txt 2>&1 && wc -l out.txt  # note") == [
        ["jq", "-r", "'.[] | .a'", "in.json"], ["sort", "-u", ">", "out.txt", "2>&1"], ["wc", "-l", "out.txt"]]
    assert names_file(">") and names_file("2>>") and not names_file("2>&1")


def test_substitutions_subshells_and_case_patterns():
    # the outer command goes on after its substitution; a case pattern is no command
    assert simple_commands('tar -czf "b-$(date +%F).tgz" dir/; echo $(git rev-parse HEAD) > rev') == [
        ["tar", "-czf", '"b-$(date +%F).tgz"', "dir/"], ["echo", ">", "rev"], ["git", "rev-parse", "HEAD"]]
    assert simple_commands("(cd src && make)") == [["cd", "src"], ["make"]]
    assert simple_commands("*.py) black \"$f\" ;;") == [["black", '"$f"']]


def test_placeholders_stay_words():
    """`<file>` in documentation is a placeholder: the flags after it still belong to the command."""
    assert simple_commands("tool convert <file> --to <id|name> -o out.json") == [
        ["tool", "convert", "<file>", "--to", "<id|name>", "-o", "out.json"]]
    assert simple_commands("sort < in.txt > out.txt") == [["sort", "<", "in.txt", ">", "out.txt"]]


def test_unquote_and_unbalanced_quotes():
    assert unquote("\"a b\"'c'\\d") == "a bcd"
    assert simple_commands('echo "unbalanced') == [["echo", '"unbalanced']]


def test_markdown_lines_join_continuations_and_keep_fences_apart():
    text = ["intro", "```bash", "tar -czf out.tgz \\", "  dir/", "```", "~~~python", "```", "x = 1", "~~~", "end \\"]
    got = list(markdown_lines(text, 0, {"bash"}))
    assert got == [(1, "intro", None), (3, "tar -czf out.tgz dir/", "bash"), (8, "x = 1", "python"),
                   (10, "end \\", None)]
    # a block that ends on a continued line still yields the command
    assert list(markdown_lines(["```sh", "make all \\", "```"], 0, {"sh"})) == [(2, "make all", "sh")]


def test_script_commands_skip_heredocs_and_join_continued_lines():
    script = "cat > f <<'EOF'\nrm -rf /\nEOF\nneon branches create \\\n  --name <x> \\\n  --parent y\n"
    assert script_commands(script) == [["cat", ">", "f"], ["neon", "branches", "create", "--name", "<x>",
                                                             "--parent", "y"]]


def test_the_three_readers_agree_on_one_line():
    """The same line read by the workflow rule, the artifact extractor and the solve.sh reader."""
    line = "TZ=UTC sudo jq -c '.[] | select(.a)' in.json | gzip > out.json.gz"
    cmd, = shell_commands(f"```bash\n{line}\n```\n")
    assert cmd.programs == ("jq", "gzip") and cmd.args == ("-c", ".[] | select(.a)", "in.json")
    arts = extract(f"```bash\n{line}\n```\n")
    assert {"jq", "gzip"} <= set(arts.tools)
    assert any(a.name == "out.json.gz" for a in arts.produces), arts.produces
    assert solution_commands(line) == {"jq", "gzip"}


def test_slash_commands_in_prose_are_not_programs():
    text = "Use `/blog translate <file> --to <code>` and `/blog audit <dir> --deep`.\n"
    assert shell_commands(text) == []


def test_solution_commands_see_through_braces_and_xargs_replacement():
    assert solution_commands("pgrep -f x | xargs -I {} lsof -p {}\necho ${name}") == {"pgrep", "lsof", "echo"}


def test_top_level_commands_keep_compound_commands_heredocs_and_continuations_whole():
    from pipeline.shell_syntax import top_level_commands
    script = ("#!/bin/bash\nset -e\n# a note\ncat > a.txt <<'EOF'\nif x\ndone\nEOF\nfor f in *.txt; do\n  echo \"$f done\"\n"
              "done\nif [ -f x ]; then\n  echo yes\nfi\necho \"two\nlines\" \\\n  | wc -l\ncase \"$x\" in\n  *.py) echo py ;;\n"
              "esac\nf() {\n  echo in f\n}\n(cd /tmp && ls)\necho done\n")
    lines = script.splitlines()
    spans = top_level_commands(script)
    assert [lines[a] for a, _ in spans] == ["set -e", "cat > a.txt <<'EOF'", "for f in *.txt; do", "if [ -f x ]; then",
                                            'echo "two', 'case "$x" in', "f() {", "(cd /tmp && ls)", "echo done"]
    assert [lines[b - 1] for a, b in spans][1:7] == ["EOF", "done", "fi", "  | wc -l", "esac", "}"]
    assert top_level_commands("if true; then\n  echo never closed\n") == [(0, 2)]   # runs to the end
