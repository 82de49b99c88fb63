"""Skills exported one JSON object per line (registry dumps, scraped collections).

A record holds either the whole SKILL.md text (`skill_md`) or its parts: `name`,
`description`, optional `license`, `allowed-tools`, `metadata`, `compatibility`, `version`,
and the Markdown body in `content` (or `body` / `instructions`).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import yaml

from pipeline.ingest.packages import MAX_SKILL_MD_BYTES, JsonlExport, PackageError

_FRONT_KEYS = ("name", "description", "license", "allowed-tools", "allowed_tools", "metadata",
               "compatibility", "version", "install", "os")
_BODY_KEYS = ("content", "body", "instructions", "markdown")


def record_to_skill_md(record: dict) -> str:
    for key in ("skill_md", "SKILL.md", "skill"):
        if isinstance(record.get(key), str):
            return record[key]
    fm = {k: record[k] for k in _FRONT_KEYS if k in record}
    body = next((record[k] for k in _BODY_KEYS if isinstance(record.get(k), str)), "")
    return "---\n" + yaml.safe_dump(fm, sort_keys=False, allow_unicode=True) + "---\n" + body


def read_records(export: JsonlExport) -> Iterator[tuple[int, str | None, str, str, PackageError | None]]:
    """Yield (line number, record name, SKILL.md text, content hash, problem) per non-empty line."""
    with open(export.path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            where = f"{export.path}#L{lineno}"
            if not raw.strip():
                continue
            if len(raw) > MAX_SKILL_MD_BYTES:
                yield lineno, None, "", "", PackageError(where, f"record is {len(raw) / 1e6:.1f} MB, over the 1 MiB limit")
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                yield lineno, None, "", "", PackageError(where, f"not UTF-8 text at offset {exc.start}")
                continue
            except json.JSONDecodeError as exc:
                yield lineno, None, "", "", PackageError(where, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            if not isinstance(record, dict):
                yield lineno, None, "", "", PackageError(where, f"a JSON {type(record).__name__}, not an object")
                continue
            text = record_to_skill_md(record)
            name = record.get("name") if isinstance(record.get("name"), str) else None
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            yield lineno, name, text, digest, None


def record_key(export: JsonlExport, name: str | None, lineno: int) -> str:
    return f"{export.key_prefix}#{name or f'L{lineno}'}"


def record_path(export: JsonlExport, lineno: int) -> str:
    return f"{Path(export.path)}#L{lineno}"
