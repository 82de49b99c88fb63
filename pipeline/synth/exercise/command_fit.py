"""Does a sample file fit a documented command? Read statically, so a task is not built on an input the
command reads nothing meaningful from (an empty or error result, which verification would reject later).

A jq filter's keys must be keys of the sample, its `== "x"` values values of it, its `.key > N` tests hold
for some record and its `.[0]` index an array; an awk `$N`, a `cut -f N` and a `sort -k N` field must exist
under the delimiter the command splits on, and an awk `$N > M` must hold on some line; a grep pattern must
match some line; a date a program names (`"2024-05-03T10:00"`) must be a day the sample covers.
"""
from __future__ import annotations

import json
import re
import warnings

from .command_line import CommandCall, Word
from .command_sqlite import DB_EXTENSIONS, sql_misfit

_SAME_TYPE = {"yml": "yaml", "ndjson": "jsonl", "markdown": "md", "htm": "html", "conf": "ini", "cfg": "ini"}


def file_type(ext: str) -> str:
    """An extension as the type it stands for (`yml` is yaml)."""
    return _SAME_TYPE.get(ext, ext)


def _json_keys(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            out.add(str(k))
            _json_keys(v, out)
    elif isinstance(node, list):
        for v in node:
            _json_keys(v, out)
    return out


def _json_values(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for v in node.values():
            _json_values(v, out)
    elif isinstance(node, list):
        for v in node:
            _json_values(v, out)
    elif isinstance(node, str):
        out.add(node)
    return out


def _values_of(docs: list, key: str) -> list:
    out: list = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key:
                    out.append(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    for doc in docs:
        walk(doc)
    return out


def _holds(value, op: str, num: float) -> bool:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return {">": v > num, "<": v < num, ">=": v >= num, "<=": v <= num, "==": v == num}[op]


def _words_of(call: CommandCall, prog: str) -> set[str]:
    """The words of `prog`'s own command in the pipeline (another command's `-n` is not its)."""
    out, seen = set(), False
    for w in call.words:
        if w.kind == "pipe":
            seen = False
        elif w.kind == "literal" and w.text == prog and not seen:
            seen = True
        elif seen and w.kind == "literal":
            out.add(w.text)
    return out


def _program(call: CommandCall, prog: str) -> str:
    """The first literal after `prog` that is its program text (a quoted word), unquoted."""
    seen = False
    for w in call.words:
        if w.kind == "literal" and w.text == prog:
            seen = True
        elif seen and w.kind == "literal" and w.text[:1] in "'\"":
            return w.text[1:-1]
        elif w.kind == "pipe":
            seen = False
    return ""


def _flag_value(call: CommandCall, flags: tuple[str, ...], prog: str) -> str | None:
    """The value `prog`'s own command gives one of `flags` (`-F,`, `-t ':'`), unquoted."""
    ws, seen = [], False
    for w in call.words:
        if w.kind == "pipe":
            seen = False
        elif w.kind == "literal" and w.text == prog and not seen:
            seen = True
        elif seen:
            ws.append(w.text.strip("'\""))
    for i, w in enumerate(ws):
        for f in flags:
            if w == f and i + 1 < len(ws):
                return ws[i + 1]
            if w.startswith(f) and len(w) > len(f) and not w.startswith("--"):
                return w[len(f):]
    return None


def misfit(call: CommandCall, slot: Word, data: bytes) -> str:
    """Why the command cannot read this sample meaningfully ('' when it can, as far as a static read tells)."""
    ext = file_type(slot.ext)
    if ext in DB_EXTENSIONS:
        return sql_misfit(data, sql_of(call))
    text = data.decode("utf-8", "replace")
    progs = set(call.programs)
    if "jq" in progs and not {"-R", "--raw-input", "-n", "--null-input"} & _words_of(call, "jq"):
        docs = _json_docs(text)
        if docs is None:
            return "is not JSON, which jq reads"
        if re.match(r"\s*\.\[-?\d+\]", _program(call, "jq")) and not all(isinstance(d, list) for d in docs):
            return "is no JSON array, which the jq filter indexes"
        keys = set(re.findall(r"(?<![\w$])\.([A-Za-z_][A-Za-z0-9_]*)", _program(call, "jq")))
        keys |= set(re.findall(r"\[\"([^\"]+)\"\]", _program(call, "jq")))
        have: set[str] = set()
        for doc in docs:
            _json_keys(doc, have)
        if keys - have:
            return f"has no key {sorted(keys - have)[0]} the jq filter reads"
        wanted = set(re.findall(r'==\s*"([^"]*)"', _program(call, "jq")))
        values: set[str] = set()
        for doc in docs:
            _json_values(doc, values)
        if wanted - values:
            return f"has no value {sorted(wanted - values)[0]!r} the jq filter selects"
        for key, op, num in re.findall(r"\.([A-Za-z_]\w*)\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)", _program(call, "jq")):
            if not any(_holds(v, op, float(num)) for v in _values_of(docs, key)):
                return f"has no {key} {op} {num}, which the jq filter selects"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    programs = " ".join(_program(call, p) for p in ("jq", "awk", "sed", "grep"))
    dates = set(re.findall(r"\b(20\d\d-[01]\d-[0-3]\d)", programs))
    if dates and not any(d in text for d in dates):   # a time window on days the sample does not cover
        return f"has no entry on {sorted(dates)[0]}, the day the command selects"
    if "awk" in progs:
        fields = [int(n) for n in re.findall(r"\$(\d+)", _program(call, "awk"))]
        sep = _flag_value(call, ("-F",), "awk")
        if fields and not _has_fields(lines, max(fields), sep):
            return f"has no field ${max(fields)} for awk"
    if "awk" in progs:
        sep = _flag_value(call, ("-F",), "awk")
        for n, op, num in re.findall(r"\$(\d+)\s*(>=|<=|>|<|==)\s*(-?\d+(?:\.\d+)?)", _program(call, "awk")):
            cells = [(ln.split(sep) if sep else ln.split()) for ln in lines]
            if not any(len(c) >= int(n) > 0 and _holds(c[int(n) - 1], op, float(num)) for c in cells):
                return f"has no line whose ${n} {op} {num}, which the awk program selects"
    if "cut" in progs:
        spec = _flag_value(call, ("-f", "--fields"), "cut") or ""
        nums = [int(n) for n in re.findall(r"\d+", spec)]
        if nums and not _has_fields(lines, max(nums), _flag_value(call, ("-d", "--delimiter"), "cut") or "\t"):
            return f"has no field {max(nums)} for cut"
    if "sort" in progs:
        key = _flag_value(call, ("-k", "--key"), "sort") or ""
        m = re.match(r"(\d+)", key)
        if m and not _has_fields(lines, int(m.group(1)), _flag_value(call, ("-t", "--field-separator"), "sort")):
            return f"has no field {m.group(1)} to sort on"
    if "grep" in progs:
        pattern = _program(call, "grep") or _grep_pattern(call)
        if pattern and not _matches(pattern, text, call):
            return f"has no line the grep pattern {pattern!r} matches"
    return ""


def sql_of(call: CommandCall) -> str:
    """The SQL (or dot-commands) a documented sqlite3 call runs: its quoted arguments after the database."""
    seen, out = False, []
    for w in call.words:
        if w.kind == "literal" and w.text == "sqlite3":
            seen = True
        elif seen and w.kind == "literal" and not w.text.startswith("-"):
            out.append(w.text[1:-1] if w.text[:1] in "'\"" and w.text[-1:] == w.text[:1] else w.text)
        elif w.kind == "pipe":
            seen = False
    return ";\n".join(out)


def _json_docs(text: str) -> list | None:
    """The JSON values of a file: one document, or one a line (JSON Lines); None when neither."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    try:
        docs = [json.loads(x) for x in text.splitlines() if x.strip()]
    except ValueError:
        return None
    return docs or None


def _grep_pattern(call: CommandCall) -> str:
    seen = False
    for w in call.words:
        if w.kind == "literal" and w.text in ("grep", "egrep", "fgrep"):
            seen = True
        elif seen and w.kind == "literal" and not w.text.startswith("-"):
            return w.text.strip("'\"")
        elif w.kind == "pipe" or (seen and w.kind != "literal"):
            seen = False
    return ""


_POSIX_CLASSES = {"alpha": "A-Za-z", "digit": "0-9", "alnum": "A-Za-z0-9", "upper": "A-Z", "lower": "a-z",
                  "space": r"\s", "blank": r" \t", "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f"}


def _has_fields(lines: list[str], n: int, sep: str | None) -> bool:
    if not lines:
        return False
    sep = {"\\t": "\t", "'\\t'": "\t", "$'\\t'": "\t"}.get(sep, sep) if sep else None
    ok = sum(len(ln.split(sep) if sep else ln.split()) >= n for ln in lines)
    return ok * 2 >= len(lines)


def _matches(pattern: str, text: str, call: CommandCall) -> bool:
    words = _words_of(call, "grep") | _words_of(call, "egrep") | _words_of(call, "fgrep")
    flags = re.I if any(w.startswith("-") and "i" in w[1:] and not w.startswith("--") for w in words) else 0
    if any(w.startswith("-") and "F" in w[1:] and not w.startswith("--") for w in words):
        return pattern.lower() in text.lower() if flags else pattern in text
    py = pattern.replace(r"\|", "|").replace(r"\(", "(").replace(r"\)", ")").replace(r"\+", "+")
    for name, chars in _POSIX_CLASSES.items():
        py = py.replace(f"[:{name}:]", chars)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.search(py, text, flags | re.M) is not None
    except re.error:
        return True
