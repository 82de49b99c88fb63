"""Spotting what a shell script runs, for the guards: its logical lines (continuations joined,
heredoc bodies skipped), the simple commands on each (argv lists, wrappers like sudo, env and
timeout seen through, `bash -c` strings opened), and which of them reach a network or a
package registry. Approximate by design: it reads text, never runs it.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"})

_URL = re.compile(r"\b(?:https?|ftp|git|ssh|rsync)://(\[[^\]]+\]|[^/\s:'\"]+)", re.I)
_SCP_URL = re.compile(r"^[\w.-]+@[\w.-]+:")           # git@github.com:owner/repo
_FETCHERS = frozenset({"curl", "wget", "aria2c", "lynx", "http", "https", "axel"})
_GIT_REMOTE = frozenset({"clone", "fetch", "pull", "ls-remote", "submodule", "push"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec", "nice", "stdbuf", "xargs", "timeout"})
# Package managers and the subcommands that go to their registry.
_REGISTRY = {
    "pip": {"install", "download", "wheel"}, "pipx": {"install", "run"}, "poetry": {"install", "add", "update"},
    "npm": {"install", "i", "ci", "add", "update", "upgrade", "exec"}, "yarn": {"install", "add", "upgrade", "dlx"},
    "pnpm": {"install", "i", "add", "update", "dlx"}, "bun": {"install", "i", "add", "x"},
    "apt-get": {"install", "update", "upgrade", "dist-upgrade", "source", "download", "build-dep"},
    "apt": {"install", "update", "upgrade", "full-upgrade"}, "aptitude": {"install", "update"},
    "apk": {"add", "update", "upgrade", "fetch"}, "yum": {"install", "update", "upgrade"},
    "dnf": {"install", "update", "upgrade"}, "microdnf": {"install"}, "zypper": {"install", "in", "refresh"},
    "brew": {"install", "update"}, "gem": {"install", "update"}, "cargo": {"install", "add", "fetch"},
    "go": {"get", "install", "mod"}, "conda": {"install", "create", "update"}, "mamba": {"install", "create"},
    "composer": {"install", "require", "update"}, "cpanm": None, "cpan": None, "npx": None, "bunx": None,
    "docker": {"pull", "run", "build", "login", "push", "create"}, "podman": {"pull", "run", "build", "create"},
    "skopeo": None, "crane": None,
}
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w]*)\1")

@dataclass(frozen=True)
class Found:
    line: int
    what: str


def network_uses(script: str) -> list[Found]:
    """Commands of a shell script that reach a network or a package registry (line-numbered;
    heredoc bodies are data and not read; loopback URLs are fine)."""
    found: list[Found] = []
    for line_no, text in logical_lines(script):
        for argv in commands(text):
            what = _network_use(argv)
            if what:
                found.append(Found(line_no, what))
    return found


def logical_lines(script: str) -> list[tuple[int, str]]:
    """(first line number, text) per logical line: continuations joined, heredoc bodies skipped."""
    out: list[tuple[int, str]] = []
    lines = script.splitlines()
    i, pending, start, heredoc = 0, "", 0, None
    while i < len(lines):
        line = lines[i]
        i += 1
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        if not pending:
            start = i
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        text, pending = pending + line, ""
        out.append((start, text))
        m = _HEREDOC.search(text)
        if m:
            heredoc = m.group(2)
    if pending:
        out.append((start, pending))
    return out


def commands(text: str, depth: int = 0) -> list[list[str]]:
    """The simple commands of one shell line, as argv lists (approximate, for spotting programs)."""
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:                           # unbalanced quotes: fall back to words
        tokens = re.split(r"\s+|([;&|()])", text)
        tokens = [t for t in tokens if t]
    out, argv = [], []
    for tok in tokens + [";"]:
        if tok and set(tok) <= set(";&|()<>"):
            if argv:
                out.append(argv)
            argv = []
            continue
        argv.append(tok.lstrip("$`"))
    nested = []
    for argv in out:
        core = strip_wrappers(argv)
        if depth < 2 and len(core) >= 3 and PurePosixPath(core[0]).name in ("bash", "sh") and core[1] == "-c":
            nested += commands(core[2], depth + 1)
    return out + nested


def strip_wrappers(argv: list[str]) -> list[str]:
    i = 0
    while i < len(argv) and (re.match(r"^[A-Za-z_]\w*=", argv[i]) or PurePosixPath(argv[i]).name in _WRAPPERS
                             or (i > 0 and argv[i].startswith("-") and PurePosixPath(argv[i - 1]).name in _WRAPPERS)
                             or (i > 0 and re.fullmatch(r"[\d.]+[smhd]?", argv[i])
                                 and PurePosixPath(argv[i - 1]).name == "timeout")):
        i += 1
    return argv[i:]


def _network_use(argv: list[str]) -> str:
    core = strip_wrappers(argv)
    if not core:
        return ""
    prog = PurePosixPath(core[0]).name
    args = core[1:]
    if re.fullmatch(r"python3?(\.\d+)?", prog) and args[:2] == ["-m", "pip"]:
        prog, args = "pip", args[2:]
    elif prog == "uv" and args[:1] == ["pip"]:
        prog, args = "pip", args[1:]
    elif re.fullmatch(r"pip3?(\.\d+)?", prog):
        prog = "pip"
    words = [a for a in args if not a.startswith("-")]
    if prog in _FETCHERS:
        remote = [a for a in args if _remote_url(a)]
        return f"fetches {remote[0]} ({prog})" if remote else ""
    if prog == "git" and words[:1] and words[0] in _GIT_REMOTE:
        remote = [a for a in args if _remote_url(a) or _SCP_URL.match(a)]
        return f"talks to a remote repository (git {words[0]} {remote[0]})" if remote else ""
    if prog in _REGISTRY:
        subs = _REGISTRY[prog]
        if prog == "pip" and "--no-index" in args:
            return ""                            # local wheels only
        if subs is None or (words and words[0] in subs):
            return f"installs or pulls from a package registry ({prog}{' ' + words[0] if words and subs else ''})"
    return ""


def _remote_url(arg: str) -> bool:
    m = _URL.search(arg)
    return bool(m) and m.group(1).lower() not in LOOPBACK
