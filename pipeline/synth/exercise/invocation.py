"""How SKILL.md runs a bundled script, read into slots a task can fill.

A documented line such as `python scripts/funnel_analyzer.py funnel.json --json > report.txt` becomes
the script, literal arguments kept as written (`--json`), file arguments the task must provide
(`funnel.json`: an input; after `-o`/`--output` or a `>`: the output) and whether the result is what
the script prints. A line that cannot be filled gives the reason instead: a placeholder that is not a
file (`<namespace>`), a folder argument, a call continued over lines, only `--help`, no input at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.shell_syntax import is_redirect, names_file, simple_commands, unquote

_OUTPUT_FLAGS = frozenset({"-o", "--output", "--out", "--output-file", "--outfile", "--output_file", "-O",
                           "--output-path", "--dest", "--report"})
FILE_EXTENSIONS = frozenset("""json csv tsv txt md markdown log yaml yml xml html htm ini toml conf cfg sql py js
    ts sh nwk tre newick fasta fa jsonl ndjson env properties rst tex bib srt vtt""".split())
_PLACEHOLDER = re.compile(r"^<[^<>]+>$|^\{[^{}]*\|[^{}]*\}$|^\.\.\.$|^[A-Z][A-Z0-9_]{2,}$")
_PATHLIKE = re.compile(r"^(?:/?[\w.<>{}-]+/)*<?[\w.{}-]+>?$")
# A value with these is a template (`<user>`, `{a|b}`, `C:\\Users\\…`) or cannot be said in a sentence.
_ODD = re.compile(r"[<>{}|\\`\n]|\.\.\.|\"\"\"")
_OTHER_FILE = re.compile(r"^[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5}$")   # `prod.db`, `model.gguf`: a file, not a value
_HELP = frozenset({"-h", "--help", "help"})
_INTERPRETERS = frozenset({"python", "python3", "bash", "sh", "uv", "env"})


@dataclass(frozen=True)
class Slot:
    kind: str        # literal | input | output (a file argument) | stdout (a `>` redirect) | stdin
    text: str        # the literal as written, or the documented file name (placeholders unwrapped)

    @property
    def ext(self) -> str:
        base = self.text.rstrip("/").rsplit("/", 1)[-1]
        return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


@dataclass(frozen=True)
class Invocation:
    script: str                  # the script's path in the package
    doc_line: str                # the SKILL.md line, verbatim
    slots: tuple[Slot, ...]      # the arguments after the script, in order
    prints: bool                 # the result is what the script prints (no output file argument)

    @property
    def stdout_name(self) -> str:
        """The file name SKILL.md redirects the printed result to ('' when it does not)."""
        return next((s.text for s in self.slots if s.kind == "stdout"), "")

    @property
    def inputs(self) -> list[Slot]:
        return [s for s in self.slots if s.kind in ("input", "stdin")]

    @property
    def settings(self) -> list[str]:
        return [s.text for s in self.slots if s.kind == "literal"]


class NotFillable(ValueError):
    """The documented call cannot be filled by a task (the message says why)."""


def _file_like(word: str) -> str | None:
    """The file a word names (placeholder brackets dropped), or None when it names none."""
    w = word.strip()
    if w.startswith("<") and w.endswith(">"):
        w = w[1:-1].strip()
    if not _PATHLIKE.match(w) or w.startswith("-") or "://" in w:
        return None
    base = w.rstrip("/").rsplit("/", 1)[-1]
    ext = base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""
    return w if ext in FILE_EXTENSIONS else None


def _drop_optional(words: list[str]) -> list[str]:
    """`[--backup]`, `[--lat L --lon M]`: optional parts documented in brackets are left out."""
    out, depth = [], 0
    for w in words:
        opens, closes = w.count("["), w.count("]")
        if depth or (w.startswith("[") and not w.startswith("[[")):
            depth += opens - closes
            continue
        out.append(w)
    return out


def continued(doc_line: str, body: str) -> str:
    """The documented call with the lines it continues over (`… \\`) joined, as the shell reads it."""
    lines = body.splitlines()
    for i, raw in enumerate(lines):
        if raw.strip().removeprefix("$ ") != doc_line.strip():
            continue
        text, j = doc_line.strip(), i + 1
        while text.endswith("\\") and j < len(lines) and j - i <= 12:
            text = text[:-1].rstrip() + " " + lines[j].strip()
            j += 1
        return text
    return doc_line.strip()


def read_invocation(script: str, doc_line: str, body: str = "") -> Invocation:
    """The documented call of `script` on `doc_line` (continued lines of `body` joined); NotFillable
    says why a task cannot make it."""
    line = continued(doc_line, body) if body else doc_line.strip()
    if line.endswith("\\"):
        raise NotFillable("the documented call continues over several lines")
    for raw in simple_commands(line):
        words = [unquote(w) for w in raw]
        idx = next((i for i, w in enumerate(words[:3]) if w.strip("'\"").removeprefix("./").endswith(script)
                    or script.endswith(w.strip("'\"").removeprefix("./"))), None)
        if idx is None or any(w not in _INTERPRETERS and not w.startswith("-") for w in words[:idx]):
            continue
        return _slots(script, line, _drop_optional(words[idx + 1:]))
    raise NotFillable("the documented line does not run the script as a command")


def _slots(script: str, line: str, words: list[str]) -> Invocation:
    if any(w in _HELP for w in words):
        raise NotFillable("the documented call only asks for --help")
    slots: list[Slot] = []
    prints, i = True, 0
    while i < len(words):
        w = words[i]
        if is_redirect(w):
            target = words[i + 1] if i + 1 < len(words) else ""
            if names_file(w) and w.lstrip("0123456789").startswith(">") and not w.startswith("2"):
                if not _file_like(target):
                    raise NotFillable(f"redirect {w} {target} names no file of a known type")
                slots.append(Slot("stdout", _file_like(target)))
            elif w.startswith("<") and names_file(w):
                f = _file_like(target)
                if not f:
                    raise NotFillable(f"reads stdin from {target!r}, which names no file we can provide")
                slots.append(Slot("stdin", f))
            i += 2
            continue
        flag = w.split("=", 1)[0]
        if flag in _OUTPUT_FLAGS:
            target = w.split("=", 1)[1] if "=" in w else (words[i + 1] if i + 1 < len(words) else "")
            if not target or target.endswith("/") or not _file_like(target):
                raise NotFillable(f"writes into a folder or an unnamed place ({w} {target})".strip())
            slots += [Slot("literal", flag), Slot("output", _file_like(target))]
            prints = False
            i += 1 if "=" in w else 2
            continue
        f = _file_like(w)
        if f:
            slots.append(Slot("input", f))
        elif _OTHER_FILE.match(w):
            raise NotFillable(f"the argument {w} is a file of a type a task cannot make from a sample")
        elif w.startswith(("~", "/", "./", "../")) or "/" in w.strip("/"):
            raise NotFillable(f"the argument {w} is a folder or a path on the author's machine")
        elif _PLACEHOLDER.match(w) or "path/to" in w or w.endswith("/") or _ODD.search(w):
            raise NotFillable(f"the argument {w} is a placeholder for something a task cannot make "
                              "(not a file of a known type)")
        else:
            slots.append(Slot("literal", w))
        i += 1
    if not any(s.kind in ("input", "stdin") for s in slots) and not any(not s.text.startswith("-")
                                                                       for s in slots if s.kind == "literal"):
        # a call with values (`--keywords "a,b"`, `--cvr 0.05`) is a task; a bare one reads the machine's state
        raise NotFillable("the documented call reads no input file and passes no values "
                          "(it runs on built-in or live data)")
    return Invocation(script, line, tuple(slots), prints)
