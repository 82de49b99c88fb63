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
from dataclasses import dataclass

from pipeline.artifacts import vocabulary as voc
from pipeline.binaries import KNOWN_BINS

CODE, INPUT_SECTION, FILE, WORD = 3.0, 3.0, 2.0, 1.0   # evidence weights


@dataclass(frozen=True)
class ArtifactRef:
    kind: str                 # a vocabulary kind name
    name: str | None          # the file name, or the qualifier (a language), or None
    evidence: str             # the text it was read from (trimmed)
    line: int | None          # 1-based line in the SKILL.md, None for parsed inputs/outputs


@dataclass(frozen=True)
class SkillArtifacts:
    tools: tuple[str, ...]               # binaries really invoked, in order of first use
    consumes: tuple[ArtifactRef, ...]    # strongest evidence first
    produces: tuple[ArtifactRef, ...]

    @property
    def consumed_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.kind for r in self.consumes))

    @property
    def produced_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.kind for r in self.produces))

    @property
    def empty(self) -> bool:
        return not (self.consumes or self.produces)


_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")
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
    out = []
    for m in _DOT_EXT.finditer(text):
        j = m.start()
        while j > 0 and text[j - 1] in _FILE_CHARS:
            j -= 1
        if j == m.start() or (j > 0 and text[j - 1] in "$@{"):
            continue
        out.append((j, m.end(), text[j:m.end()]))
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
# The skill package's own files and other skills' or agents' files: tooling, not machine state.
_PACKAGE_DIRS = ("scripts/", "references/", "reference/", "assets/", "templates/", "examples/", "agents/", "../",
                 "shared/", "rules/", ".claude/", ".agents/", ".cursor/", ".codex/", ".gemini/", "skills/")
# Markdown a skill mentions in prose is nearly always its own documentation ("see examples.md");
# only the conventional project documents (README.md, CHANGELOG.md) are machine state it reads.
_PROJECT_DOC = re.compile(r"^(?:[\w.-]+/)*[A-Z][A-Z0-9_-]+\.(?:md|rst|txt)$")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]|\[[^\]]*\.md\]")
_NOT_FILES = frozenset({"e.g", "i.e", "etc", "vs", "node.js", "next.js", "vue.js", "nuxt.js", "react.js", "d3.js",
                        "three.js", "socket.io", "chart.js", "express.js", "asp.net", "skill.md", "claude.md",
                        "agents.md", "readme.md"})
_OUT_FLAGS = frozenset({"-o", "--output", "--out", "--outfile", "--output-file", "--out-file", "-O", "--target",
                        "--dest", "--destination", "--save", "--export", "--write", "-w"})
# --junitxml=report.xml, --output-dir out/, --save-to x.json: a long flag named for a result
_OUT_FLAG_NAME = re.compile(r"^--[\w-]*(?:out|report|junit|save|export|dest|write|result)[\w-]*$")
_SKIP_PREFIX = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin", "!", "then", "do", "else",
                          "xargs", "watch", "timeout", "nice", "ionice", "doas"})
_NOT_TOOLS = frozenset({"cd", "export", "source", ".", "set", "unset", "alias", "if", "fi", "for", "while", "done",
                        "case", "esac", "function", "return", "local", "read", "echo", "printf", "true", "false",
                        "exit", "shift", "eval", "trap", "wait", "test", "[", "[[", "{", "}", "(", ")", "in", "let",
                        "declare", "readonly", "type", "which", "pwd", "sleep", "else", "elif", "until", "select",
                        # code pasted into a shell block
                        "import", "from", "def", "class", "with", "try", "except", "finally", "raise", "break",
                        "continue", "pass", "print", "const", "var", "async", "await", "lambda", "yield", "del",
                        "global", "assert", "not", "and", "or", "is", "none", "null"})
_TOOLISH = re.compile(r"^[a-z][a-z0-9_.+-]{1,30}$")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_SINGLE_QUOTED = re.compile(r"'[^']*'")
_DOUBLE_QUOTED = re.compile(r'"([^"]*)"')
_PLAIN_WORD = re.compile(r"^[^\s|;&<>]*$")
_SPLIT_CMD = re.compile(r"\s*(?:&&|\|\||;|\|(?!\|))\s*")
_INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun",
                           "uv", "npx", "tsx", "ts-node"})


class _Collector:
    def __init__(self, bins: frozenset[str]):
        self.bins = bins
        self.tools: dict[str, None] = {}
        self.refs: dict[tuple[str, str, str | None], list] = {}   # (role, kind, name) -> [weight, (line, seq), ref]
        self.order = 0

    def add(self, role: str, kind: str, name: str | None, weight: float, evidence: str, line: int | None) -> None:
        key = (role, kind, name)
        slot = self.refs.get(key)
        if slot is None:
            self.order += 1   # by line first: prose is read after the code, but its lines count in place
            self.refs[key] = [weight, (line if line is not None else -1, self.order), ArtifactRef(kind, name, evidence.strip()[:160], line)]
        else:
            slot[0] += weight

    def file(self, role: str, token: str, weight: float, evidence: str, line: int | None) -> tuple | None:
        """Record a file argument or mention by the kind its name signals; the key it went under."""
        token = token.strip("'\"`,;:()[]{}<>").removeprefix("./").lstrip("-")
        low = token.lower()
        if not token or low.rsplit("/", 1)[-1] in _NOT_FILES or low.startswith(_PACKAGE_DIRS) or "*" in token and "." not in token:
            return None
        kind = voc.kind_of_file(token)
        if kind is None:
            return None
        name = token if kind not in voc.QUALIFIED else voc.language_of_file(token)
        self.add(role, kind, name, weight, evidence, line)
        return (role, kind, name)

    def result(self) -> SkillArtifacts:
        def side(role: str) -> tuple[ArtifactRef, ...]:
            named = {k for (r, k, name) in self.refs if r == role and name is not None}
            made_first = {(k, name): slot[1] for (r, k, name), slot in self.refs.items()
                          if r == "produces" and name is not None}
            # a nameless ref (from a command or a word) adds its weight to the named ones of its kind
            rows = [(w, o, ref) for (r, _, _), (w, o, ref) in self.refs.items()
                    if r == role and (ref.name is not None or ref.kind not in named)
                    # a file the skill itself wrote before it reads it is an intermediate, not an input
                    and not (r == "consumes" and made_first.get((ref.kind, ref.name), (1 << 62, 0)) < o)]
            # per kind: total weight decides the kind's rank, then each ref by its own weight
            by_kind: dict[str, float] = {}
            for (r, _, _), (w, _, ref) in self.refs.items():
                if r != role:
                    continue
                by_kind[ref.kind] = by_kind.get(ref.kind, 0.0) + w
            first: dict[str, int] = {}
            for _, o, ref in rows:
                first[ref.kind] = min(first.get(ref.kind, o), o)
            rows.sort(key=lambda x: (-by_kind[x[2].kind], first[x[2].kind], -x[0], x[1]))
            return tuple(ref for _, _, ref in rows)
        return SkillArtifacts(tuple(self.tools), side("consumes"), side("produces"))


def _commands(line: str) -> list[list[str]]:
    line = line.strip()
    if line[:2] in ("$ ", "% ", "> "):   # a prompt
        line = line[2:]
    line = re.sub(r"\s#\s.*$", "", line)
    if "$(" in line or "`" in line:    # a command substitution is a command of its own
        line = line.replace("$(", " ; ").replace("`", " ; ")
    if "'" in line or '"' in line:
        # a quoted program (a jq filter, an awk script) is one argument, not commands or files
        line = _SINGLE_QUOTED.sub("''", line)
        line = _DOUBLE_QUOTED.sub(lambda m: m.group(1) if _PLAIN_WORD.match(m.group(1)) else '""', line)
    out = []
    for seg in _SPLIT_CMD.split(line):
        toks = seg.split()
        while toks and (toks[0] in _SKIP_PREFIX or ("=" in toks[0] and not toks[0].startswith("-"))):
            toks = toks[1:]
        if toks:
            out.append(toks)
    return out


def _command_key(toks: list[str]) -> tuple[str, str]:
    exe = toks[0].rsplit("/", 1)[-1]
    sub = next((t for t in toks[1:] if not t.startswith("-")), "")
    return exe, sub


def _is_tool(exe: str, bins: frozenset[str], strict: bool) -> bool:
    if exe in _NOT_TOOLS:
        return False
    if exe in KNOWN_BINS or exe in voc.COMMANDS or exe in bins:
        return True
    return not strict and bool(_TOOLISH.match(exe)) and "." not in exe


def _code_command(c: _Collector, toks: list[str], evidence: str, line: int, strict: bool) -> None:
    exe, sub = _command_key(toks)
    if not _is_tool(exe, c.bins, strict) or (len(toks) > 1 and toks[1] in ("=", "+=", ":=", "==", "(", ":")):
        return
    c.tools.setdefault(exe, None)
    flags = " ".join(t for t in toks[1:] if t.startswith("-"))
    keys = [exe, f"{exe} {sub}"] + [f"{exe} {t}" for t in toks[1:4] if t.startswith("-")]
    for key in keys:
        for k in voc.READS.get(key, ()):
            c.add("consumes", k, voc.LANGUAGE_BY_COMMAND.get(exe) if k in voc.QUALIFIED else None, CODE, evidence,
                  line)
        for k in voc.WRITES.get(key, ()):
            c.add("produces", k, None, CODE, evidence, line)
    if exe == "tar":
        mode = flags.replace("-", "") + (toks[1] if len(toks) > 1 and not toks[1].startswith("-") else "")
        role = "produces" if "c" in mode or "--create" in flags else "consumes"
        c.add(role, "tar-archive", None, CODE, evidence, line)
        if role == "consumes" and ("x" in mode or "--extract" in flags):
            c.add("produces", "directory-tree", None, CODE, evidence, line)
    args = toks[1:]
    positional_out = exe in ("convert", "magick", "cp", "mv", "ffmpeg", "rsync", "ln", "install")
    last_file = None
    i = 0
    while i < len(args):
        t = args[i]
        role = "consumes"
        if t in (">", ">>", "1>", "2>") or (t.startswith(">") and len(t) > 1):
            t = t.lstrip(">") or (args[i + 1] if i + 1 < len(args) else "")
            i += 0 if args[i].lstrip(">") else 1
            role = "produces"
        elif t == "<":
            t = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        elif t in _OUT_FLAGS or _OUT_FLAG_NAME.match(t.split("=", 1)[0]):
            if "=" in t:
                t = t.split("=", 1)[1]
            else:
                t = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            role = "produces"
        elif t.startswith("-") and "=" in t:
            t = t.split("=", 1)[1]
        elif t.startswith("-"):
            i += 1
            continue
        if exe == "tee" or (exe in ("tar", "zip", "7z") and role == "consumes" and last_file is None
                            and ("c" in flags or exe != "tar") and voc.kind_of_file(t) in
                            ("tar-archive", "zip-archive")):
            role = "produces"
        if exe in _INTERPRETERS and last_file is None and voc.kind_of_file(t.strip("'\"")) in ("source-tree",
                                                                                            "shell-script"):
            last_file = t   # the script run is the skill's tool, not its input
            i += 1
            continue
        before = len(c.refs)
        key = c.file(role, t, CODE, evidence, line)
        if key:
            last_file = (t, key, len(c.refs) > before)
        i += 1
    # cp a b, convert in.png out.jpg, ffmpeg -i in.mp4 out.webm: the last file named is the output
    if positional_out and isinstance(last_file, tuple) and last_file[1][0] == "consumes" and \
            sum(1 for a in args if voc.kind_of_file(a.strip("'\"")) is not None) >= 2:
        if last_file[2]:
            c.refs.pop(last_file[1], None)
        c.file("produces", last_file[0], CODE, evidence, line)


def _blank(m: re.Match) -> str:
    return " " * len(m.group(0))


def _prose(c: _Collector, items: list[tuple[int | None, str, str | None]], file_weight: float = FILE,
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
        return i, text[starts[i]:pos]

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
    for start, token in matches:
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
    for m in _WORD.finditer(low):
        i, prefix = at(m.start())
        role, kind = role_of(i, prefix), voc.WORDS[m.group(1)]
        if role == "produces" or kind not in voc.OUTPUT_ONLY:
            c.add(role, kind, None, word_weight, items[i][1], items[i][0])


def _has_loopback(low: str) -> bool:
    return ("localhost" in low or "127.0.0.1" in low or "0.0.0.0" in low or "[::1]" in low) and \
        _LOOPBACK_URL.search(low) is not None


def _role_before(prefix: str) -> str:
    clause = re.split(r"[.!?;:]\s|,\s+(?:then|and)\s", prefix)[-1]
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
    c = _Collector(frozenset(bins))
    _prose(c, [(None, str(item), "consumes") for item in inputs] + [(None, str(item), "produces") for item in outputs],
           INPUT_SECTION, INPUT_SECTION)
    prose: list[tuple[int | None, str, str | None]] = []
    pending: list[str] = []
    lines = raw_text.splitlines()
    fence: str | None = None
    lang = ""
    section_role: str | None = None
    for n in range(_body_start(lines), len(lines)):
        text = lines[n]
        m = _FENCE.match(text) if "``" in text or "~~" in text else None
        if m:
            if fence is None:
                fence, lang = m.group(1)[:3], m.group(2).lower()
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is not None:
            if lang in _SHELL_LANGS:
                stripped = text.strip()
                if stripped.endswith("\\"):      # continued: the next line holds more arguments
                    pending.append(stripped[:-1])
                    continue
                if pending:
                    stripped, pending = " ".join(pending + [stripped]), []
                if stripped and not stripped.startswith("#"):
                    if _has_loopback(stripped.lower()):
                        c.add("consumes", "http-service", None, CODE, stripped, n + 1)
                    for toks in _commands(stripped):
                        _code_command(c, toks, stripped, n + 1, strict=lang in ("", "text", "console"))
            else:
                _code_other(c, text, lang, n + 1)
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
            if len(toks) >= 2 and _is_tool(toks[0], c.bins, strict=True):
                for cmd in _commands(code):
                    _code_command(c, cmd, text, n + 1, strict=True)
        prose.append((n + 1, text, section_role))
    _prose(c, prose)
    return c.result()


_PY_WRITE = re.compile(r"\.(?:to_\w+|write\w*|save\w*|dump|savefig|export\w*)\(|open\([^)]*['\"][wa]b?['\"]")


def _code_other(c: _Collector, text: str, lang: str, line: int) -> None:
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
