"""Where a command exercise's input files come from, and how each task draws its own.

In order: a sample file the package ships (as for script exercises, pipeline.synth.exercise.inputs), an
example of that type SKILL.md itself shows (a fenced ```json / ```csv / ```log block, or an inline JSON
object), else data the recipes' generators draw (tables for CSV/TSV/JSON, application logs as text or
JSON lines, access logs). A source is taken only when the command can read it meaningfully (command_fit);
the rest is left to the oracle run. Each task varies a sample (numbers drawn anew, a log thinned) or
draws generated data afresh; a second file of one source is related to the first (most lines shared).
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
from .command_fit import file_type, misfit, sql_of
from .command_sqlite import DB_EXTENSIONS, build_database, schema_of, statements
from .command_line import CommandCall, Word
from .inputs import MAX_INPUT_BYTES, NoSample, find_sample, varied_input
from .package import SkillPackage

_FENCE = re.compile(r"^[ \t]{0,8}(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^[ \t]{0,8}\1", re.M | re.S)
_LANG_EXT = {"json": "json", "jsonl": "jsonl", "ndjson": "jsonl", "csv": "csv", "tsv": "tsv", "yaml": "yaml",
             "yml": "yaml", "xml": "xml", "html": "html", "toml": "toml", "ini": "ini", "log": "log", "text": "txt",
             "txt": "txt", "plaintext": "txt", "markdown": "md", "md": "md"}
_GENERATED = frozenset({"csv", "tsv", "json", "jsonl", "log", "txt"})


@dataclass(frozen=True)
class InputSource:
    kind: str            # package | example | generated
    ref: str             # the package path, "SKILL.md example" or the generator's name
    data: bytes = b""    # the sample's bytes (generated: drawn per task)


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


# --- choosing and drawing a source -----------------------------------------------------------------
def input_source(pkg: SkillPackage | None, body: str, call: CommandCall, slot: Word,
                 skip: set[str] = frozenset()) -> InputSource:
    """The first source that fits; NoSample says why none does."""
    ext = file_type(slot.ext)
    if ext in DB_EXTENSIONS:
        return _database_source(body, call, slot)
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


def _database_source(body: str, call: CommandCall, slot: Word) -> InputSource:
    """A database with the tables SKILL.md creates, else with the generated datasets, that the SQL fits."""
    rng = random.Random(f"plan|{call.doc_line}|{slot.text}")
    schema = schema_of(body)
    misfits = []
    for kind, stmts in (("schema", schema), ("generated", [])):
        if kind == "schema" and not stmts:
            continue
        why = misfit(call, slot, build_database(rng, stmts, sql_of(call)))
        if not why:
            return InputSource(kind, "SKILL.md schema" if stmts else "datasets", ";\n".join(stmts).encode())
        misfits.append(f"{'a database of its SKILL.md schema' if stmts else 'a database of generated tables'} {why}")
    raise NoSample(f"no sample for {slot.text} fits the command: {misfits[0]}")


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
    ext = file_type(slot.ext)
    for _ in range(6):
        if ext in DB_EXTENSIONS:
            data = build_database(rng, statements(src.data.decode()) if src.kind == "schema" else [], sql_of(call))
        elif src.kind == "generated":
            data = draw(rng, src.ref, ext)
        else:
            data = _thinned(rng, varied_input(rng, src.data, ext), ext)
        data = _sorted_for(call, ext, data)
        if not misfit(call, slot, data):
            return data
    return src.data if src.kind in ("package", "example") else data


_SORTED_INPUT = frozenset({"comm", "join"})   # they read their files in sorted order


def _sorted_for(call: CommandCall, ext: str, data: bytes) -> bytes:
    """Lines in byte order (a header row kept first) for a program that reads sorted input."""
    if not _SORTED_INPUT & set(call.programs) or ext not in ("log", "txt", "csv", "tsv"):
        return data
    lines = data.decode("utf-8", "replace").splitlines()
    head = 1 if ext in ("csv", "tsv") else 0
    return ("\n".join(lines[:head] + sorted(lines[head:], key=lambda ln: ln.encode())) + "\n").encode()


def _thinned(rng: random.Random, data: bytes, ext: str) -> bytes:
    """A JSON sample with a few records of each list of four or more left out (at least three kept), so
    counts and groupings differ per task, not only the numbers."""
    if ext not in ("json", "jsonl"):
        return data

    def thin(node):
        if isinstance(node, dict):
            return {k: thin(v) for k, v in node.items()}
        if isinstance(node, list):
            items = [thin(v) for v in node]
            if len(items) >= 4 and all(isinstance(v, dict) for v in items):
                kept = [v for v in items if rng.random() > 0.2]
                return kept if len(kept) >= 3 else items
            return items
        return node
    try:
        if ext == "json":
            return (json.dumps(thin(json.loads(data)), indent=2, ensure_ascii=False) + "\n").encode()
        rows = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
        kept = thin(rows)
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept).encode()
    except (ValueError, UnicodeDecodeError, RecursionError):
        return data


def related(rng: random.Random, src: InputSource, call: CommandCall, slot: Word, first: bytes) -> bytes:
    """A second input from the same source as `first` (`comm a b`, `diff old new`, `join`): most of its
    lines, some dropped and some new ones from another draw, so the two differ both ways; in sorted order
    when `first` is sorted (what comm and join expect). Other types: `first` varied anew."""
    ext = file_type(slot.ext)
    if ext not in ("log", "txt", "csv", "tsv"):
        return varied_input(rng, first, ext)
    head = 1 if ext in ("csv", "tsv") else 0
    lines = first.decode("utf-8", "replace").splitlines()
    body, other = lines[head:], realize(rng, src, call, slot).decode("utf-8", "replace").splitlines()[head:]
    if not body:
        return first
    keep = [ln for ln in body if rng.random() < 0.8] or body[:1]
    fresh = [ln for ln in other if ln not in body]
    add = rng.sample(fresh, min(len(fresh), max(1, len(body) // 5)))
    if body == sorted(body):
        new = sorted(keep + add)
    else:
        new = list(keep)
        for ln in add:
            new.insert(rng.randrange(len(new) + 1), ln)
    return ("\n".join(lines[:head] + new) + "\n").encode()
