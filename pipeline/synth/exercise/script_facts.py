"""Can a bundled script run offline in the base image, and give the same output twice?

Read statically, never run on this machine (a skill's code is hostile input): a Python script must
import only the standard library and the package's own modules, a shell script must run only
programs the base image has; neither may talk to the network, ask questions, or draw random values
without a seed (the tests compare the agent's output with a pristine run of the same script).
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from pipeline.binaries import DEBIAN_PROVIDES, KNOWN_BINS
from pipeline.shell_syntax import script_commands
from workbench.sandbox.base_image import PACKAGES

_NETWORK_MODULES = frozenset({"urllib", "http", "socket", "smtplib", "ftplib", "imaplib", "poplib", "telnetlib",
                              "ssl", "xmlrpc", "webbrowser", "socketserver", "asyncio"})
_SHELL_BUILTINS = frozenset("""
    cd echo printf read set export unset test [ [[ true false exit source . eval exec local declare return
    shift trap wait break continue let getopts type command pwd umask alias readonly shopt mapfile
    if then else elif fi for while until do done case esac function in
""".split())
IMAGE_BINARIES = frozenset(b for b, pkg in DEBIAN_PROVIDES.items() if pkg in PACKAGES) | \
    frozenset({"python3", "python", "bash", "sh", "pytest"})
_NETWORK_TOOLS = frozenset({"curl", "wget", "ssh", "scp", "nc", "ncat", "rsync", "ftp", "telnet"})
# Programs whose result depends on state a sample file cannot stand for.
_STATE_TOOLS = {"git": "a repository", "systemctl": "services", "crontab": "a crontab", "ps": "processes",
                "ss": "sockets", "ip": "interfaces", "useradd": "accounts", "getent": "accounts", "df": "disks",
                "du": "a file tree", "find": "a file tree", "journalctl": "a journal", "docker": "containers"}
LANGUAGES = {".py": "python", ".sh": "shell", ".bash": "shell"}


@dataclass(frozen=True)
class ScriptFacts:
    language: str            # python | shell | other
    problem: str = ""        # '' when it can run offline in the base image; else why not
    reads_stdin: bool = False

    @property
    def runnable(self) -> bool:
        return not self.problem


def script_facts(rel: str, source: str, package_modules: frozenset[str] = frozenset()) -> ScriptFacts:
    """`rel`: the script's path in its package; `package_modules`: module names the package ships."""
    suffix = "." + rel.rsplit(".", 1)[-1] if "." in rel else ""
    language = LANGUAGES.get(suffix, "other")
    if language == "python":
        return _python_facts(source, package_modules)
    if language == "shell":
        return _shell_facts(source)
    what = {".js": "node", ".mjs": "node", ".ts": "node", ".rb": "ruby", ".pl": "perl"}.get(suffix, suffix or "?")
    return ScriptFacts(language, f"a {what} script: the base image has no {what}")


def _python_facts(source: str, package_modules: frozenset[str]) -> ScriptFacts:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ScriptFacts("python", f"does not parse as Python 3 ({exc.__class__.__name__})")
    mods: set[str] = set()
    calls: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):
            f = node.func
            calls.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    third = sorted(mods - set(sys.stdlib_module_names) - package_modules)
    if third:
        return ScriptFacts("python", f"imports {', '.join(third[:4])}: not in the base image's Python")
    net = sorted(mods & _NETWORK_MODULES)
    if net:
        return ScriptFacts("python", f"talks to the network ({', '.join(net)})")
    if "input" in calls or "getpass" in calls:
        return ScriptFacts("python", "asks questions interactively (input())")
    if "uuid" in mods and calls & {"uuid1", "uuid4"}:
        return ScriptFacts("python", "writes random ids (uuid): its output differs on every run")
    if "random" in mods and "seed" not in calls:
        return ScriptFacts("python", "draws random values without a seed: its output differs on every run")
    if "secrets" in mods:
        return ScriptFacts("python", "draws secrets: its output differs on every run")
    if calls & {"Popen", "run", "call", "check_output", "check_call", "system"} and "subprocess" in mods | {"os"}:
        progs = _subprocess_programs(tree)
        state = sorted(p for p in progs if p in _STATE_TOOLS)
        if state:
            return ScriptFacts("python", f"runs {state[0]} on the machine's own state ({_STATE_TOOLS[state[0]]}), "
                                         "which the task would have to build")
        missing = sorted(p for p in progs if p not in IMAGE_BINARIES)
        if missing:
            return ScriptFacts("python", f"runs {', '.join(missing[:3])}: not in the base image")
    reads_stdin = "stdin" in source
    return ScriptFacts("python", "", reads_stdin)


def _subprocess_programs(tree: ast.AST) -> set[str]:
    """First words of literal command lists and strings given to subprocess / os.system."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, (ast.List, ast.Tuple)) and first.elts and isinstance(first.elts[0], ast.Constant) \
                    and isinstance(first.elts[0].value, str):
                out.add(first.elts[0].value.rsplit("/", 1)[-1])
            elif isinstance(first, ast.Constant) and isinstance(first.value, str) and " " in first.value and \
                    isinstance(node.func, ast.Attribute) and node.func.attr in ("system", "run", "check_output"):
                out.add(first.value.split()[0].rsplit("/", 1)[-1])
    return {p for p in out if p}


def _shell_facts(source: str) -> ScriptFacts:
    try:
        cmds = script_commands(source)
    except Exception:   # noqa: BLE001 - a parser failure is a reason, not a crash
        return ScriptFacts("shell", "could not be read as a shell script")
    functions = {c[0] for c in cmds if c[1:3] == ["(", ")"]} | {c[1] for c in cmds if len(c) > 1 and c[0] == "function"}
    progs = set()
    for words in cmds:
        while words and ("=" in words[0] and not words[0].startswith("=")):
            words = words[1:]
        if words and words[0] not in _SHELL_BUILTINS and words[0] not in functions and words[0][:1].isalpha():
            progs.add(words[0].rsplit("/", 1)[-1])
    net = sorted(progs & _NETWORK_TOOLS)
    if net:
        return ScriptFacts("shell", f"talks to the network ({', '.join(net)})")
    state = sorted(progs & set(_STATE_TOOLS))
    if state:
        return ScriptFacts("shell", f"runs {state[0]} on the machine's own state ({_STATE_TOOLS[state[0]]}), "
                                    "which the task would have to build")
    # Only known programs count: other words are the script's functions, case labels or arithmetic
    # (`deployment)`, `((n++))`), which a static read cannot tell from a missing program.
    missing = sorted(p for p in progs if p in KNOWN_BINS and p not in IMAGE_BINARIES)
    if missing:
        return ScriptFacts("shell", f"runs {', '.join(missing[:3])}: not in the base image")
    if any(w and w[0] == "read" for w in cmds):
        return ScriptFacts("shell", "asks questions interactively (read)")
    if "$RANDOM" in source or "mktemp" in progs and "shuf" in progs:
        return ScriptFacts("shell", "draws random values: its output differs on every run")
    return ScriptFacts("shell", "")
