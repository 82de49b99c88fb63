"""The input files of a skill-exercise step: the package's own sample data, varied per task.

A documented call names its input (`funnel.json`); the package often ships one of that name or of
that type (`assets/sample_funnel.json`, `examples/*.csv`). The task gets that file with its numbers
drawn anew (scaled by a factor per value, ids and years kept), so each task's expected output differs
and none can be recalled from the package; a log or a plain text file keeps a random
most of its lines, in order; other text is kept as written. A type with no sample in the
package cannot be made up: the slot is not filled (the reason names the type).
"""
from __future__ import annotations

import csv
import io
import json
import random
import re

from .package import SkillPackage

_SAMPLE_WORDS = re.compile(r"sample|example|demo|test|fixture|data|input|template|mock", re.I)
_KEEP_KEYS = re.compile(r"(^|_)(id|ids|year|version|port|index|idx|rank|code|zip|phone)$", re.I)
MAX_INPUT_BYTES = 64 * 1024
_TEXT_TYPES = frozenset({"txt", "md", "markdown", "log", "rst"})


class NoSample(ValueError):
    """No file in the package can serve as this input (the message names the type)."""


def find_sample(pkg: SkillPackage, wanted: str, ext: str, skip: set[str] = frozenset()) -> str:
    """The package file to build an input from: the documented name itself, a file of that name,
    else a file of the same type that looks like sample data (never SKILL.md or a script)."""
    names = [n for n in pkg.names() if n not in skip and n != "SKILL.md"]
    rel = wanted.lstrip("./").removeprefix("/")
    base = rel.rsplit("/", 1)[-1]
    if rel in names:
        return rel
    same = sorted((n for n in names if n.rsplit("/", 1)[-1] == base), key=lambda n: (n.count("/"), n))
    if same:
        return same[0]
    typed = [n for n in names if n.lower().endswith("." + ext)]
    if ext in _TEXT_TYPES:   # a README is no input; a reference text may be
        typed = [n for n in typed if not n.rsplit("/", 1)[-1].lower().startswith(("readme", "changelog", "license"))]
    stem = base.rsplit(".", 1)[0].lower()
    scored = sorted(typed, key=lambda n: (-(stem and stem in n.lower()), -bool(_SAMPLE_WORDS.search(n)),
                                          n.count("/"), n))
    for n in scored:
        data = dict(pkg.files)[n]
        if 0 < len(data) <= MAX_INPUT_BYTES:
            return n
    raise NoSample(f"the package has no .{ext} file to build the input {wanted} from")


def vary_number(rng: random.Random, v: int | float) -> int | float:
    if isinstance(v, bool) or v == 0:
        return v
    factor = rng.uniform(0.55, 1.6)
    if isinstance(v, int):
        if 1900 <= v <= 2100:          # a year
            return v
        out = max(1, round(v * factor)) if v > 0 else round(v * factor)
        return out if out != v else v + (1 if v > 0 else -1)
    if 0 < v <= 1:                     # a rate or a share stays one
        return round(min(0.99, max(0.01, v * factor)), 4)
    return round(v * factor, 2)


def _vary_json(rng: random.Random, node, key: str = ""):
    if isinstance(node, dict):
        return {k: _vary_json(rng, v, str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_vary_json(rng, v, key) for v in node]
    if isinstance(node, (int, float)) and not isinstance(node, bool) and not _KEEP_KEYS.search(key):
        return vary_number(rng, node)
    return node


def _vary_csv(rng: random.Random, text: str, delimiter: str) -> str:
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    if len(rows) < 2:
        return text
    head, out = rows[0], [rows[0]]
    for row in rows[1:]:
        new = []
        for i, cell in enumerate(row):
            col = head[i] if i < len(head) else ""
            if re.fullmatch(r"-?\d+", cell) and not _KEEP_KEYS.search(col):
                new.append(str(vary_number(rng, int(cell))))
            elif re.fullmatch(r"-?\d+\.\d+", cell) and not _KEEP_KEYS.search(col):
                new.append(f"{vary_number(rng, float(cell))}")
            else:
                new.append(cell)
        out.append(new)
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows(out)
    return buf.getvalue()


_LINE_TYPES = frozenset({"log", "txt"})   # one record a line: a subset in order is still a valid file


def _vary_lines(rng: random.Random, text: str) -> str:
    """Each line kept with probability 0.85, in order (at least one dropped, most kept)."""
    lines = text.splitlines()
    drop = {i for i in range(len(lines)) if rng.random() > 0.85} or {rng.randrange(len(lines))}
    if len(drop) > len(lines) // 2:
        drop = set(sorted(drop)[: len(lines) // 2])
    return "\n".join(x for i, x in enumerate(lines) if i not in drop) + ("\n" if text.endswith("\n") else "")


def varied_input(rng: random.Random, data: bytes, ext: str) -> bytes:
    """The sample with its numbers (or a log's lines) drawn anew; other types as they are."""
    text = data.decode("utf-8", "replace")
    try:
        if ext == "json":
            new = json.dumps(_vary_json(rng, json.loads(text)), indent=2, ensure_ascii=False) + "\n"
        elif ext in ("jsonl", "ndjson"):
            new = "".join(json.dumps(_vary_json(rng, json.loads(ln)), ensure_ascii=False) + "\n"
                          for ln in text.splitlines() if ln.strip())
        elif ext in ("csv", "tsv"):
            new = _vary_csv(rng, text, "," if ext == "csv" else "\t")
        elif ext in _LINE_TYPES and len(text.splitlines()) >= 10:
            new = _vary_lines(rng, text)
        else:
            return data
    except (ValueError, csv.Error, RecursionError):   # not what its name says: used as it is
        return data
    return new.encode()
