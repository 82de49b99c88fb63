"""The shell commands a SKILL.md shows: lines of shell code blocks, inline code spans and
list items that are nothing but a command, with what each is for (set-up, real work). The
lines and their splitting into commands come from pipeline.shell_syntax, the one shell reader
that the artifact extractor and the solve.sh reader share."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.binaries import KNOWN_BINS
from pipeline.ingest.skill_markdown import _FM as FRONT_MATTER
from pipeline.shell_syntax import is_redirect, markdown_lines, names_file, simple_commands, unquote

# Fence languages whose every line is a command; unlabelled and text blocks hold output as
# often as commands, so there only a prompt or a known program makes a line a command.
SHELL_LANGS = {"bash", "sh", "shell", "zsh", "fish", "ksh", "console", "terminal", "shell-session",
               "shellsession", "shellscript", "cli", "command", "commands"}
_PLAIN_LANGS = {"", "text", "txt", "plain", "plaintext"}
_CODE_LANGS = frozenset(SHELL_LANGS | _PLAIN_LANGS)
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+(.+)$")
_PROMPT = re.compile(r"^(?:\$|❯|>>>|%)\s+")
_PROGRAM = re.compile(r"^(?:\.{0,2}/)?[A-Za-z0-9_][\w.+/-]*$")
_FLAG_HINT = re.compile(r"(?:^|[^\w.+-])-")   # where an argument could start with a dash
_SLASH_COMMAND = re.compile(r"^/[\w-]+(?:\s|$)")
_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_PLACEHOLDER = re.compile(r"^(\[.*\]|<.*>|\{\w[^}]*\}|\.\.\.|…|\[?options?\]?|\[?command\]?)$", re.I)
_HELP_ARGS = {"--help", "-h", "help", "--version", "-v", "-V", "version"}
# Words that only prose puts after a program name ("make sure the file exists").
_PROSE_WORDS = {"the", "a", "an", "to", "and", "or", "your", "you", "with", "for", "of", "in", "is",
                "are", "this", "that", "it", "on", "sure", "be", "will", "can", "should", "when",
                "if", "by", "from", "as", "at", "which", "what", "how", "we", "our", "they"}
# Not work in themselves: navigation, shell set-up, output of a message.
_TRIVIAL = {"cd", "pushd", "popd", "mkdir", "touch", "echo", "printf", "export", "source", ".", "set", "unset", "alias",
            "exit", "clear", "pwd", "true", "false", "sleep", "read", "local", "return", "shift",
            "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
            "function", "trap", "wait", "import", "from", "def", "class", "print", "const", "let", "var"}
# Getting, building, starting or configuring a tool, not using it on something.
_SETUP = re.compile(
    r"^(?:(?:pip3?|pipx|conda|mamba|micromamba|poetry|npm|pnpm|yarn|bun|gem|cargo|brew|apt(?:-get)?|dnf|"
    r"yum|apk|pacman|snap|zypper|port|choco|winget|scoop|nix-env|asdf|mise|rustup|go|uv|deno|helm|"
    r"python3?\s+-m\s+pip|uv\s+(?:pip|tool)|npx\s+skills|claude(?:\s+(?:plugin|mcp))?)\s+(?:-\S+\s+)*"
    r"(?:install|add|i|get|ci|update|upgrade|tap|sync|repo\s+add|marketplace)\b"
    r"|(?:conda|mamba|micromamba)\s+(?:create|env|activate)\b|(?:uv|virtualenv)\s+venv\b|virtualenv\b"
    r"|(?:npm|pnpm|yarn|bun)\s+(?:init|create|start|run\s+(?:start|dev|serve|build|watch))\b"
    r"|(?:npm|pnpm|yarn)\s+(?:run\s+)?(?:dev|build|serve)\b"
    r"|docker(?:-compose|\s+compose)\b|docker\s+(?:build|pull|login|push)\b"
    r"|docker\s+run\b.*\s(?:-p|--publish|-d|--detach)\s"          # starts a service
    r"|(?:cp|mv|ln)\b.*(?:~|\$HOME)/\.(?:claude|codex|cursor|agent|openclaw|config/\w+/skills)"
    r"|\S+\s+(?:auth\s+)?login\b|\S+\s+(?:secret|secrets)\s+(?:put|set)\b"
    r"|(?:curl|wget)\b.*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"
    r"|npx\s+(?:-y\s+|--yes\s+)?create-[\w-]+"                      # scaffolds a project
    r"|[\w.-]+\s+install\b|git\s+clone\b|python3?\s+-m\s+venv\b|npx\s+-y\s+skills\b)")
_INSTALLED = re.compile(
    r"\b(?:go\s+install|cargo\s+install|brew\s+install|pipx\s+install|uv\s+tool\s+install|"
    r"pip3?\s+install|npm\s+(?:install|i)\s+(?:-g|--global))\s+(?:-\S+\s+)*([\w@./:+-]+)")
# Programs that are commands wherever they appear, though the sandbox table (KNOWN_BINS) does
# not provide them: what decides here is what a command looks like, not what installs on Debian.
COMMON_CLIS = frozenset("""
docker podman kubectl helm kind minikube terraform tofu packer vagrant ansible ansible-playbook gh glab
aws gcloud az go cargo rustc rustup deno bun uv uvx pnpm yarn java javac mvn gradle dotnet ruby bundle
rake rails php composer tox nox ruff black isort flake8 mypy pyright pylint eslint prettier tsc vitest
jest playwright wrangler hugo jekyll mkdocs sphinx-build cmake ninja bazel meson conda mamba poetry
pip pip3 rg fd fzf bat delta exa eza jj hg svn kustomize skaffold argocd flux istioctl velero
""".split())
_PREFIXES = {"sudo", "env", "time", "nohup", "exec", "command", "-E"}


@dataclass(frozen=True)
class ShellCommand:
    line: int              # 1-based line in the whole SKILL.md
    text: str              # the command as written (prompt removed)
    program: str           # the program the command line starts with
    args: tuple[str, ...]  # its arguments, up to the first pipe or redirection
    programs: tuple[str, ...]  # every program of the pipeline, in order
    where: str             # "code" (a shell block), "inline" (a code span) or "list" (a bare list item)
    setup: bool            # installs or fetches a tool rather than using it

    @property
    def concrete(self) -> bool:
        """Does real work: a program with real arguments or a pipeline, not set-up or --help."""
        if self.setup:
            return False
        if self.program in _TRIVIAL:
            return any(p not in _TRIVIAL for p in self.programs[1:])  # `echo '{}' | jq .a`
        real = [a for a in self.args if not _PLACEHOLDER.match(a)]
        return (bool(real) and not set(real) <= _HELP_ARGS) or len(self.programs) > 1


def shell_commands(text: str, known: Iterable[str] = ()) -> list[ShellCommand]:
    """Every command the text shows, in order. `known`: programs the skill declares (front
    matter bins); programs it installs in its own text count as known too."""
    lines = text.splitlines()
    m = FRONT_MATTER.match(text)
    start = text[: m.end()].count("\n") if m else 0
    known_set = set(KNOWN_BINS) | COMMON_CLIS | set(known) | _installed_programs(lines[start:])
    out = _scan(lines, start, known_set)
    # a program seen running (in a shell block, or with flags) is known in its other spans too
    seen = {c.program for c in out} - known_set
    return _scan(lines, start, known_set | seen) if seen else out


def _scan(lines: list[str], start: int, known_set: set[str]) -> list[ShellCommand]:
    out: list[ShellCommand] = []
    for n, line, lang in markdown_lines(lines, start, _CODE_LANGS):
        if lang is not None:
            if lang in _CODE_LANGS:
                cmd = _code_line(line, n, lang, known_set)
                if cmd:
                    out.append(cmd)
            continue
        spans = _INLINE.findall(line)
        for span in spans:
            cmd = _command(span, n, "inline", known_set, strict=True)
            if cmd:
                out.append(cmd)
        item = _LIST_ITEM.match(line)
        if item and not spans:
            cmd = _command(item.group(1), n, "list", known_set, strict=True, prose_check=True)
            if cmd:
                out.append(cmd)
    return out


def _installed_programs(lines: list[str]) -> set[str]:
    """`go install github.com/o/dyff/cmd/dyff@latest` gives dyff, `brew install o/tap/x` gives x."""
    names = set()
    for line in lines:
        for pkg in _INSTALLED.findall(line):
            name = pkg.split("@", 1)[0] if not pkg.startswith("@") else pkg.rsplit("/", 1)[-1].split("@")[0]
            name = name.rstrip("/").rsplit("/", 1)[-1].split("==")[0].split("[")[0]
            if name and _PROGRAM.match(name):
                names.add(name)
    return names


def _code_line(line: str, n: int, lang: str, known: set[str]) -> ShellCommand | None:
    if not line or line.startswith("#"):
        return None
    prompted = bool(_PROMPT.match(line))
    if lang == "console" and not prompted:
        return None  # console blocks interleave output; only prompted lines are typed
    return _command(line, n, "code", known, strict=lang not in SHELL_LANGS and not prompted)


def _command(text: str, n: int, where: str, known: set[str], *, strict: bool,
             prose_check: bool = False) -> ShellCommand | None:
    """strict: the program must be one we know (a code span or list item may be any word)."""
    text = _PROMPT.sub("", text.strip()).strip()
    if where != "code" and text.endswith(("\\", " ^")):
        return None  # a scraped first line of a continued command: the rest is missing
    if where != "code" and _SLASH_COMMAND.match(text):
        return None  # `/blog translate <file>`: an agent's slash command, not a program on a path
    if strict and _unknown_word_without_flags(text, known):
        return None  # decided before parsing: most list items and code spans are prose
    cmds = [[unquote(t) for t in cmd] for cmd in simple_commands(text)]
    if not cmds:
        return None
    words = [w for cmd in cmds for w in cmd]
    # `export X="dyff between …"`, `alias d='…'`: the value is the command
    if len(cmds) == 1 and words[0] in ("export", "alias") and len(words) == 2 and "=" in words[1]:
        inner = _command(words[1].split("=", 1)[1], n, where, known, strict=True)
        return inner
    programs, first_args = _pipeline(cmds)
    if not programs:
        return None
    program = programs[0]
    if first_args and first_args[0] in ("=", ":", "->"):
        return None  # `lg = log --graph`: a config entry or a mapping, not a command
    flagged = any(a.startswith("-") and len(a) > 1 for a in first_args or ())
    if strict and program not in known and not program.startswith(("./", "../")) \
            and not (flagged and program.islower()):
        return None
    if prose_check and _reads_as_prose(text, words):
        return None
    if where != "code" and not first_args:
        return None  # a bare program name in prose is a mention, not a command
    return ShellCommand(line=n, text=text[:240], program=program, args=first_args or (),
                        programs=tuple(programs), where=where, setup=bool(_SETUP.match(_strip_sudo(text))))


def _unknown_word_without_flags(text: str, known: set[str]) -> bool:
    """The rule below (strict: a program we know, a path, or a lowercase word with flags)
    read off the first word alone where that suffices."""
    first = text.split(None, 1)[0] if text else ""
    return bool(first) and first not in known and first not in _PREFIXES and first not in ("export", "alias") \
        and "/" not in first and _PROGRAM.match(first) is not None and _FLAG_HINT.search(text) is None


def _reads_as_prose(text: str, words: list[str]) -> bool:
    """A list item like "find the culprit" or "npm Docs" names a program but is a sentence."""
    if len(words) > 16 or any(w.lower().strip(",.:;") in _PROSE_WORDS for w in words[1:]):
        return True
    bare = text.split()[1:2]  # as written: a quoted "Fix" argument stays quoted
    return any(re.fullmatch(r"[A-Z][a-z]+[,.:;]?", w) for w in bare)


def _pipeline(cmds: list[list[str]]) -> tuple[list[str], tuple[str, ...] | None]:
    """The programs of `a … | b … && c …` and the first one's arguments (redirections left out)."""
    programs: list[str] = []
    first_args: tuple[str, ...] | None = None
    for cmd in cmds:
        seg, skip_next = [], False
        for w in cmd:
            if skip_next:
                skip_next = False
            elif is_redirect(w):
                skip_next = names_file(w)   # `> out.json` names a file; `2>&1` does not
            else:
                seg.append(w)
        while seg and (seg[0] in _PREFIXES or _ASSIGN.match(seg[0])):
            seg = seg[1:]
        if seg and _PROGRAM.match(seg[0]):
            programs.append(seg[0] if seg[0].startswith(".") else seg[0].rsplit("/", 1)[-1])
            if first_args is None:
                first_args = tuple(seg[1:])
        elif not programs:
            break  # `[-g] [-h] | …`: the line does not start with a program
    return programs, first_args


def _strip_sudo(text: str) -> str:
    return re.sub(r"^(sudo\s+(-\S+\s+)*)", "", text)


