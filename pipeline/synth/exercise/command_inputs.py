"""Where a command exercise's input files come from, and whether one fits the command.

In order: a sample file the package ships (as for script exercises, pipeline.synth.exercise.inputs), an
example of that type SKILL.md itself shows (a fenced ```json / ```csv / ```log block, or an inline JSON
object), else data the recipes' generators draw (tables for CSV/TSV/JSON, application or access logs for
log and text files). A source is taken only when the command can read it meaningfully, checked
statically: a jq filter's keys are keys of the sample, an awk/cut/sort field number exists under the
delimiter the command splits on, a grep pattern matches some line. The rest is left to the oracle run.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass

from ..recipes.base import StepContext
from ..recipes.formats import render_lines, render_table
from ..recipes.logs import APP_RE, app_log_lines, seed_access_log
from ..recipes.seeds import TABLES
from .command_line import CommandCall, Word
from .inputs import MAX_INPUT_BYTES, NoSample, find_sample, varied_input
from .package import SkillPackage

_FENCE = re.compile(r"^[ \t]{0,8}(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^[ \t]{0,8}\1", re.M | re.S)
_LANG_EXT = {"json": "json", "jsonl": "jsonl", "ndjson": "jsonl", "csv": "csv", "tsv": "tsv", "yaml": "yaml",
             "yml": "yaml", "xml": "xml", "html": "html", "toml": "toml", "ini": "ini", "log": "log", "text": "txt",
             "txt": "txt", "plaintext": "txt", "markdown": "md", "md": "md"}
_SAME_TYPE = {"yml": "yaml", "ndjson": "jsonl", "markdown": "md", "htm": "html", "conf": "ini", "cfg": "ini"}
_GENERATED = frozenset({"csv", "tsv", "json", "jsonl", "log", "txt"})


@dataclass(frozen=True)
class InputSource:
    kind: str            # package | example | generated
    ref: str             # the package path, "SKILL.md example" or the generator's name
    data: bytes = b""    # the sample's bytes (generated: drawn per task)


def _ext(ext: str) -> str:
    return _SAME_TYPE.get(ext, ext)


def skill_examples(body: str) -> list[tuple[str, bytes, int]]:
    """(type, bytes, offset) of each example file SKILL.md shows: fenced blocks of a data language,
    and inline JSON objects or arrays."""
    out = []
    for m in _FENCE.finditer(body or ""):
        ext = _LANG_EXT.get(m.group(2).lower())
        if ext and m.group(3).strip():
            out.append((ext, m.group(3).encode(), m.start()))
    for m in re.finditer(r"`(\{[^`\n]{15,}\}|\[[^`\n]{15,}\])`", body or ""):
        try:
            json.loads(m.group(1))
        except ValueError:
            continue
        out.append(("json", (m.group(1) + "\n").encode(), m.start()))
    return out


def _usable(ext: str, data: bytes) -> bool:
    text = data.decode("utf-8", "replace")
    if not 0 < len(data) <= MAX_INPUT_BYTES:
        return False
    try:
        if ext == "json":
            json.loads(text)
        elif ext == "jsonl":
            rows = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
            return len(rows) >= 2
    except ValueError:
        return False
    if ext in ("csv", "tsv"):
        rows = [r for r in text.splitlines() if r.strip()]
        sep = "," if ext == "csv" else "\t"
        return len(rows) >= 3 and len({r.count(sep) for r in rows}) == 1 and sep in rows[0]
    if ext in ("log", "txt"):
        return len([ln for ln in text.splitlines() if ln.strip()]) >= 3
    return True


# --- does a sample fit the command? ----------------------------------------------------------------
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


def _flag_value(call: CommandCall, flags: tuple[str, ...]) -> str | None:
    ws = [w.text.strip("'\"") for w in call.words]
    for i, w in enumerate(ws):
        for f in flags:
            if w == f and i + 1 < len(ws):
                return ws[i + 1]
            if w.startswith(f) and len(w) > len(f) and not w.startswith("--"):
                return w[len(f):]
    return None


def misfit(call: CommandCall, slot: Word, data: bytes) -> str:
    """Why the command cannot read this sample meaningfully ('' when it can, as far as a static read tells)."""
    text = data.decode("utf-8", "replace")
    ext = _ext(slot.ext)
    progs = set(call.programs)
    if "jq" in progs and not {"-R", "--raw-input", "-n", "--null-input"} & {w.text for w in call.words}:
        docs = _json_docs(text)
        if docs is None:
            return "is not JSON, which jq reads"
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
    lines = [ln for ln in text.splitlines() if ln.strip()]
    programs = " ".join(_program(call, p) for p in ("jq", "awk", "sed", "grep"))
    dates = set(re.findall(r"\b(20\d\d-[01]\d-[0-3]\d)", programs))
    if dates and not any(d in text for d in dates):   # a time window on days the sample does not cover
        return f"has no entry on {sorted(dates)[0]}, the day the command selects"
    if "awk" in progs:
        fields = [int(n) for n in re.findall(r"\$(\d+)", _program(call, "awk"))]
        sep = _flag_value(call, ("-F",))
        if fields and not _has_fields(lines, max(fields), sep):
            return f"has no field ${max(fields)} for awk"
    if "cut" in progs:
        spec = _flag_value(call, ("-f", "--fields")) or ""
        nums = [int(n) for n in re.findall(r"\d+", spec)]
        if nums and not _has_fields(lines, max(nums), _flag_value(call, ("-d", "--delimiter")) or "\t"):
            return f"has no field {max(nums)} for cut"
    if "sort" in progs:
        key = _flag_value(call, ("-k", "--key")) or ""
        m = re.match(r"(\d+)", key)
        if m and not _has_fields(lines, int(m.group(1)), _flag_value(call, ("-t", "--field-separator"))):
            return f"has no field {m.group(1)} to sort on"
    if "grep" in progs:
        pattern = _program(call, "grep") or _grep_pattern(call)
        if pattern and not _matches(pattern, text, call):
            return f"has no line the grep pattern {pattern!r} matches"
    return ""


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


def _has_fields(lines: list[str], n: int, sep: str | None) -> bool:
    if not lines:
        return False
    sep = {"\\t": "\t", "'\\t'": "\t", "$'\\t'": "\t"}.get(sep, sep) if sep else None
    ok = sum(len(ln.split(sep) if sep else ln.split()) >= n for ln in lines)
    return ok * 2 >= len(lines)


def _matches(pattern: str, text: str, call: CommandCall) -> bool:
    words = {w.text for w in call.words}
    flags = re.I if any(w.startswith("-") and "i" in w[1:] and not w.startswith("--") for w in words) else 0
    if any(w.startswith("-") and "F" in w[1:] and not w.startswith("--") for w in words):
        return pattern.lower() in text.lower() if flags else pattern in text
    py = pattern.replace(r"\|", "|").replace(r"\(", "(").replace(r"\)", ")").replace(r"\+", "+")
    try:
        return re.search(py, text, flags | re.M) is not None
    except re.error:
        return True


# --- choosing and drawing a source -----------------------------------------------------------------
def input_source(pkg: SkillPackage | None, body: str, call: CommandCall, slot: Word,
                 skip: set[str] = frozenset()) -> InputSource:
    """The first source that fits; NoSample says why none does."""
    ext = _ext(slot.ext)
    misfits: list[str] = []
    if pkg is not None and len(pkg.files) > 1:
        try:
            rel = find_sample(pkg, slot.text, slot.ext, set(skip))
            why = misfit(call, slot, dict(pkg.files)[rel])
            if not why:
                return InputSource("package", rel, dict(pkg.files)[rel])
            misfits.append(f"the package's {rel} {why}")
        except NoSample:
            pass
    base = slot.text.rsplit("/", 1)[-1]
    examples = [(e, d, at) for e, d, at in skill_examples(body) if e == ext and _usable(ext, d)]
    examples.sort(key=lambda x: (base not in body[max(0, x[2] - 300):x[2]], x[2]))
    for _, data, _ in examples:
        why = misfit(call, slot, data)
        if not why:
            return InputSource("example", "SKILL.md example", data)
        misfits.append(f"its SKILL.md example {why}")
    if ext in _GENERATED:
        rng = random.Random(f"plan|{call.doc_line}|{slot.text}")
        for name in _generators(ext, base, "jq" in call.programs):
            why = misfit(call, slot, draw(rng, name, ext))
            if not why:
                return InputSource("generated", name)
            misfits.append(f"a generated {name} {why}")
    if misfits:
        raise NoSample(f"no sample for {slot.text} fits the command: {misfits[0]}")
    raise NoSample(f"no sample of a .{slot.ext} file to build the input {slot.text} from (the package "
                   "and SKILL.md show none, and no generator makes one)")


def _generators(ext: str, base: str, jq: bool) -> list[str]:
    if ext in ("log", "txt"):
        logs = ["access-log", "app-log"] if "access" in base.lower() else ["app-log", "access-log"]
        return ["json-log"] + logs if jq else logs
    return sorted(TABLES) + ["json-log"]


def _json_log(rng: random.Random, ext: str) -> bytes:
    """An application log as JSON records (one a line; a JSON array for a .json file)."""
    lines, _ = app_log_lines(StepContext(rng), rng.randint(40, 80))
    rows = []
    for ln in lines:
        m = APP_RE.match(ln)
        if m:
            ts, level, comp, msg, key, val = m.groups()
            rows.append({"ts": ts, "level": level, "component": comp, "msg": msg, key: val})
    if ext == "json":
        return (json.dumps(rows, indent=2) + "\n").encode()
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def draw(rng: random.Random, name: str, ext: str) -> bytes:
    """One generated input: a table of the recipes' datasets in the file's format, or a log."""
    scratch = StepContext(rng)
    if name == "json-log":
        return _json_log(rng, ext)
    if name == "access-log":
        seed_access_log(scratch)
        return next(iter(scratch.env.values()))
    if name == "app-log":
        lines, _ = app_log_lines(scratch, rng.randint(60, 110))
        return render_lines(lines)
    _, table = TABLES[name](rng, rng.randint(24, 40))
    return render_table(table, ext)


def realize(rng: random.Random, src: InputSource, call: CommandCall, slot: Word) -> bytes:
    """The task's own input from its source: a sample varied (numbers drawn anew, a log's lines
    thinned), or freshly generated data; a draw that no longer fits is drawn again (a few times)."""
    ext = _ext(slot.ext)
    for _ in range(6):
        data = varied_input(rng, src.data, ext) if src.kind != "generated" else draw(rng, src.ref, ext)
        if not misfit(call, slot, data):
            return data
    return src.data if src.kind != "generated" else data
