"""How SKILL.md runs a program of the base image on a file, read into slots a task can fill.

`jq -r '.data[] | [.id, .title] | @tsv' responses/page-001.json | sort > tickets.tsv` becomes its pipeline
of words, the file arguments marked: `responses/page-001.json` an input (a file of a known type the task
supplies), `tickets.tsv` where the printed result goes. Program text (a jq filter, an awk or sed program,
a grep pattern, sqlite3's SQL) is kept as written; a sqlite3 database argument is an input the task builds
(command_sqlite) and its SQL must only read. Read statically: a line is refused, with the reason, when it talks to
the network, works on the machine's own state (a repository, processes, a file tree), draws random values
or the clock, edits its input in place, writes a file it does not name, runs a program the image lacks or
no sample file can feed, leaves a placeholder or a shell variable to fill, or reads no input file at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.shell_syntax import is_redirect, names_file, simple_commands, unquote

from ..skill_fit import canonical_tool
from .command_sqlite import DB_EXTENSIONS, reading_only
from .invocation import FILE_EXTENSIONS, NotFillable
from .script_facts import IMAGE_BINARIES

# Programs whose result is a function of the files they are given (and their arguments) alone.
FILE_TOOLS = frozenset("""
    jq awk sed grep sort uniq cut tr wc head tail cat tac nl paste join comm diff cmp fold fmt expand unexpand
    rev od base64 sha256sum sha1sum sha512sum md5sum b2sum cksum sum numfmt openssl zstd xz bzip2 gzip python3 echo printf
    sqlite3
""".split())
_PROGRAM_TEXT = {"jq": {"-f", "--from-file"}, "awk": {"-f", "--file"}, "sed": {"-e", "-f", "--expression", "--file"},
                 "grep": {"-e", "-f", "--regexp", "--file"}}   # first positional is the program unless one of these
_VALUE_FLAGS = {
    "jq": {"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--indent": 1, "-f": 1, "--from-file": 1},
    "awk": {"-F": 1, "-v": 1, "-f": 1, "--field-separator": 1, "--assign": 1},
    "sed": {"-e": 1, "-f": 1, "--expression": 1, "-l": 1},
    "grep": {"-e": 1, "-f": 1, "-m": 1, "-A": 1, "-B": 1, "-C": 1, "--regexp": 1, "--max-count": 1},
    "sort": {"-k": 1, "-t": 1, "-o": 1, "-S": 1, "--key": 1, "--field-separator": 1, "--output": 1},
    "cut": {"-d": 1, "-f": 1, "-c": 1, "-b": 1, "--delimiter": 1, "--fields": 1},
    "head": {"-n": 1, "-c": 1}, "tail": {"-n": 1, "-c": 1}, "uniq": {"-f": 1, "-s": 1, "-w": 1},
    "join": {"-t": 1, "-1": 1, "-2": 1, "-o": 1, "-j": 1, "-e": 1}, "paste": {"-d": 1}, "nl": {"-w": 1, "-s": 1},
    "fold": {"-w": 1}, "fmt": {"-w": 1}, "base64": {"-w": 1}, "numfmt": {"--field": 1, "--to": 1, "--from": 1},
    "openssl": {"-in": 1, "-out": 1, "-inform": 1, "-outform": 1}, "zstd": {"-o": 1}, "diff": {"--label": 1},
    "python3": {"-m": 1},
    "sqlite3": {"-separator": 1, "-nullvalue": 1, "-newline": 1, "-cmd": 1, "-init": 1},
}
_OUTPUT_FLAGS = {"sort": {"-o", "--output"}, "openssl": {"-out"}, "zstd": {"-o"}}
_STDOUT_FLAGS = {"zstd": {"-c", "--stdout"}, "xz": {"-c", "--stdout"}, "bzip2": {"-c", "--stdout"},
                 "gzip": {"-c", "--stdout"}}   # without one (or -o) a compressor writes beside its input
_OPENSSL_SUBS = frozenset({"dgst", "sha1", "sha256", "sha512", "md5", "base64"})
_NETWORK = frozenset({"curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "rsync", "ftp", "telnet", "dig",
                      "nslookup", "host", "ping", "http", "httpie"})
_STATE = {"git": "a repository", "find": "a file tree", "du": "a file tree", "ls": "a folder", "df": "disks",
          "stat": "file times", "ps": "processes", "top": "processes", "kill": "processes", "pkill": "processes",
          "pgrep": "processes", "systemctl": "services", "journalctl": "a journal", "crontab": "a crontab",
          "ip": "interfaces", "ss": "sockets", "id": "accounts", "whoami": "accounts", "getent": "accounts",
          "tmux": "a terminal session", "make": "a build tree", "tar": "a file tree", "zip": "a file tree",
          "unzip": "an archive", "chmod": "file modes", "chown": "file owners", "touch": "file times",
          "tee": "files it writes", "logrotate": "a log folder"}
_RANDOM = frozenset({"shuf", "mktemp", "uuidgen", "date", "gpg", "ssh-keygen", "pwgen"})
_PLACEHOLDER = re.compile(r"^<[^<>]+>$|^\[[^\]-][^\]]*\]$|^\{[^{}]*\}$|^\.\.\.$|^[A-Z][A-Z0-9_]{2,}$|path/to|your[-_]")
# Program text stands for itself (`grep ERROR`), unless it is a documented slot (`<pattern>`, PATTERN).
_PROGRAM_PLACEHOLDER = re.compile(r"^<[^<>]+>$|^\.\.\.$|^(PATTERN|REGEXP?|FILTER|EXPR(ESSION)?|PROGRAM|QUERY|"
                                  r"SEARCH_?TERM|TERM|WORD|STRING|TEXT|KEYWORD)S?$", re.I)
_OTHER_FILE = re.compile(r"^[\w./-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,5}$")
_KNOWN_PATHS = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "-"})
# What a result may be saved as besides the sample types: compressed bytes, digests, a diff.
OUTPUT_EXTENSIONS = FILE_EXTENSIONS | {"gz", "zst", "xz", "bz2", "b64", "sha256", "md5", "diff", "patch", "out"}


@dataclass(frozen=True)
class Word:
    kind: str    # literal | input | output | stdout | stdin | glob | pipe
    text: str    # as written (quotes kept) for literal; the documented file name for file slots

    @property
    def ext(self) -> str:
        base = self.text.rsplit("/", 1)[-1]
        return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


@dataclass(frozen=True)
class CommandCall:
    tool: str                   # the program the skill is about (canonical name)
    doc_line: str               # the documented command line, continued lines joined
    words: tuple[Word, ...]     # the pipeline: programs, arguments and slots in order, `|` as Word("pipe")

    @property
    def inputs(self) -> list[Word]:
        return [w for w in self.words if w.kind in ("input", "stdin", "glob")]

    @property
    def output(self) -> Word | None:
        return next((w for w in self.words if w.kind in ("output", "stdout")), None)

    @property
    def programs(self) -> list[str]:
        out, start = [], True
        for w in self.words:
            if start and w.kind == "literal" and "=" not in w.text:
                out.append(canonical_tool(w.text))
            start = w.kind == "pipe" or (start and "=" in w.text)
        return out


def _file_name(word: str, extensions: frozenset[str] = FILE_EXTENSIONS) -> str | None:
    """The file a word names (placeholder brackets dropped), when of a known type; None otherwise."""
    w = word.strip()
    if w.startswith("<") and w.endswith(">"):
        w = w[1:-1].strip()
    # `/var/log/nginx/access.log`, `~/exports/orders.json`: a file of a known type wherever the author kept
    # it is still a file the task can supply (the command reads only what it is given); not a device or /proc
    if w.startswith(("/dev/", "/proc/", "/sys/")) or w.startswith("~") and not w.startswith("~/"):
        return None
    w = w.removeprefix("~/")
    if w.startswith("-") or "://" in w or "$" in w or not re.fullmatch(r"[\w.*/-]+", w):
        return None
    base = w.rstrip("/").rsplit("/", 1)[-1]
    ext = base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""
    return w.removeprefix("./") if ext in extensions and base.count("*") <= 1 and "*" not in w[:-len(base)] else None


def _top_segments(line: str) -> list[str]:
    """The line cut at `&&`, `||` and `;` outside quotes (a pipeline is one segment)."""
    out, cur, quote, i = [], [], "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif line.startswith(("&&", "||"), i) or ch == ";":
            out.append("".join(cur))
            cur, i = [], i + (1 if ch == ";" else 2)
            continue
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            break
        cur.append(ch)
        i += 1
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def _unquoted(text: str) -> str:
    """The parts of a line outside single quotes (where the shell would expand `$`, `` ` ``, `<(`)."""
    return re.sub(r"'[^']*'", "''", text)


def read_command(tool: str, doc_line: str) -> CommandCall:
    """The documented pipeline of `tool` on `doc_line`; NotFillable says why a task cannot make it."""
    seg = next((s for s in _top_segments(doc_line) if tool in _programs_of(s)), None)
    if seg is None:
        raise NotFillable(f"the documented line does not run {tool} as a command")
    bare = _unquoted(seg)
    if "<<" in bare or "<(" in bare or ">(" in bare:
        raise NotFillable("the documented command reads a heredoc or a process substitution")
    if "$(" in bare or "`" in bare or re.search(r"\$[A-Za-z_{]", bare):
        raise NotFillable("the documented command uses shell variables or substitutions set elsewhere")
    if bare.count('"') % 2 or re.sub(r"'[^']*'", "", seg).count("'") % 2:
        raise NotFillable("the documented command continues over several lines (a quote left open)")
    if "&" in re.sub(r"\d?>&\d|&>", "", bare):
        raise NotFillable("the documented command runs in the background")
    words: list[Word] = []
    cmds = simple_commands(seg)
    for k, raw in enumerate(cmds):
        words += _command_words(raw, last=k == len(cmds) - 1)
        if k < len(cmds) - 1:
            words.append(Word("pipe", "|"))
    call = CommandCall(tool, doc_line.strip(), tuple(words))
    if not call.inputs:
        raise NotFillable("the documented command reads no input file (it works on typed or built-in data)")
    if sum(w.kind == "glob" for w in call.words) > 1:
        raise NotFillable("the documented command reads several file patterns")
    return call


def _programs_of(segment: str) -> set[str]:
    heads = (_strip_prefix([unquote(w) for w in c]) for c in simple_commands(segment))
    return {canonical_tool(h[0]) for h in heads if h}


def _strip_prefix(words: list[str]) -> list[str]:
    while words and (words[0] in ("sudo", "env", "command", "time", "nice") or
                     re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words = words[1:]
    return words


def _check_program(prog: str, args: list[str]) -> None:
    if prog in _NETWORK or any("://" in a for a in args):
        raise NotFillable(f"talks to the network ({prog})")
    if prog in _STATE:
        raise NotFillable(f"runs {prog} on the machine's own state ({_STATE[prog]}), which the task would have to build")
    if prog in _RANDOM or "$RANDOM" in " ".join(args) or (prog == "sort" and {"-R", "--random-sort"} & set(args)):
        raise NotFillable(f"{prog} draws random values or reads the clock: its output differs on every run")
    if prog not in IMAGE_BINARIES:
        raise NotFillable(f"runs {prog}: not in the base image")
    if prog not in FILE_TOOLS:
        raise NotFillable(f"runs {prog}, which no sample file can feed (no command generator for it)")
    if any(a == "-i" or a.startswith(("--in-place", "-i.")) for a in args) and prog in ("sed", "awk"):
        raise NotFillable(f"{prog} edits its input in place")
    if prog == "openssl" and (not args or args[0] not in _OPENSSL_SUBS):
        raise NotFillable(f"openssl {args[0] if args else ''} needs keys or draws random values".replace("  ", " "))
    if prog == "sqlite3" and {"-cmd", "-init"} & set(args):
        raise NotFillable("sqlite3 runs extra commands before the documented SQL (-cmd, -init)")
    if prog == "python3" and args[:2] != ["-m", "json.tool"]:
        raise NotFillable("runs Python code of its own (only `python3 -m json.tool` is a command generator)")
    if prog in _STDOUT_FLAGS and not (set(args) & _STDOUT_FLAGS[prog] or "-o" in args or
                                       any(re.fullmatch(r"-[a-zA-Z0-9]*c[a-zA-Z0-9]*", a) for a in args)):
        raise NotFillable(f"{prog} writes its result beside its input under a name the command does not give")


def _command_words(raw: list[str], last: bool) -> list[Word]:
    words = [unquote(w) for w in raw]
    lead = len(words) - len(_strip_prefix(words))
    if lead and words[0] == "sudo":
        raw, words, lead = raw[1:], words[1:], lead - 1
    if not words[lead:]:
        raise NotFillable("the documented line holds an assignment, not a command")
    prog = canonical_tool(words[lead])
    _check_program(prog, [w for w in words[lead + 1:] if not is_redirect(w)])
    out = [Word("literal", r) for r in raw[:lead + 1]]
    program_given = not (prog in _PROGRAM_TEXT and not set(words) & _PROGRAM_TEXT[prog])
    args = words[lead + 1:]
    targets = {i + 1 for i, w in enumerate(args) if is_redirect(w) and names_file(w)}
    if prog == "sqlite3" and len([w for i, w in enumerate(args) if not w.startswith("-") and not is_redirect(w)
                                  and i not in targets]) < 2:
        raise NotFillable("sqlite3 runs the SQL it reads from its input, which may change the database")
    takes = _VALUE_FLAGS.get(prog, {})
    positional = 0
    i = lead + 1
    while i < len(words):
        w, r = words[i], raw[i]
        if is_redirect(w):
            out += _redirect(w, words[i + 1] if i + 1 < len(words) else "", last)
            i += 2
            continue
        flag = w.split("=", 1)[0]
        if w.startswith("-") and len(w) > 1:
            n = 0 if "=" in w else takes.get(flag, 0)
            if flag in _OUTPUT_FLAGS.get(prog, ()):
                target = w.split("=", 1)[1] if "=" in w else (words[i + 1] if i + 1 < len(words) else "")
                name = _file_name(target, OUTPUT_EXTENSIONS)
                if not name or "*" in name:
                    raise NotFillable(f"writes into a folder or an unnamed place ({w} {target})".strip())
                out += [Word("literal", flag), Word("output", name)]
                i += 1 if "=" in w else 2
                continue
            if flag in ("-f", "--file", "--from-file") and flag in _PROGRAM_TEXT.get(prog, ()):
                raise NotFillable(f"{prog} reads its program from a file ({w} {words[i + 1] if i + 1 < len(words) else ''})"
                                  ": no command generator for program files yet")
            out.append(Word("literal", r))
            for j in range(1, n + 1):
                if i + j < len(words):
                    out.append(_value(words[i + j], raw[i + j], program=flag in _PROGRAM_TEXT.get(prog, ())))
            i += 1 + n
            continue
        if prog == "sqlite3":
            out.append(_sqlite_argument(w, r, positional))
        elif positional == 0 and not program_given:
            program_given = True          # the filter, program or pattern itself
            if _PROGRAM_PLACEHOLDER.search(w) and r == w:
                raise NotFillable(f"the argument {w} is a placeholder for the program text")
            out.append(Word("literal", r))
        else:
            out.append(_value(w, r))
        positional += 1
        i += 1
    return out


def _sqlite_argument(w: str, r: str, positional: int) -> Word:
    """`sqlite3 DB SQL…`: the database is a file the task builds (command_sqlite), the SQL must only read."""
    if positional == 0:
        if w == ":memory:":
            return Word("literal", r)
        name = _file_name(w, DB_EXTENSIONS)
        if not name or "*" in name:
            raise NotFillable(f"the argument {w} names no database file a task can build")
        return Word("input", name)
    why = reading_only(w)
    if why:
        raise NotFillable(f"the documented SQL {why}")
    return Word("literal", r)


def _value(w: str, r: str, program: bool = False) -> Word:
    """A positional argument or a flag's value: a file the task supplies, else a literal as written."""
    if program:
        return Word("literal", r)
    name = _file_name(w)
    if name:
        return Word("glob" if "*" in name else "input", name)
    if w in _KNOWN_PATHS:
        return Word("literal", r)
    if r == w and _PLACEHOLDER.search(w):
        raise NotFillable(f"the argument {w} is a placeholder for something a task cannot make "
                          "(not a file of a known type)")
    if w.startswith(("~", "/")) or (w.startswith(("./", "../")) and r == w):
        raise NotFillable(f"the argument {w} is a folder or a path on the author's machine")
    if r == w and (w.endswith("/") or w in (".", "..")):
        raise NotFillable(f"the argument {w} is a folder")
    if r == w and _OTHER_FILE.fullmatch(w) and not re.fullmatch(r"[\d.]+", w):
        raise NotFillable(f"the argument {w} is a file of a type a task cannot make from a sample")
    return Word("literal", r)


def _redirect(op: str, target: str, last: bool) -> list[Word]:
    to_stdout = op.startswith("&>") or (not op.startswith("2") and op.lstrip("0123456789").startswith(">"))
    if last and target == "/dev/null" and to_stdout:
        raise NotFillable("the documented command discards what it prints (its answer is its exit status)")
    if not names_file(op) or target in _KNOWN_PATHS:
        return [Word("literal", op)] + ([Word("literal", target)] if names_file(op) else [])
    if op.startswith("<"):
        name = _file_name(target)
        if not name or "*" in name:
            raise NotFillable(f"reads stdin from {target!r}, which names no file we can provide")
        return [Word("stdin", name)]
    if op.startswith("2") or not last:
        raise NotFillable(f"writes {target} besides its result ({op} {target})")
    name = _file_name(target, OUTPUT_EXTENSIONS)
    if not name or "*" in name:
        raise NotFillable(f"redirect {op} {target} names no file of a known type")
    return [Word("stdout", name)]
