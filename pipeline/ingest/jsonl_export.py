"""Skills exported one JSON object per line (registry dumps, scraped collections).

A record holds either the whole SKILL.md text (`skill_md`) or its parts: `name`,
`description`, optional `license`, `allowed-tools`, `metadata`, `compatibility`, `version`,
and the Markdown body in `content` (or `body` / `instructions`).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.ingest import value_bounds
from pipeline.ingest.packages import MAX_SKILL_MD_BYTES, JsonlExport, PackageError

_FRONT_KEYS = ("name", "description", "license", "allowed-tools", "allowed_tools", "metadata",
               "compatibility", "version", "install", "os")
_BODY_KEYS = ("content", "body", "instructions", "markdown")
_WHOLE_KEYS = ("skill_md", "SKILL.md", "skill")


@dataclass(frozen=True)
class Record:
    """One non-empty line of an export: a SKILL.md text ready to build, or the problem with it."""

    lineno: int
    name: str | None = None
    text: str = ""
    digest: str = ""
    front_matter: dict | None = None  # the record's own fields, when it was not a whole SKILL.md
    problem: PackageError | None = None


def record_front_matter(record: dict) -> dict | None:
    """The front matter a record of parts stands for; None when it holds a whole SKILL.md."""
    if any(isinstance(record.get(key), str) for key in _WHOLE_KEYS):
        return None
    return {k: record[k] for k in _FRONT_KEYS if k in record}


def record_to_skill_md(record: dict) -> str:
    for key in _WHOLE_KEYS:
        if isinstance(record.get(key), str):
            return record[key]
    fm = record_front_matter(record)
    body = next((record[k] for k in _BODY_KEYS if isinstance(record.get(k), str)), "")
    return "---\n" + dump_front_matter(fm) + "---\n" + body


_PRINTABLE_ASCII = re.compile(r"[ -~]*\Z")
_FAST_DUMPER = getattr(yaml, "CSafeDumper", None)


def dump_front_matter(fm: dict) -> str:
    """yaml.safe_dump's text, which the record's content hash is taken of.

    libyaml's emitter writes the very same text for printable ASCII (test_jsonl_export checks
    it), about 5 times faster; other text (tabs, newlines, emoji) it quotes and folds its own
    way, so that goes through PyYAML's emitter and no stored hash ever changes."""
    fast = _FAST_DUMPER is not None and _printable_ascii(fm)
    return yaml.dump(fm, Dumper=_FAST_DUMPER if fast else yaml.SafeDumper, sort_keys=False, allow_unicode=True)


def _printable_ascii(value) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not _PRINTABLE_ASCII.match(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not (item is None or isinstance(item, (bool, int, float))):
            return False
    return True


def read_lines(fh) -> Iterator[tuple[int, bytes | None, int]]:
    """(line number, bytes or None when over the cap, size) without ever holding more than the
    cap: an oversized line is skipped in cap-sized reads, so a 50 MB line costs 1 MiB of memory."""
    lineno = 0
    while raw := fh.readline(MAX_SKILL_MD_BYTES + 1):
        lineno += 1
        if len(raw) <= MAX_SKILL_MD_BYTES:
            yield lineno, raw, len(raw)
            continue
        size = len(raw)
        while not raw.endswith(b"\n") and (raw := fh.readline(MAX_SKILL_MD_BYTES)):
            size += len(raw)
        yield lineno, None, size


def _record(lineno: int, raw: bytes, where: str) -> Record:
    fail = lambda reason: Record(lineno, problem=PackageError(where, reason))  # noqa: E731
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return fail(f"not UTF-8 text at offset {exc.start}")
    except json.JSONDecodeError as exc:
        return fail(f"invalid JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:
        return fail(f"record {value_bounds.nested_too_deep()}")
    if not isinstance(record, dict):
        return fail(f"a JSON {type(record).__name__}, not an object")
    try:
        value_bounds.measure_value(record)
    except value_bounds.ValueBoundError as exc:
        return fail(f"record {exc}")
    if _SURROGATE_ESCAPE.search(raw) and (half := _lone_surrogate(record)):
        return fail(half)
    text = record_to_skill_md(record)
    name = record.get("name") if isinstance(record.get("name"), str) else None
    return Record(lineno, name, text, hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  record_front_matter(record))


# A \u escape of a UTF-16 surrogate: valid JSON, but one without its pair is half a character
# that no UTF-8 text (the content hash, the store, an LLM request) can hold.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def _lone_surrogate(value, where: str = "record") -> str | None:
    """Why the decoded record is not text (the field holding a lone surrogate), or None."""
    if isinstance(value, str):
        m = _LONE_SURROGATE.search(value)
        return None if m is None else (f"{where} holds a lone surrogate escape (\\u{ord(m.group()):04x} without "
                                       f"its pair) at character {m.start()}: not text")
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and (why := _lone_surrogate(key, f"{where} key")):
            return why
        if why := _lone_surrogate(item, f"{where}.{key}" if isinstance(key, str) else f"{where}[{key}]"):
            return why
    return None


def records_of(export: JsonlExport, lines: list[tuple[int, bytes | None, int]]) -> Iterator[Record]:
    """One Record per non-empty line of those `read_lines` gave."""
    for lineno, raw, size in lines:
        where = record_path(export, lineno)
        if raw is None:
            yield Record(lineno, problem=PackageError(
                where, f"record is {size / 1e6:.1f} MB, over the {MAX_SKILL_MD_BYTES >> 20} MiB limit"))
        elif raw.strip():
            yield _record(lineno, raw, where)


def read_records(export: JsonlExport) -> Iterator[Record]:
    """One Record per non-empty line, read as a stream."""
    with open(export.path, "rb") as fh:
        yield from records_of(export, read_lines(fh))


def record_key(export: JsonlExport, name: str | None, lineno: int) -> str:
    return f"{export.key_prefix}#{name or f'L{lineno}'}"


def record_path(export: JsonlExport, lineno: int) -> str:
    return f"{Path(export.path)}#L{lineno}"


_SKILL_KEYS = ("name", "description", *_BODY_KEYS, *_WHOLE_KEYS)


def not_an_export(path: Path) -> str | None:
    """Why a .jsonl file found in a folder walk is some other data (labels, logs, results)
    rather than a skill export: its first record is an object with none of a skill's fields.
    None when it may be an export; its records are then checked one by one."""
    try:
        with open(path, "rb") as fh:
            first = next((raw for _, raw, _ in read_lines(fh) if raw is None or raw.strip()), None)
    except OSError:
        return None  # reading it again reports why
    try:
        record = json.loads(first) if first else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or any(k in record for k in _SKILL_KEYS):
        return None
    fields = ", ".join(sorted(map(str, record))[:8]) or "none"
    return (f"not a skill export: its first record has the fields {fields} and none of "
            f"{', '.join(_SKILL_KEYS[:2])} or a SKILL.md body")
