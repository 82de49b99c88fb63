"""The fidelity rubric, defined once: per (step, claimed skill) a score with its evidence.

  2  the step makes the agent do what the skill teaches: its reference solution runs the skill's own
     bundled script, or a command line its SKILL.md documents for the tool the skill is about
     (same tool and the same subcommand, or a documented flag of it);
  1  the step shares only a tool or a state kind (file format) with the skill;
  0  unrelated.

A step claims its skill only at 2 (CLAIMED_AT); below it the step is connective.

The offline scorer is deliberately conservative: a tool the skill only uses in set-up (an installer,
`git clone`, shell plumbing, a bare interpreter) never lifts a step to 2, a general-purpose text tool
(sort, grep, du) counts as what a skill is about only when the skill's name or description names it,
and a 2 carries two quotes, the SKILL.md line and the solution line, each verbatim in its text (a 2
whose quotes cannot be found is not given). Where it can still overrate: a step that runs a
documented subcommand on inputs the skill would never see (the form is right, the purpose may not
be), and a script named in SKILL.md that is not the skill's main one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from pipeline.shell_syntax import is_redirect, simple_commands

from .exercise.package import SKILLS_ROOT
from .skill_fit import _ASSIGNMENT, _PREFIXES, PLUMBING, WEAK_TOOLS, canonical_tool

SCORES = {2: "exercises the skill", 1: "shares a tool or file format only", 0: "unrelated"}
CLAIMED_AT = 2
VIAS = ("script", "command", "tool", "kind", "none")

# A fence may be indented (a block inside a list item).
_FENCE = re.compile(r"^[ \t]{0,8}(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^[ \t]{0,8}\1", re.M | re.S)
_SHELL_LANGS = {"", "bash", "sh", "shell", "console", "zsh", "terminal", "shell-session"}
_INLINE = re.compile(r"`([^`\n]{3,160})`")
_SCRIPT_REF = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.(?:py|sh|bash|mjs|js|rb|pl))")
# Set-up, not what a skill teaches: installers and fetchers, and the subcommands that install or fetch.
_INSTALLERS = frozenset({"apt", "apt-get", "brew", "pip", "pip3", "npm", "pnpm", "yarn", "cargo", "gem", "conda",
                         "uv", "pipx", "yum", "dnf", "apk", "snap", "npx", "curl", "wget", "go", "install"})
_SETUP_SUBCOMMANDS = frozenset({"install", "i", "ci", "clone", "upgrade", "update", "version", "help"})
# General-purpose text and file tools: a skill is about one only when its name or description says so.
GENERIC_TOOLS = frozenset("""
    du df wc sort uniq cut tr find grep sed awk column paste join comm diff cmp split stat file md5sum
    sha1sum sha256sum seq nl od hexdump base64 ps kill chmod chown touch less more watch make python3
    node perl ruby git tar gzip
""".split())
# Of those, the ones that are English words too ("make sure", "find out"): only the skill's name counts.
_WORDLIKE = frozenset("make find file split join sort watch kill touch less more comm cut diff stat seq".split())
_GENERIC_FLAGS = frozenset({"-h", "--help", "-v", "--version", "-V", "--verbose", "-q", "--quiet"})
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]{1,30}$")
_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_.+-]{1,30}$")
_INTERPRETERS = frozenset({"python3", "python", "bash", "sh", "node", "perl", "ruby", "uv", "deno", "bun", "zsh"})
_MORE_PREFIXES = frozenset({"nice", "ionice", "doas"})
_HEREDOC_START = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
QUOTE_CHARS = 240   # a quote is the line's start when longer: still verbatim, and task.toml stays readable


@dataclass(frozen=True)
class DocCommand:
    """A command SKILL.md documents: its tool, subcommand (or ''), flags, and the line it is on."""
    tool: str
    subcommand: str
    flags: frozenset[str]
    line: str


@dataclass(frozen=True)
class Teaching:
    """What a skill teaches that a solution can be checked against."""
    about: tuple[str, ...]                 # the tools the skill is about (not set-up tools)
    commands: tuple[DocCommand, ...]       # documented commands of those tools
    scripts: dict[str, str] = field(default_factory=dict)   # script path -> the SKILL.md line running it
    body: str = field(default="", repr=False)                # the SKILL.md text the quotes come from

    @property
    def exercisable(self) -> bool:
        return bool(self.commands or self.scripts)


@dataclass(frozen=True)
class RubricScore:
    score: int                              # 0, 1 or 2
    via: str                                # one of VIAS
    uses: str = ""                          # the script, "tool subcommand", or the shared tools / kinds
    skill_quote: str = ""                   # verbatim from SKILL.md (2 only)
    solution_quote: str = ""                # verbatim from the step's solution
    note: str = ""

    def evidence(self) -> dict:
        """What task.toml keeps beside the score (workbench.sandbox.task_toml.RubricEvidence)."""
        return {"via": self.via, "uses": self.uses, "skill_quote": self.skill_quote,
                "solution_quote": self.solution_quote, "note": self.note}


def _command_words(words: list[str]) -> list[str]:
    """A simple command without `sudo`, `env X=1`, `nice` and its redirections."""
    while words and (words[0] in _PREFIXES or words[0] in _MORE_PREFIXES or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif is_redirect(w):
            skip = True
        else:
            out.append(w)
    return out


def _doc_command(words: list[str], line: str) -> DocCommand | None:
    words = _command_words(words)
    if not words or not words[0][:1].islower():   # `SELECT …`, `Get-Content`: SQL or prose, not a command
        return None
    rest = words[1:]
    flags = frozenset(w.split("=", 1)[0] for w in rest if w.startswith("-") and w not in _GENERIC_FLAGS)
    # `git -C repo log`, `make -C dir test`: the folder after -C is no subcommand
    positional = [w for i, w in enumerate(rest) if not w.startswith("-") and (i == 0 or rest[i - 1] != "-C")]
    sub = positional[0] if positional and _SUBCOMMAND.match(positional[0]) else ""
    return DocCommand(canonical_tool(words[0]), sub, flags, line.strip()[:QUOTE_CHARS])


def documented_lines(body: str) -> list[str]:
    """Shell lines of SKILL.md, each verbatim: lines of fenced shell blocks (a `$ ` prompt and
    comment lines dropped) and inline code spans of two words or more."""
    out: list[str] = []
    for m in _FENCE.finditer(body or ""):
        if m.group(2).lower() not in _SHELL_LANGS:
            continue
        for raw in m.group(3).splitlines():
            line = raw.strip().removeprefix("$ ")
            if line and not line.startswith("#"):
                out.append(line)
    return out + [s.strip() for s in _INLINE.findall(body or "") if " " in s.strip()]


def _named_words(text: str) -> set[str]:
    """The words of a text as tool names, hyphenated names split too (`gzip-to-zstd`, `sqlite`)."""
    words = {w.strip(".") for w in re.findall(r"[a-z0-9][a-z0-9_.+-]*", text.lower())}
    return {canonical_tool(w) for w in words | {p for w in words for p in w.split("-")} if w}


def _is_script(word: str) -> bool:
    w = word.strip("'\"")
    return bool(_SCRIPT_REF.fullmatch(w)) and not w.startswith(("http", "/usr/", "/etc/"))


@lru_cache(maxsize=512)   # the composer scores every dry build of a step against the same skill
def teaching(body: str, name: str = "", description: str = "", known_tools: tuple[str, ...] = ()) -> Teaching:
    """What a skill teaches, read from its SKILL.md: the tools it is about (named in its name, else
    in its description, else a distinctive tool most of its documented commands run), their documented
    commands, and the scripts it runs. `known_tools`: the tools the skill's extraction found
    (pipeline.artifacts); when given, only those count, so a word of prose in backticks is no tool."""
    known = {canonical_tool(t) for t in known_tools}
    cmds: list[DocCommand] = []
    scripts: dict[str, str] = {}
    for line in documented_lines(body):
        for words in simple_commands(line):
            c = _doc_command(words, line)
            if c is None:
                continue
            cmds.append(c)
            head = _command_words(words)
            if c.tool in _INTERPRETERS or _is_script(head[0]):
                for w in head[:3]:
                    if _is_script(w):
                        scripts.setdefault(w.strip("'\"").removeprefix("./"), c.line)
                        break
    candidates = [c for c in cmds if c.tool not in PLUMBING and c.tool not in WEAK_TOOLS
                  and c.tool not in _INSTALLERS and c.tool not in _INTERPRETERS and _TOOL_NAME.match(c.tool)
                  and not _SCRIPT_REF.fullmatch(c.tool) and c.subcommand not in _SETUP_SUBCOMMANDS
                  and (not known or c.tool in known)]
    in_name, in_description = _named_words(name), _named_words(description)
    counts: dict[str, int] = {}
    for c in candidates:
        counts[c.tool] = counts.get(c.tool, 0) + 1
    # The name is the strongest word on what a skill is about: `using-tmux-for-interactive-commands`
    # is about tmux even though its description names `git rebase -i` as an example of a program.
    about = {t for t in counts if t in in_name} or \
        {t for t in counts if t in in_description and t not in _WORDLIKE}
    distinctive = {t: n for t, n in counts.items() if t not in GENERIC_TOOLS}
    # The tool most commands run stands in for a name only when the skill names none it documents
    # (a snyk skill whose examples pipe into jq is not about jq).
    if distinctive and not {c.tool for c in cmds} & (in_name | in_description):
        top, n = max(distinctive.items(), key=lambda kv: (kv[1], kv[0]))
        if n >= 2 and n * 3 >= len(candidates):
            about.add(top)
    return Teaching(tuple(sorted(about)), _core_commands(candidates, about, in_name | in_description), scripts,
                    body or "")


def _core_commands(candidates: list[DocCommand], about: set[str], named: set[str]) -> tuple[DocCommand, ...]:
    """The documented commands of the tools the skill is about; of a tool with subcommands whose
    name or description names some (`git-bisect-regression`), only those: its `git add` is set-up."""
    out = []
    for tool in sorted(about):
        mine = [c for c in candidates if c.tool == tool]
        core = {c.subcommand for c in mine if c.subcommand} & named
        out += [c for c in mine if not core or c.subcommand in core]
    return tuple(out)


def _solution_commands(solve: str):
    """(verbatim line, simple command) for each command of a solution, heredoc bodies left out;
    a command continued over lines is read whole and quoted by its first line."""
    lines = solve.splitlines()
    i, ends = 0, []
    while i < len(lines):
        raw = lines[i]
        i += 1
        if ends:
            if raw.strip() == ends[0]:
                ends.pop(0)
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        text = raw
        while text.endswith("\\") and i < len(lines):
            text = text[:-1] + " " + lines[i]
            i += 1
        ends = [m.group(2) for m in _HEREDOC_START.finditer(text)]
        for words in simple_commands(text):
            yield raw.strip()[:QUOTE_CHARS], words


_SHIPPED = re.compile(rf"^{re.escape(SKILLS_ROOT)}/[^/]+/")   # a shipped package's root


def _runs_script(words: list[str], script: str) -> bool:
    for w in words[:3]:   # `python3 /skills/x/scripts/a.py`, `bash scripts/a.sh`, `/skills/x/scripts/a.sh`
        w = w.strip("'\"").removeprefix("./")
        if w == script or w.endswith("/" + script):
            return True
        rel = _SHIPPED.sub("", w)   # SKILL.md may name it from its repository's root: `skills/x/scripts/a.py`
        if rel != w and "/" in rel and script.endswith("/" + rel):
            return True
    return False


def _same_command(doc: DocCommand, got: DocCommand) -> str:
    """What `got` shares with a documented command of the same tool: its subcommand, a flag, or ''."""
    if doc.subcommand:
        return doc.subcommand if doc.subcommand == got.subcommand else ""
    if got.subcommand:
        return ""
    shared = sorted(doc.flags & got.flags)
    return shared[0] if shared else ""


def _exercise(solve: str, teach: Teaching) -> RubricScore | None:
    """The first use of the skill's script or a documented command whose quotes hold."""
    for hit in _uses(solve, teach):
        if quotes_exist(hit, teach.body, solve):
            return hit
    return None


def _uses(solve: str, teach: Teaching):
    for line, raw_words in _solution_commands(solve):
        words = _command_words(raw_words)
        if not words:
            continue
        for script, doc_line in teach.scripts.items():
            if _runs_script(words, script):
                yield RubricScore(2, "script", script, doc_line, line, f"runs the skill's bundled {script}")
        got = _doc_command(words, line)
        if got is None or got.tool not in teach.about:
            continue
        for doc in teach.commands:
            shared = _same_command(doc, got) if doc.tool == got.tool else ""
            if shared:
                uses = f"{got.tool} {shared}" if doc.subcommand else got.tool
                yield RubricScore(2, "command", uses, doc.line, line, f"runs the documented `{got.tool} {shared}`")


def score_step(solve: str, teach: Teaching, *, shared_tools=(), shared_kinds=()) -> RubricScore:
    """The rubric score of one step's part of the solution against the skill it claims.
    `shared_tools` / `shared_kinds`: what the step shares with the skill otherwise (at most 1)."""
    hit = _exercise(solve, teach)
    if hit is not None:
        return hit
    if shared_tools:
        tools = sorted(shared_tools)
        line = next((ln for ln, w in _solution_commands(solve) if w and canonical_tool(w[0]) in tools), "")
        return RubricScore(1, "tool", ", ".join(tools), "", line, f"shares the tool {', '.join(tools)} only")
    if shared_kinds:
        kinds = ", ".join(sorted(shared_kinds))
        return RubricScore(1, "kind", kinds, note=f"shares the state kind {kinds} only")
    return RubricScore(0, "none", note="nothing of the skill in this step")


def quotes_exist(score: RubricScore, skill_md: str, solve: str) -> bool:
    """A 2 is only as good as its quotes: both must be verbatim in their texts."""
    if score.score < CLAIMED_AT:
        return True
    return bool(score.skill_quote) and score.skill_quote in skill_md and bool(score.solution_quote) \
        and score.solution_quote in solve


def usage_phrase(evidence: dict) -> str:
    """How a step at 2 uses its skill, for the instruction (names the script or tool, not the line)."""
    if evidence.get("via") == "script":
        return f"its bundled script `{evidence.get('uses', '')}`"
    tool = str(evidence.get("uses", "")).split(" ", 1)[0]
    return f"`{tool}` as its SKILL.md documents it"
