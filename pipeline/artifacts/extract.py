"""What a skill consumes and produces, as typed artifacts read off the whole SKILL.md.

Evidence, strongest first: commands in shell code blocks (and command-shaped inline code)
with their file arguments split by role (``-o``/``--output``/``>``/``tee`` write, ``<``
and other file arguments read, plus what the command itself needs or leaves — see
``vocabulary.READS``/``WRITES``); the skill's parsed inputs/outputs; file names and
formats in prose, whose role comes from the verb before them ("writes report.md",
"from data.csv"); then prose words ("a git repository", "localhost"). Files that belong to
the skill package itself (``scripts/``, ``references/``, SKILL.md) are its tooling, not
machine state, and are left out. Pure and line-by-line, so ~1,000 skills take well under
a second.
"""
from __future__ import annotations

import re
from bisect import bisect_right

from pipeline.artifacts import vocabulary as voc
from pipeline.artifacts.commands import commands, is_tool, record_command
from pipeline.shell_syntax import markdown_lines
from pipeline.artifacts.refs import CODE, FILE, INPUT_SECTION, WORD, ArtifactRef, Collector, SkillArtifacts

__all__ = ["ArtifactRef", "SkillArtifacts", "extract"]   # the data types live in refs.py

_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh", "terminal", "shell-session", "shellsession",
                          "fish", "cmd", "powershell", "ps1", "text", "sh-session"})
_LOOPBACK_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::\d+)?")
# A file name is found from its extension leftwards (a search for "." is fast; a pattern that
# starts at every word is not): ".gz" of "a/release.tar.gz", not ".tar".
_DOT_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/(-]|\.[A-Za-z0-9])")
_FILE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~/-")


def _alternation(words) -> str:
    """A regex matching any of ``words``, as a trie (Python's re tries a flat alternation of
    200 phrases one by one at every position; the trie is ~4x faster on real skills)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body
    return emit(trie)


# Names without an extension (Makefile, id_rsa); the others are found by _files.
_BARE_NAMES = tuple(f for f in voc.BY_FILENAME if "." not in f.lstrip("."))


def _bare_names(text: str) -> list[tuple[int, str]]:
    out = []
    for name in _BARE_NAMES:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            if (not at or text[at - 1] not in _FILE_CHARS) and (end == len(text) or text[end] not in _FILE_CHARS):
                out.append((at, name))
            at = text.find(name, end)
    return out


def _blank_urls(text: str) -> str:
    """URLs blanked out (same length, so offsets hold): a file name in a link is not a file here."""
    spans = []
    for marker, left in (("://", True), ("www.", False)):
        at = text.find(marker)
        while at >= 0:
            a = at
            while left and a > 0 and text[a - 1].isalnum():
                a -= 1
            b = at + len(marker)
            while b < len(text) and not text[b].isspace():
                b += 1
            spans.append((a, b))
            at = text.find(marker, b)
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _files(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every path-shaped name with an extension; not an e-mail's domain
    nor a shell variable's tail."""
    out: list[tuple[int, int, str]] = []
    last = 0
    for m in _DOT_EXT.finditer(text):
        j = m.start()
        stop = max(last, j - _MAX_NAME)   # bounded: a hostile megabyte of "a.b~a.b~" stays linear
        while j > stop and text[j - 1] in _FILE_CHARS:
            j -= 1
        last = m.end()
        if j == m.start() or (j > 0 and text[j - 1] in "$@{"):
            continue
        out.append((j, m.end(), text[j:m.end()]))
        if len(out) >= _MAX_MENTIONS:
            break
    return out


_WORD = re.compile(r"\b(" + _alternation(voc.WORDS) + r")\b")
_PRODUCE_VERB = re.compile(r"\b(?:writ(?:e|es|ing|ten)|sav(?:e|es|ed|ing)|generat\w*|produc\w*|creat\w*|export\w*|"
                           r"outputs?|emit\w*|render\w*|build\w*|compil\w*|clon\w*|dump\w*|initiali[sz]\w*|"
                           r"convert\w*\b.*?\b(?:to|into)|into|encrypt\w*|compress\w*|packag\w*|archiv\w*|"
                           r"download\w*|makes?|scaffold\w*|draft\w*|print\w* to)\b", re.I)
_CONSUME_WORD = re.compile(r"\b(?:from|reads?|reading|parses?|pars(?:ing|ed)|loads?|loading|takes?|given|input|"
                           r"in|inside|analy[sz]\w*|inspect\w*|validat\w*|check\w*|audit\w*|scan\w*|query\w*|"
                           r"lint\w*|review\w*|extract\w* from|existing)\s+(?:the\s+|a\s+|an\s+|your\s+)?\S*$", re.I)
_INPUT_HEAD = re.compile(r"\b(inputs?|prerequisites?|requirements?|requires|given|before you start)\b", re.I)
_OUTPUT_HEAD = re.compile(r"\b(outputs?|produces|results?|deliverables?|artifacts?|generated|created|"
                          r"files? (?:it )?(?:writes|creates))\b", re.I)
# Markdown a skill mentions in prose is nearly always its own documentation ("see examples.md");
# only the conventional project documents (README.md, CHANGELOG.md) are machine state it reads.
_PROJECT_DOC = re.compile(r"^(?:[\w.-]+/)*[A-Z][A-Z0-9_-]+\.(?:md|rst|txt)$")
_LINK_TARGET = re.compile(r"\]\([^)\n]{0,300}\)|\]\[[^\]\n]{0,100}\]|\[[^\]\n]{0,100}\.md\]")
_INLINE_CODE = re.compile(r"`([^`\n]{1,300})`")
_MAX_NAME = 255      # longest file name or path read; the role is read off this many characters before it
_MAX_MENTIONS = 2000  # file names and words read per skill: real ones name far fewer, a hostile one stays fast
_CLAUSE = re.compile(r"[.!?;:]\s|,\s+(?:then|and)\s")


def _blank(m: re.Match) -> str:
    return " " * len(m.group(0))


def _prose(c: Collector, items: list[tuple[int | None, str, str | None]], file_weight: float = FILE,
           word_weight: float = WORD) -> None:
    """File names and vocabulary words in prose lines ``(line, text, section role)``.

    Speed: the lines are joined and each pattern runs once over the whole text (blanking
    keeps offsets, so a match maps back to its line by bisection)."""
    if not items:
        return
    text = "\n".join(t for _, t, _ in items)
    starts = [0]
    for _, t, _ in items[:-1]:
        starts.append(starts[-1] + len(t) + 1)

    def at(pos: int) -> tuple[int, str]:
        i = bisect_right(starts, pos) - 1
        return i, text[max(starts[i], pos - _MAX_NAME):pos]

    def role_of(i: int, prefix: str) -> str:
        return items[i][2] or _role_before(prefix)

    low = text.lower()
    if "://" in low or "www." in low:
        if "localhost" in low or "127.0.0.1" in low or "0.0.0.0" in low or "[::1]" in low:
            for m in _LOOPBACK_URL.finditer(low):
                i, _ = at(m.start())
                c.add(items[i][2] or "consumes", "http-service", None, word_weight * 2, items[i][1], items[i][0])
        text = _blank_urls(text)
    if "](" in text or "][" in text or ".md]" in text:
        text = _LINK_TARGET.sub(_blank, text)
    found = _files(text)
    matches = [(a, token) for a, _, token in found]
    matches += _bare_names(text)
    for start, token in matches[:_MAX_MENTIONS]:
        i, prefix = at(start)
        role = role_of(i, prefix)
        if role == "produces" or voc.kind_of_file(token) != "markdown-doc" or _PROJECT_DOC.match(token):
            c.file(role, token, file_weight, items[i][1], items[i][0])
    if found:   # a word inside a file name ("report" of report.md) is not a second mention
        parts, last = [], 0
        for a, b, _ in found:
            parts += [text[last:a], " " * (b - a)]
            last = b
        text = "".join(parts) + text[last:]
    low = text.lower()
    for n, m in enumerate(_WORD.finditer(low)):
        if n >= _MAX_MENTIONS:
            break
        i, prefix = at(m.start())
        role, kind = role_of(i, prefix), voc.WORDS[m.group(1)]
        if role == "produces" or kind not in voc.OUTPUT_ONLY:
            c.add(role, kind, None, word_weight, items[i][1], items[i][0])


def _has_loopback(low: str) -> bool:
    return ("localhost" in low or "127.0.0.1" in low or "0.0.0.0" in low or "[::1]" in low) and \
        _LOOPBACK_URL.search(low) is not None


def _role_before(prefix: str) -> str:
    clause = _CLAUSE.split(prefix[-_MAX_NAME:])[-1]
    if _CONSUME_WORD.search(clause):
        return "consumes"
    return "produces" if _PRODUCE_VERB.search(clause) else "consumes"


def _body_start(lines: list[str]) -> int:
    if lines and lines[0].strip().lstrip("\ufeff") == "---":
        for i in range(1, min(len(lines), 400)):
            if lines[i].strip() == "---":
                return i + 1
    return 0


def extract(raw_text: str, *, bins=(), inputs=(), outputs=()) -> SkillArtifacts:
    """Typed artifacts and invoked tools of one SKILL.md (front matter included or not)."""
    c = Collector(frozenset(bins))
    _prose(c, [(None, str(item), "consumes") for item in inputs] + [(None, str(item), "produces") for item in outputs],
           INPUT_SECTION, INPUT_SECTION)
    prose: list[tuple[int | None, str, str | None]] = []
    lines = raw_text.splitlines()
    section_role: str | None = None
    for n, text, lang in markdown_lines(lines, _body_start(lines), _SHELL_LANGS):
        if lang is not None:
            if lang in _SHELL_LANGS:
                if text and not text.startswith("#"):
                    if _has_loopback(text.lower()):
                        c.add("consumes", "http-service", None, CODE, text, n)
                    for toks in commands(text):
                        record_command(c, toks, text, n, strict=lang in ("", "text", "console"))
            else:
                _code_other(c, text, lang, n)
            continue
        if text.lstrip().startswith("#"):
            head = text.lstrip("# ").strip()
            section_role = ("produces" if _OUTPUT_HEAD.search(head) else
                            "consumes" if _INPUT_HEAD.search(head) else None)
            continue
        if not text.strip():
            continue
        for code in _INLINE_CODE.findall(text) if "`" in text else ():
            toks = code.split()
            if len(toks) >= 2 and is_tool(toks[0], c.bins, strict=True):
                for cmd in commands(code):
                    record_command(c, cmd, text, n, strict=True)
        prose.append((n, text, section_role))
    _prose(c, prose)
    return c.result()


_PY_WRITE = re.compile(r"\.(?:to_\w+|write\w*|save\w*|dump|savefig|export\w*)\(|open\([^)]*['\"][wa]b?['\"]")


def _code_other(c: Collector, text: str, lang: str, line: int) -> None:
    """Code in a programming language: file names in it, read or written by the call they are in."""
    if lang in ("python", "py"):
        c.tools.setdefault("python3", None)
    if "." in text:
        clean = _blank_urls(text) if "://" in text else text
        for a, b, token in _files(clean):
            role = "produces" if _PY_WRITE.search(text[:a] + text[b:b + 3]) else "consumes"
            c.file(role, token, FILE, text.strip(), line)
    if "savefig(" in text or "plt.show(" in text:
        c.add("produces", "plot-image", None, FILE, text.strip(), line)
    if _has_loopback(text.lower()):
        c.add("consumes", "http-service", None, FILE, text.strip(), line)
