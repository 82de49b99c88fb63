"""Shell syntax read off text, for every reader that asks what commands a text runs.

(a) ``markdown_lines``: the lines of a Markdown text with the fence each lies in, a shell
line continued with a backslash joined to the rest of its command; (b) ``simple_commands``:
one command line split, quote-aware, into its simple commands (at ``|``, ``;``, ``&&``,
``||``, ``&``, ``$(…)``, backticks and braces), each a list of raw tokens with quotes kept
and redirections (``>``, ``2>>``, ``2>&1``, ``<``) kept as tokens of their own, so a reader
can tell an output file from an input. What a command means (set-up or work, the files it
writes, the tool a solution uses) is each reader's own business.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")
# One token: a separator, a redirection, or a word (quoted parts and escapes kept inside it;
# an unbalanced quote is an ordinary character, as an example's stray quote is; `<topic>`
# with no space inside is a documentation placeholder, not two redirections).
_TOKEN = re.compile(r"""[^\S\n]*(?:
    (?P<sep>\|\||&&|\$\(|[|;&`\n])
  | (?P<redir>(?!<[^\s<>;&]+>)\d*(?:>>|>&|&>>?|<<<|<>|[<>])(?:&?\d+-?|&-)?)
  | (?P<word>(?:<[^\s<>;&]+>|'[^']*'|"(?:[^"\\]|\\.)*"|\\.|\$(?!\()|[^\s|;&<>`'"\\()$]|['"\\])+)
  | (?P<paren>[()])
  | $)""", re.X)
# A line with none of these is one simple command of plain words (most lines: split, fast).
_PLAIN_LINE = re.compile(r"^[^|;&<>'\"\\$`()#{}\n!]*$")
_OPENERS = frozenset({"then", "do", "else", "!"})
_REDIRECT = re.compile(r"^\d*(?:>>|>&|&>>?|<<<|<>|[<>])(?:&?\d+-?|&-)?$")
_REDIRECT_START = frozenset("<>&0123456789")
_FD_COPY = re.compile(r"[<>]&(?:\d+-?|-)$")   # 2>&1, >&2: no file named
_UNQUOTE = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1[^\n]*\n.*?\n\s*\2\s*(?=\n|$)", re.S)
_ARITH = re.compile(r"\$\(\([^)]*\)\)")


def markdown_lines(lines: list[str], start: int, joined: frozenset[str] | set[str]
                   ) -> Iterator[tuple[int, str, str | None]]:
    """(1-based line, text, language of the open fence or None outside one) of each line from
    `start`; fence lines are left out. In a fence of a `joined` language a line ending in a
    backslash is joined to the next, stripped (reported at its first line)."""
    fence: str | None = None   # the opening fence's marker, None outside fences
    lang = ""
    pending: tuple[int, str] | None = None
    for i in range(start, len(lines)):
        text = lines[i]
        m = FENCE.match(text) if "``" in text or "~~" in text else None
        if m:
            if fence is None:
                fence, lang = m.group(1)[:3], m.group(2).lower()
                continue
            if m.group(1).startswith(fence):
                fence = None
                if pending:   # a block that ends on a continued line: what is there is the command
                    yield pending[0] + 1, pending[1], lang
                    pending = None
            continue   # a fence of another marker inside a block is neither code nor a fence
        if fence is None or lang not in joined:
            yield i + 1, text, (lang if fence is not None else None)
            continue
        stripped = text.strip()
        if pending:
            pending = (pending[0], pending[1] + " " + stripped)
        else:
            pending = (i, stripped)
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        yield pending[0] + 1, pending[1], lang
        pending = None
    if pending:
        yield pending[0] + 1, pending[1], lang


def simple_commands(line: str) -> list[list[str]]:
    """The simple commands of one command line, in order, as raw tokens: `a x | b > out; c`
    gives [[a, x], [b, >, out], [c]]. A word starting with an unquoted # ends the line; a
    subshell's or a substitution's commands come in place (`echo $(date +%F)`: echo, date)."""
    if is_plain(line):
        words = line.split()
        if not words or words[0] not in _OPENERS:
            return [words] if words else []
    out: list[list[str]] = []
    seg: list[str] = []
    outer: list[list[str]] = []   # the commands a $( … ) or ( … ) interrupts, innermost last
    placed: set[int] = set()

    def place(cmd: list[str]) -> None:
        if cmd and id(cmd) not in placed:
            out.append(cmd)
            placed.add(id(cmd))

    pos, end = 0, len(line)
    while pos < end:
        m = _TOKEN.match(line, pos)
        if m is None:   # cannot happen (every character is some token); safe all the same
            break
        pos = m.end()
        kind = m.lastgroup
        tok = m.group(kind) if kind else ""
        if kind == "word":
            if tok.startswith("#"):
                nl = line.find("\n", m.start())   # in a script the comment ends with its line
                if nl < 0:
                    break
                pos = nl
                continue
            if tok in ("{", "}") or (not seg and tok in _OPENERS):
                kind = "sep"   # a group's braces and the words that open a list separate commands
            else:
                seg.append(tok)
                continue
        elif kind == "redir":
            seg.append(tok)
            continue
        elif kind == "paren":
            if tok == "(" and seg:
                seg.append(tok)   # `norm() {`, `[(x)]`: part of what is written, not a subshell
                continue
            if tok == ")" and "(" in seg:
                seg.append(tok)
                continue
        elif kind is None:
            break      # the end of the line
        if tok in ("$(", "("):
            place(seg)
            outer.append(seg)      # the command goes on after the substitution
            seg = []
        elif tok == ")" and outer:
            place(seg)
            seg = outer.pop()
        elif tok == ")":
            seg = []   # `*.py)`, `host)`: a case pattern, not a command
        else:
            place(seg)
            seg = []
    place(seg)
    return out


def script_commands(script: str) -> list[list[str]]:
    """The simple commands of a whole shell script: heredoc bodies and arithmetic left out,
    each line (backslash continuations joined) a command line of its own."""
    text = _HEREDOC.sub("\n", script) if "<<" in script else script
    text = text.replace("\\\n", " ")   # a continued line is one command with the next
    if "$((" in text:
        text = _ARITH.sub(" 0 ", text)
    return simple_commands(text)


def is_plain(line: str) -> bool:
    """No quote, separator, redirection, substitution or comment: one command of plain words."""
    return _PLAIN_LINE.match(line) is not None


def is_redirect(token: str) -> bool:
    return token[:1] in _REDIRECT_START and _REDIRECT.match(token) is not None


def names_file(redirect: str) -> bool:
    """`> out.txt`, `2>> log`, `< in`: the next token is a file; `2>&1` names none."""
    return not _FD_COPY.search(redirect)


def unquote(token: str) -> str:
    """The word the shell passes: quotes removed, escapes resolved."""
    if "'" not in token and '"' not in token and "\\" not in token:
        return token
    return _UNQUOTE.sub(lambda m: m.group(1) if m.group(1) is not None else
                        m.group(2).replace('\\"', '"') if m.group(2) is not None else m.group(3), token)


# The comment line both synthesizers write before each step of a solve.sh: offline
# `# --- step 2 (csv-filter) ---` (pipeline/synth/compose.py), LLM `# step 2: …` (the prompt).
STEP_MARK = re.compile(r"^\s*#+\s*-*\s*step\s+(\d+)\b", re.I | re.M)
_OPEN_WORDS = frozenset({"if", "case", "for", "while", "until", "select", "{"})
_CLOSE_WORDS = frozenset({"fi", "esac", "done", "}"})
_AFTER_WHICH_A_COMMAND = frozenset({";", "&&", "||", "|", "&", "then", "do", "else", "elif", "!", "{", "(", ")", "time"})
_HEREDOC_START = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_LINE_TOKEN = re.compile(r"""\\.|'[^']*'|"(?:[^"\\]|\\.)*"|\$\(|&&|\|\||[;&|()]|[^\s;&|()'"\\]+|['"]""")


def top_level_commands(script: str) -> list[tuple[int, int]]:
    """The line spans [start, end) (0-based) of a script's top-level commands: a command's
    continued lines, its heredoc bodies, a multi-line quote and a whole compound command
    (if … fi, loops, case … esac, { … }, ( … ), a function) are one span. Blank and comment
    lines belong to none. Reserved words count only where a command starts, as in bash."""
    lines = script.splitlines()
    spans: list[tuple[int, int]] = []
    start, depth, parens, heredocs, quote = None, 0, 0, [], ""
    for i, line in enumerate(lines):
        if heredocs:                                   # a heredoc body: only its end matters
            if line.strip() == heredocs[0]:
                heredocs.pop(0)
            if not heredocs and start is not None and depth == 0 and parens == 0 and not quote:
                spans.append((start, i + 1))
                start = None
            continue
        text = line
        if quote:                                      # inside a quote opened on an earlier line
            close = text.find(quote)
            if close < 0:
                continue
            text, quote = text[close + 1:], ""
        if start is None:
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            start = i
        at_command = True
        for m in _LINE_TOKEN.finditer(text):
            tok = m.group(0)
            if tok.startswith("#") and (m.start() == 0 or text[m.start() - 1].isspace()):
                break                                  # a comment to the end of the line
            if tok in ("'", '"'):                      # an unclosed quote: goes on next line
                quote = tok
                break
            if tok in ("(", "$("):
                parens += 1
            elif tok == ")":
                parens = max(0, parens - 1)            # `*.py)`: a case pattern, nothing closes
            elif at_command and tok in _OPEN_WORDS:
                depth += 1
            elif at_command and tok in _CLOSE_WORDS:
                depth = max(0, depth - 1)
            at_command = tok in _AFTER_WHICH_A_COMMAND or (at_command and "=" in tok and not tok.startswith("="))
        heredocs.extend(m.group(2) for m in _HEREDOC_START.finditer(text))
        if heredocs or quote or line.endswith("\\") or depth or parens:
            continue
        spans.append((start, i + 1))
        start = None
    if start is not None:                              # an unfinished construct runs to the end
        spans.append((start, len(lines)))
    return spans
