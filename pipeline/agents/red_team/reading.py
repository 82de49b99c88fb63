"""What the red-team probe reads from a task before it attacks: the paths the instruction names
(the outputs to fake, the inputs to gut), the programs the tests run (to replace by liars), the
literals the tests assert on (what a liar prints), and the files the tests carry (what an output
can be linked to).

The probe reads the tests as well as the instruction: it is a verifier probe, stronger than any
agent (which never sees them), so a hole it cannot find is no proof, but one it finds is real.
It never reads the solution: a probe that ran the solution would be the oracle.
"""
from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field

from pipeline import python_source
from workbench.sandbox.bundle import TaskBundle

# The verifier's and the task's own places: never an output to fake.
RESERVED = ("/tests", "/logs", "/solution", "/skills", "/proc", "/sys", "/dev", "/wb-verifier", "/usr", "/bin",
            "/sbin", "/lib", "/lib64", "/etc/ld.so.preload")
WORKDIR = "/app"
MAX_PATHS = 40
MAX_LITERALS = 40
MAX_PROGRAMS = 30
# An absolute path as instructions write it (`/app/out/report.csv`, /srv/www/); trailing
# punctuation of the sentence is not part of it.
_ABS_PATH = re.compile(r"(?<![\w.~$/-])(/(?:[A-Za-z0-9_.@+-]+/)*[A-Za-z0-9_.@+-]*)")
_CODE = re.compile(r"`([^`\n]{1,200})`")
_FILE_NAME = re.compile(r"^[A-Za-z0-9_.@+-]+\.[A-Za-z0-9]{1,8}$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_PROGRAM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,40}$")
# Shell words that are no program: keywords, builtins the liar cannot replace anyway.
_SHELL_WORDS = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
                "function", "cd", "echo", "printf", "export", "set", "unset", "local", "return", "exit", "true",
                "false", "test", "read", "source", "eval", "exec", "shift", "trap", "wait", "command", "type"}


@dataclass
class TaskReading:
    """`outputs`: absolute paths the instruction names (files, and folders ending in /);
    `programs`: names the tests run as programs; `literals`: short strings and numbers the
    tests compare with; `identifiers`: field-like words of the instruction (column and key
    names); `columns`: per output, the field-like words of the lines that name it (its header,
    its keys, its table); `numbers`: numbers the instruction states; `test_files`: the tests' own files
    by their path in the container (/tests/...)."""
    outputs: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    columns: dict[str, list[str]] = field(default_factory=dict)
    numbers: list[str] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)


def _unique(items, cap: int) -> list:
    out: list = []
    for item in items:
        if item not in out:
            out.append(item)
        if len(out) >= cap:
            break
    return out


def reserved(path: str) -> bool:
    return any(path == r or path.startswith(r + "/") for r in RESERVED)


def instruction_paths(text: str) -> list[str]:
    """Absolute paths the instruction names, and file names in backticks (taken as relative to
    the working directory, /app), in order of appearance; the verifier's places left out."""
    found: list[str] = []
    for m in _ABS_PATH.finditer(text):
        p = m.group(1).rstrip(".,;:")
        # "/app" alone is the working folder, not something to make; "/srv/www/" a folder to make
        if len(p) > 2 and (p.count("/") >= 2 or p.endswith("/")) and not reserved(p):
            found.append(p)
    for m in _CODE.finditer(text):
        word = m.group(1).strip()
        if _FILE_NAME.match(word):
            found.append(f"{WORKDIR}/{word}")
    return _unique(found, MAX_PATHS)


def _python_programs(source: str) -> tuple[list[str], list[str]]:
    """(programs, literals) of a Python test file: the first word of every argv list or shell
    string handed to subprocess/os, and the short constants of every assert."""
    try:
        tree = python_source.parse(source)        # trials run in threads: parses take turns
    except (SyntaxError, RecursionError, ValueError):
        return [], []
    programs: list[str] = []
    literals: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("run", "check_output", "check_call", "call", "Popen", "system", "getoutput",
                        "getstatusoutput", "which"):
                if isinstance(first, (ast.List, ast.Tuple)) and first.elts and isinstance(first.elts[0], ast.Constant):
                    programs.append(str(first.elts[0].value))
                elif isinstance(first, ast.Constant) and isinstance(first.value, str):
                    programs.extend(shell_programs(first.value))
        if isinstance(node, ast.Assert):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, (str, int, float)) \
                        and not isinstance(sub.value, bool) and len(str(sub.value)) <= 80:
                    literals.append(str(sub.value))
    return programs, literals


def without_heredocs(script: str) -> str:
    """A shell script less its here-document bodies (a Python program fed to `python3 -`)."""
    out, marker = [], None
    for line in script.splitlines():
        if marker is not None:
            if line.strip() == marker:
                marker = None
            continue
        out.append(line)
        m = _HEREDOC.search(line)
        if m:
            marker = m.group(1)
    return "\n".join(out)


def shell_programs(command: str) -> list[str]:
    """The first word of every simple command of a shell line (after pipes, `&&`, `;`)."""
    out = []
    for part in re.split(r"\|\||&&|[|;\n()`]", command):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = part.split()
        while words and "=" in words[0] and not words[0].startswith("="):
            words = words[1:]                          # VAR=value cmd
        if words:
            word = words[0].rsplit("/", 1)[-1]
            if _PROGRAM.match(word) and word not in _SHELL_WORDS:
                out.append(word)
    return out


def _columns(instruction: str, outputs: list[str]) -> dict[str, list[str]]:
    """Per output: the field-like words in backticks on the lines that name it, in order."""
    lines = instruction.splitlines()
    out = {}
    for path in outputs:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        words = [w.strip() for ln in lines if path in ln or f"`{name}`" in ln
                 for w in _CODE.findall(ln) if _IDENT.match(w.strip())]
        if words:
            out[path] = _unique(words, 12)
    return out


def read_task(bundle: TaskBundle) -> TaskReading:
    instruction = bundle.text("instruction.md") if "instruction.md" in bundle.files else ""
    programs: list[str] = []
    literals: list[str] = []
    test_files = []
    for path, data in sorted(bundle.under("tests").items()):
        rel = path.split("/", 1)[-1] if path.startswith("tests/") else path
        test_files.append(f"/tests/{rel}")
        text = data.decode("utf-8", "replace")
        if path.endswith(".py"):
            p, lit = _python_programs(text)
            programs += p
            literals += lit
        elif path.endswith(".sh"):
            programs += shell_programs(without_heredocs(text))
    identifiers = [w.strip() for w in _CODE.findall(instruction) if _IDENT.match(w.strip())]
    outputs = instruction_paths(instruction)
    return TaskReading(outputs=outputs, columns=_columns(instruction, outputs),
                       programs=_unique((p for p in programs if p not in _SHELL_WORDS), MAX_PROGRAMS),
                       literals=_unique(literals, MAX_LITERALS),
                       identifiers=_unique(identifiers, 12),
                       numbers=_unique(_NUMBER.findall(instruction), 12),
                       test_files=test_files)
