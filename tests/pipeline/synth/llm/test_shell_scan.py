"""What the guards read out of a shell script: logical lines, the simple commands on them,
and which of those reach a network or a package registry."""
import pytest

from pipeline.synth.llm.shell_scan import commands, logical_lines, network_uses, strip_wrappers


def test_logical_lines_join_continuations_and_skip_heredoc_bodies():
    script = "set -e\ncurl -s \\\n  https://example.com/a\ncat > f.py <<'EOF'\nimport os\nEOF\necho done\n"
    assert logical_lines(script) == [(1, "set -e"), (2, "curl -s    https://example.com/a"),
                                     (4, "cat > f.py <<'EOF'"), (7, "echo done")]


def test_commands_split_on_operators_and_open_bash_c():
    assert commands("a x && b 'y z' | c; (d)") == [["a", "x"], ["b", "y z"], ["c"], ["d"]]
    assert ["pip", "install", "x"] in commands("bash -c 'cd /app && pip install x'")
    assert commands("echo 'unbalanced") == [["echo", "'unbalanced"]]      # falls back to words
    assert strip_wrappers(["sudo", "-E", "env", "A=1", "timeout", "5s", "curl", "u"]) == ["curl", "u"]


@pytest.mark.parametrize("line, what", [
    ("pip3 install rich", "package registry (pip install)"),
    ("uv pip install rich", "package registry (pip install)"),
    ("npx cowsay hi", "package registry (npx)"),
    ("go install example.com/tool@latest", "package registry (go install)"),
    ("wget -q ftp://ftp.example.org/x", "fetches ftp://ftp.example.org/x (wget)"),
    ("git fetch git@github.com:o/r.git", "remote repository (git fetch git@github.com:o/r.git)"),
    ("x=$(curl -s https://api.example.io/v)", "fetches https://api.example.io/v (curl)"),
])
def test_network_uses_name_what_reaches_out(line, what):
    found = network_uses(f"echo start\n{line}\n")
    assert [f.line for f in found] == [2] and what in found[0].what


@pytest.mark.parametrize("line", [
    "pip install --no-index -f /app/wheels tool", "curl -s http://localhost:8080/x", "curl http://[::1]:9/x",
    "git clone /app/seed.git work", "echo see https://example.com", "npm test", "apt-cache policy jq",
])
def test_local_work_is_not_network_use(line):
    assert network_uses(line) == []
