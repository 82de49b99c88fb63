"""Which documented command of the tool a skill is about a task can run on a sample file, or why none can.

The command-exercise kind, beside the bundled-script kind (plan.py): for a skill whose SKILL.md documents
commands of a program the base image has (pipeline.synth.fidelity_rubric.teaching: the tools the skill is
about, never set-up tools), each documented command in order is read into slots (command_line), each
input slot is given a source that fits the command (command_inputs), and the skill's own words for what
the command achieves are kept for the instruction (a comment on the line, the prose before its block or
around its inline span, else the section heading). The first that passes is the plan.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..fidelity_rubric import QUOTE_CHARS, DocCommand, Teaching
from .command_inputs import InputSource, input_source
from .command_line import CommandCall, read_command
from .inputs import NoSample
from .invocation import NotFillable, continued
from .package import SkillPackage, package_slug
from .script_facts import IMAGE_BINARIES


MAX_OPTIONS = 4   # documented commands a plan keeps; each task draws one (tasks of one skill differ)


@dataclass(frozen=True)
class CommandOption:
    doc: DocCommand                    # the documented command: doc.line is the SKILL.md quote
    call: CommandCall
    sources: tuple[InputSource, ...]   # per input slot of `call`, in order
    purpose: str = ""                  # what the command achieves, in the skill's words

    @property
    def tool(self) -> str:
        return self.call.tool


@dataclass(frozen=True)
class CommandPlan:
    skill_id: str
    skill_name: str
    package: SkillPackage              # what ships with the task (its SKILL.md at least)
    options: tuple[CommandOption, ...]  # the documented commands a task can run, in SKILL.md's order

    @property
    def first(self) -> CommandOption:
        return self.options[0]


def command_plan(skill_id: str, skill_name: str, teach: Teaching, package: SkillPackage | None
                 ) -> CommandPlan | str:
    """The documented commands a task can run (up to MAX_OPTIONS), or the reasons none can."""
    body = teach.body
    about = ", ".join(teach.about)
    missing = sorted(t for t in teach.about if t not in IMAGE_BINARIES)
    present = [c for c in teach.commands if c.tool in IMAGE_BINARIES]
    if not present:
        return f"documents commands of {about}; {', '.join(missing)} not in the base image"
    pkg = package if package is not None else \
        SkillPackage(package_slug(skill_name, skill_id), (("SKILL.md", body.encode()),))
    reasons: list[str] = []
    options: list[CommandOption] = []
    seen: set[str] = set()
    for doc in present:
        if doc.line in seen or len(options) >= MAX_OPTIONS:
            continue
        seen.add(doc.line)
        try:
            if len(doc.line) >= QUOTE_CHARS:
                raise NotFillable("the documented line is too long to quote")
            line = _quote_closed(continued(doc.line, body), body)
            if line.endswith("\\"):
                raise NotFillable("the documented command continues over several lines")
            call = read_command(doc.tool, line)
            if line != continued(doc.line, body) and {"awk", "sed"} & set(call.programs):
                raise NotFillable("its awk or sed program goes on over several lines (newlines are statements "
                                  "there, so it cannot be one command line)")
            sources, used = [], set()
            for slot in call.inputs:
                src = input_source(pkg, body, call, slot, used)
                sources.append(src)
                used.add(src.ref)
        except (NotFillable, NoSample) as exc:
            reasons.append(f"`{doc.tool}` command: {exc}")
            continue
        options.append(CommandOption(doc, call, tuple(sources), purpose_of(body, doc.line)))
    if options:
        return CommandPlan(skill_id, skill_name, pkg, tuple(options))
    return f"documents commands of {about}; none runs on a sample file: " + "; ".join(dict.fromkeys(reasons))


def _open_quote(text: str) -> bool:
    return bool(re.sub(r"'[^']*'", "", text).count('"') % 2) or bool(re.sub(r'"[^"]*"', "", text).count("'") % 2)


def _quote_closed(line: str, body: str) -> str:
    """A command whose quoted argument (SQL, a jq or awk program) goes on over the next lines, read whole
    as the shell reads it (up to 30 lines); as it was when the quote never closes."""
    if not _open_quote(line):
        return line
    lines = body.splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.strip().removeprefix("$ ").startswith(line)), None)
    if at is None:
        return line
    text = line
    for nxt in lines[at + 1: at + 31]:
        text += "\n" + nxt.strip()
        if not _open_quote(text):
            return text.replace("\n", " ")
    return line


_LIST_MARK = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|#+\s+|>\s*)*")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


def _clean(text: str) -> str:
    """Prose for a sentence: markup, list marks and long code spans gone, no quote characters."""
    text = _LIST_MARK.sub("", text.strip())
    text = re.sub(r"`([^`]{1,24})`", r"\1", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\*\*|__|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text)
    text = re.sub(r"[\\\"`<>{}|]", "", text).replace("e.g.", "").strip()
    text = re.sub(r"\s+", " ", text).strip(" :;,.-—(")
    return text[:160] if len(text) >= 8 else ""


def purpose_of(body: str, doc_line: str) -> str:
    """What a documented command achieves, in SKILL.md's words (the text a reader of the skill
    sees next to it); '' when it says nothing."""
    lines = body.splitlines()
    at = next((i for i, ln in enumerate(lines) if doc_line in ln), None)
    if at is None:
        return ""
    raw = lines[at]
    comment = re.search(r"\s#\s+([^'\"#]{6,})$", raw)
    if comment:
        return _clean(comment.group(1))
    in_fence, start = False, 0
    for i in range(at):
        if _FENCE_LINE.match(lines[i]):
            in_fence, start = not in_fence, i
    if in_fence:
        for j in range(at - 1, start, -1):       # a comment line just above, inside the block
            s = lines[j].strip()
            if s.startswith("#") and _clean(s.lstrip("#")):
                return _clean(s.lstrip("#"))
            if s and not s.startswith("#"):
                break
        j = next((j for j in range(start - 1, max(-1, start - 4), -1) if lines[j].strip()), None)
        return (_item(lines, j) if j is not None else "") or _heading(lines, start)   # the prose opening the block
    head, _, tail = raw.partition(f"`{doc_line}`")
    if _clean(head):
        return _first_clause(_item(lines, at - 1) + " " + head if _LIST_MARK.sub("", head).strip() == head.strip()
                             and at and lines[at - 1].strip() and raw[:1].isspace() else head)
    if _clean(tail):
        return _first_clause(tail)
    j = next((j for j in range(at - 1, max(-1, at - 3), -1) if lines[j].strip()), None)
    return (_item(lines, j) if j is not None and not _FENCE_LINE.match(lines[j]) else "") or _heading(lines, at)


def _item(lines: list[str], j: int) -> str:
    """The list item (or paragraph) line j ends, from its first line: its first clause, cleaned."""
    parts = [lines[j]]
    while j > 0 and lines[j][:1].isspace() and not re.match(r"^\s*(?:[-*+]|\d+[.)])\s", lines[j]) \
            and lines[j - 1].strip() and not _FENCE_LINE.match(lines[j - 1]):
        j -= 1
        parts.insert(0, lines[j])
    return _first_clause(" ".join(p.strip() for p in parts))


def _first_clause(text: str) -> str:
    """Up to the first sentence end or parenthesis, when what is left still says something."""
    cleaned = _clean(text)
    m = re.search(r"\. |\s\(|:\s", cleaned)
    cut = cleaned[:m.start()].strip() if m else cleaned
    return cut if len(cut) >= 8 and re.search(r"[A-Za-z]{3}", cut) else cleaned if re.search(r"[A-Za-z]{3}", cleaned) else ""


def _heading(lines: list[str], at: int) -> str:
    fenced = set()
    inside = False
    for i, ln in enumerate(lines[:at + 1]):
        if _FENCE_LINE.match(ln):
            inside = not inside
        elif inside:
            fenced.add(i)
    return next((_clean(lines[j]) for j in range(at, -1, -1)
                 if j not in fenced and re.match(r"^#{1,6}\s", lines[j]) and _clean(lines[j])), "")
