"""Shell commands in a SKILL.md's code: the programs run and the files each reads or writes.

``tar -czf out.tgz dir/`` writes an archive, ``pg_dump db > dump.sql`` needs a database and
leaves a dump (the vocabulary's READS/WRITES), ``ffmpeg -i in.mp4 out.webm`` reads the first
file and writes the last. Quoted programs (a jq filter, an awk script) are one argument."""
from __future__ import annotations

import re

from pipeline.artifacts import vocabulary as voc
from pipeline.artifacts.refs import CODE, Collector
from pipeline.binaries import KNOWN_BINS
from pipeline.shell_syntax import is_plain, is_redirect, names_file, simple_commands

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
_SINGLE_QUOTED = re.compile(r"'[^']*'")
_DOUBLE_QUOTED = re.compile(r'"([^"]*)"')
_PLAIN_WORD = re.compile(r"^[^\s|;&<>]*$")
_INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun",
                           "uv", "npx", "tsx", "ts-node"})


def commands(line: str) -> list[list[str]]:
    """The simple commands of a shell line as tokens for reading roles: a quoted program (a jq
    filter, an awk script) is one blank argument, a redirection that names a file is `>` or `<`."""
    line = line.strip()
    if line[:2] in ("$ ", "% ", "> "):   # a prompt
        line = line[2:]
    out = []
    plain = is_plain(line)
    for cmd in simple_commands(line):
        toks = cmd if plain else [_role_token(t) for t in cmd if not is_redirect(t) or names_file(t)]
        while toks and (toks[0] in _SKIP_PREFIX or ("=" in toks[0] and not toks[0].startswith("-"))):
            toks = toks[1:]
        if toks:
            out.append(toks)
    return out


def _role_token(tok: str) -> str:
    if tok[0] in "<>0123456789&" and is_redirect(tok):
        return ">" if ">" in tok else "<"
    if "'" in tok or '"' in tok:
        tok = _SINGLE_QUOTED.sub("''", tok)
        tok = _DOUBLE_QUOTED.sub(lambda m: m.group(1) if _PLAIN_WORD.match(m.group(1)) else '""', tok)
    return tok


def _command_key(toks: list[str]) -> tuple[str, str]:
    exe = toks[0].rsplit("/", 1)[-1]
    sub = next((t for t in toks[1:] if not t.startswith("-")), "")
    return exe, sub


def is_tool(exe: str, bins: frozenset[str], strict: bool) -> bool:
    if exe in _NOT_TOOLS:
        return False
    if exe in KNOWN_BINS or exe in voc.COMMANDS or exe in bins:
        return True
    return not strict and bool(_TOOLISH.match(exe)) and "." not in exe


def record_command(c: Collector, toks: list[str], evidence: str, line: int, strict: bool) -> None:
    exe, sub = _command_key(toks)
    if not is_tool(exe, c.bins, strict) or (len(toks) > 1 and toks[1] in ("=", "+=", ":=", "==", "(", ":")):
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
