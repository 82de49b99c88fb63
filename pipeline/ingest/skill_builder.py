"""Turn a SKILL.md text (plus where it came from) into a ParsedSkill."""
from __future__ import annotations

import hashlib
import re

from pipeline.ingest import skill_markdown as smd
from pipeline.ingest import value_bounds
from pipeline.ingest.value_bounds import MAX_NAME_CHARS
from pipeline.taxonomy import CATEGORIES, infer_category, normalize_category
from workbench.models import ParsedSkill

# Real collections name skills with titles ("Helm Chart Diff & Upgrade Manager", "SSL/TLS …"):
# letters of any script, digits and plain punctuation pass; characters that are markup or
# quoting where a name is shown (Markdown, HTML, TOML, shells: * ` < > [ ] { } | \\ $ " ' ;) and
# control characters do not.
_NAME_OK = re.compile(r"^[^\W_](?:[^\W_]|[ ._:&/,+()!?#@%=~–—→-])*$")


def _required_text(fm: dict, key: str, where: str) -> str:
    value = fm.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise smd.SkillFormatError(f"{where}: front matter lacks required field '{key}'")
    if not isinstance(value, (str, int, float)):
        raise smd.SkillFormatError(
            f"{where}: front matter field '{key}' must be text, got {type(value).__name__}")
    return str(value).strip()


def build_skill(text: str, *, where: str, skill_key: str, source_kind: str, source_path: str,
                source_ref: str | None, package_files: list[str], content_hash: str,
                front_matter: dict | None = None) -> ParsedSkill:
    """front_matter: the already parsed front matter of `text` (a JSONL record's own fields)."""
    md = smd.parse(text, where, front_matter)
    fm = md.front_matter
    try:  # bounds the JSON conversion below, whatever produced the value
        value_bounds.measure_value(fm)
    except value_bounds.ValueBoundError as exc:
        raise smd.SkillFormatError(f"{where}: front matter {exc}") from None
    name = _required_text(fm, "name", where)
    if len(name) > MAX_NAME_CHARS:
        raise smd.SkillFormatError(
            f"{where}: name is {len(name):,} characters long, longer than {MAX_NAME_CHARS} characters")
    if not _NAME_OK.match(name):
        raise smd.SkillFormatError(f"{where}: name {name[:60]!r} has characters a skill name may not use")
    description = _required_text(fm, "description", where)
    steps = smd.extract_steps(md)
    claw = smd.openclaw_meta(fm)
    requires = claw.get("requires") if isinstance(claw.get("requires"), dict) else {}
    tools = smd.as_list(fm.get("allowed-tools", fm.get("allowed_tools")))
    declared_bins = smd.as_list(requires.get("bins")) + smd.as_list(requires.get("anyBins"))
    tool_bins = [m.group(1) for t in tools if (m := re.match(r"Bash\(([\w.+-]+)", t))]
    bins = sorted(set(declared_bins) | set(tool_bins) | set(smd.command_bins(md, steps)))
    meta = fm.get("metadata") if isinstance(fm.get("metadata"), dict) else {}
    inputs = smd.extract_section_items(md, smd._INPUT_SECTIONS) or smd.as_list(meta.get("inputs"))
    outputs = smd.extract_section_items(md, smd._OUTPUT_SECTIONS) or smd.as_list(meta.get("outputs"))
    given_category = str(meta.get("category") or fm.get("category") or "")
    category, inferred = normalize_category(given_category), False
    if category not in CATEGORIES:  # none declared, or a collection's own label: weigh the evidence
        category = infer_category(name, description, md.body, sorted(set(declared_bins) | set(tool_bins)),
                                  code_lines=md.code_lines, declared=given_category, skill_key=skill_key)
        inferred = True
    os_list = smd.as_list(claw.get("os") or fm.get("os"))
    version = fm.get("version")
    return ParsedSkill(
        skill_key=skill_key,
        name=name,
        description=description,
        category=category,
        category_inferred=inferred,
        steps=steps,
        tools=tools,
        bins=bins,
        env_vars=smd.as_list(requires.get("env")),
        inputs=inputs,
        outputs=outputs,
        os=[o.lower() for o in os_list],
        license=str(fm["license"]) if fm.get("license") else None,
        skill_version=str(version) if version is not None else None,
        source_kind=source_kind,
        source_path=source_path,
        source_ref=source_ref,
        package_files=package_files,
        front_matter=_jsonable(fm),
        raw_text=text,
        content_hash=content_hash,
    )


def _jsonable(value):
    """YAML may hold dates and other objects JSON cannot; keep them as text."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def text_hash(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()
