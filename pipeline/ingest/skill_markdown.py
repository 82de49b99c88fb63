"""Parse one SKILL.md text: front matter, sections, steps, tools, inputs and outputs."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from pipeline.binaries import KNOWN_BINS
from pipeline.ingest import value_bounds


class SkillFormatError(ValueError):
    """The text is not a usable SKILL.md; the message says what and where."""

    @property
    def reason(self) -> str:
        """The message without its leading location, which a report shows apart."""
        head, sep, rest = str(self).partition(": ")
        return rest if sep and ("/" in head or "#L" in head) else str(self)


_FM = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*\r?$\n?", re.S | re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NUMBERED = re.compile(r"^\s{0,3}(\d{1,2})[.)]\s+(.+)$")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.+)$")
_STEP_HEADING = re.compile(r"^(?:step\s*\d+|workflow\s*\d+|\d+[.)])\s*[:.\-–—]?\s*(.*)$", re.I)
_STEP_SECTIONS = re.compile(
    r"\b(steps?|workflows?|procedures?|instructions?|how to|process|usage|method|playbook|quick ?start|"
    r"getting started|walkthrough)\b", re.I)
_INPUT_SECTIONS = re.compile(r"\b(inputs?|prerequisites|requires|given)\b", re.I)
_OUTPUT_SECTIONS = re.compile(r"\b(outputs?|produces|results?|deliverables?|artifacts?)\b", re.I)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_OPENCLAW_KEYS = ("openclaw", "clawdbot", "clawdis")


@dataclass
class Section:
    title: str
    level: int
    start_line: int  # 1-based line of the heading in the whole file
    lines: list[str] = field(default_factory=list)


@dataclass
class SkillMarkdown:
    front_matter: dict[str, Any]
    body: str
    body_start_line: int
    sections: list[Section]
    code_lines: list[str]


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], str, int]:
    m = _FM.match(text)
    if not m:
        first = text.lstrip("\ufeff").lstrip().splitlines()[:1]
        if first and first[0].strip() == "---":
            raise SkillFormatError(f"{where}: front matter opens with '---' but never closes")
        if first and first[0].startswith("---"):
            raise SkillFormatError(f"{where}: the first line must be exactly '---', found {first[0][:40]!r}")
        raise SkillFormatError(f"{where}: no YAML front matter (the file must start with a '---' line)")
    try:
        data = value_bounds.load_yaml(m.group(1))
    except value_bounds.ValueBoundError as exc:
        raise SkillFormatError(f"{where}: front matter {exc}") from None
    except yaml.YAMLError as exc:
        data = _lenient_yaml(m.group(1), where)
        if data is not None:
            body_start = text[: m.end()].count("\n") + 1
            return data, text[m.end():], body_start
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 2}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillFormatError(f"{where}:{line} front matter is not valid YAML: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillFormatError(f"{where}: front matter is a {type(data).__name__}, not a mapping")
    body_start = text[: m.end()].count("\n") + 1
    return data, text[m.end():], body_start


_TOP_SCALAR = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+(\w[^#]*?:\s.*)$")


def _lenient_yaml(block: str, where: str) -> dict | None:
    """Many published skills write `description: Use when: …` unquoted, which strict YAML
    refuses; other loaders accept it. Quote such top-level values and try once more."""
    lines = block.splitlines()
    fixed = [f'{m.group(1)}: {json.dumps(m.group(2).strip())}' if (m := _TOP_SCALAR.match(ln)) else ln
             for ln in lines]
    if fixed == lines:
        return None
    try:
        data = value_bounds.load_yaml("\n".join(fixed))
    except value_bounds.ValueBoundError as exc:
        raise SkillFormatError(f"{where}: front matter {exc}") from None
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def parse_sections(body: str, first_line: int) -> tuple[list[Section], list[str]]:
    sections = [Section(title="", level=0, start_line=first_line)]
    code: list[str] = []
    in_fence = False
    for i, line in enumerate(body.splitlines()):
        if _FENCE.match(line):
            in_fence = not in_fence
            sections[-1].lines.append(line)
            continue
        if in_fence:
            code.append(line)
            sections[-1].lines.append(line)
            continue
        h = _HEADING.match(line)
        if h:
            sections.append(Section(title=h.group(2).strip(), level=len(h.group(1)),
                                    start_line=first_line + i))
        else:
            sections[-1].lines.append(line)
    return sections, code


def parse(text: str, where: str, front_matter: dict[str, Any] | None = None) -> SkillMarkdown:
    """front_matter, when the caller already holds it parsed, spares parsing the YAML again."""
    m = _FM.match(text) if front_matter is not None else None
    if m:
        fm, body, start = front_matter, text[m.end():], text[: m.end()].count("\n") + 1
    else:
        fm, body, start = split_front_matter(text, where)
    sections, code = parse_sections(body, start)
    return SkillMarkdown(front_matter=fm, body=body, body_start_line=start,
                         sections=sections, code_lines=code)


def _clean(item: str) -> str:
    item = re.sub(r"\*\*|__", "", item).strip()
    return re.sub(r"\s+", " ", item)


def _list_items(lines: list[str]) -> list[str]:
    items: list[str] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _NUMBERED.match(line) or _BULLET.match(line)
        if m:
            items.append(_clean(m.groups()[-1]))
    return items


def _subtree(sections: list[Section], idx: int) -> list[Section]:
    """The section at idx and every deeper section that follows it."""
    level = sections[idx].level
    out = [sections[idx]]
    for s in sections[idx + 1:]:
        if s.level <= level:
            break
        out.append(s)
    return out


def extract_steps(md: SkillMarkdown) -> list[str]:
    steps = _extract_steps(md)
    if steps:
        return steps
    # A lone step still counts (the workflow rule then says it found one, not zero).
    for s in md.sections:
        if s.level and _STEP_SECTIONS.search(s.title):
            items = _list_items(s.lines)
            if items:
                return items[:1]
    return []


def _extract_steps(md: SkillMarkdown) -> list[str]:
    secs = md.sections
    for i, s in enumerate(secs):
        if s.level and _STEP_SECTIONS.search(s.title):
            tree = _subtree(secs, i)
            sub = [t for t in tree[1:] if _STEP_HEADING.match(t.title)]
            if len(sub) >= 2:
                return [_clean(_STEP_HEADING.match(t.title).group(1) or t.title) for t in sub]
            numbered = [_clean(m.group(2)) for line in _outside_fences(s.lines) if (m := _NUMBERED.match(line))]
            if len(numbered) >= 2:
                return numbered
            items = _list_items(s.lines)
            if len(items) >= 2:
                return items
    step_heads = [s for s in secs if s.level and _STEP_HEADING.match(s.title)]
    if len(step_heads) >= 2:
        return [_clean(_STEP_HEADING.match(s.title).group(1) or s.title) for s in step_heads]
    for s in secs:
        numbered = [_clean(m.group(2)) for line in _outside_fences(s.lines) if (m := _NUMBERED.match(line))]
        if len(numbered) >= 2:
            return numbered
    return []


def _outside_fences(lines: list[str]) -> list[str]:
    """Lines that are prose, not inside a fenced code block (sample output is no workflow)."""
    out, in_fence = [], False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            out.append(line)
    return out


def extract_section_items(md: SkillMarkdown, pattern: re.Pattern[str]) -> list[str]:
    for i, s in enumerate(md.sections):
        if s.level and pattern.search(s.title):
            lines = [ln for t in _subtree(md.sections, i) for ln in t.lines]
            items = _list_items(lines)
            if items:
                return items
    return []


def as_list(value: Any) -> list[str]:
    """Front matter fields come as a string, a list, or a mapping; flatten to strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [p for p in re.split(r"[\s,]+(?![^()]*\))", value.strip()) if p]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, dict):
        return [str(k) for k in value]
    return [str(value)]


def openclaw_meta(fm: dict[str, Any]) -> dict[str, Any]:
    meta = fm.get("metadata")
    if isinstance(meta, str):  # ClawHub sometimes stores metadata as a JSON string
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = {}
    if not isinstance(meta, dict):
        return {}
    for key in _OPENCLAW_KEYS:
        if isinstance(meta.get(key), dict):
            return meta[key]
    # forks rename the key (e.g. 'dna'); any mapping that carries requires/os/install is it
    for value in meta.values():
        if isinstance(value, dict) and {"requires", "os", "install"} & set(value):
            return value
    return {}


def command_bins(md: SkillMarkdown, steps: list[str]) -> list[str]:
    """Known binaries that appear as commands in code blocks or inline code of the steps."""
    candidates: list[str] = []
    snippets = list(md.code_lines)
    for step in steps:
        snippets.extend(_INLINE_CODE.findall(step))
    for snippet in snippets:
        for part in re.split(r"\|\||&&|[|;]|\$\(", snippet):
            words = part.strip().lstrip("$ ").split()
            while words and (words[0] in ("sudo", "env", "time", "nohup", "exec")
                             or "=" in words[0]):
                words = words[1:]
            if words:
                candidates.append(words[0].rsplit("/", 1)[-1])
    return sorted({c for c in candidates if c in KNOWN_BINS})
