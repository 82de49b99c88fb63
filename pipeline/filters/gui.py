"""executable.gui: a step needs a graphical desktop. A GUI word counts only where it is a GUI
action: "click the Save button", "open Finder and drag", "use Photoshop to" — never "fuzzy
finder", "window function", "tab-separated", the Python `click` library, a quoted prompt that
a CLI tool receives, or a product description that mentions drag-and-drop."""
from __future__ import annotations

import re

from pipeline.filters.base import RuleResult, compile_all, from_hits, passed
from pipeline.filters.required_literals import line_index
from workbench.models import Outcome, ParsedSkill

RULE = "executable.gui"
_APPS = (r"gimp|photoshop|illustrator|microsoft excel|ms excel|microsoft word|file explorer|windows explorer|"
         r"nautilus|system preferences|system settings|control panel|xcode gui|libreoffice calc|keynote")
_ACTIONS = compile_all(
    r"\b(click|double-click|right-click|tap)\s+(on\s+)?(the\s+)?[\w\s\"'“”&-]{0,40}?\b(button|menu|icon|"
    r"tab|dialog|window|toolbar|checkbox|link)\b",
    r"\b(click|double-click|press)\s+(on\s+)?[\"'“*]*(ok|next|finish|apply|install now|save)\b[\"'”*]*\s*(button)?",
    # drag as an instruction (line start, after a list marker or a sentence), not "drag-and-drop builders"
    r"(^|[.:;!]\s+|^\s*(?:[-*+]|\d{1,2}[.)])\s+)(then\s+|now\s+)?drag(\s+and\s+drop)?\s+(the|a|an|it|them|your|each|all)\b",
    r"\bdrag\b.{0,40}\b(onto|into|to)\s+(the\s+)?(window|desktop|dock|canvas|sidebar|finder|browser window)\b",
    rf"\b(open|launch|start|use|using|in|into|inside|with|via)\s+(the\s+)?({_APPS})\b",
    rf"\b(open|launch)\s[^.;:\n]{{0,30}}\b({_APPS}|files app|file manager)\b",   # "open the Files app (Nautilus)"
    # a desktop browser the agent itself operates ("headless" lines are left out below)
    r"\b(open|launch|in|using|via|inside)\s+(google\s+)?(chrome|firefox|safari|microsoft edge)\b"
    r"(?![-.]\w|\s+devtools)",
    r"\b(graphical|gui)\s+(installer|wizard|application|app|client|tool|desktop)\b",
    r"\b(open|launch|start)\b.{0,30}\bdesktop (app|application)\b",
    r"\bscreenshot\b.{0,30}\bpaste\b",
) + [
    # macOS Finder is a proper noun used with an action; "fuzzy finder" and "Finder functions" are not it
    re.compile(r"\b([Oo]pen|[Ii]n|[Ii]nto|[Ff]rom|[Uu]sing|[Vv]ia|[Ll]aunch|[Rr]eveal)\s+(the\s+)?Finder\b"
               r"|\bFinder\s+(window|sidebar|app|preferences)\b"),
]
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*(#|//|--|;)")
_HEADLESS = re.compile(r"\bheadless\b|--headless|puppeteer|playwright", re.I)
_NEGATED = re.compile(r"\b(no|without|non|headless|instead of)[- ]+(a\s+)?(gui|graphical|desktop)", re.I)
# Text that is about something else: what a CLI tool receives or prints, a message shown to a user.
_QUOTED = re.compile(r'"[^"\n]*"|`[^`\n]*`|“[^”\n]*”')
# The Python click library: `import click`, `@click.command()`, "the click library".
_CLICK_LIBRARY = re.compile(r"\bimport\s+click\b|@?\bclick\.\w+|\bclick\s+(library|framework|package|"
                            r"cli|group|command|decorators?)s?\b|\bpip\s+install\s+click\b", re.I)


def _action_at(line: str) -> bool:
    if line.lstrip().startswith(">") or _NEGATED.search(line) or _HEADLESS.search(line):
        return False  # a quotation (a message for the user) or "no GUI needed"
    spans = [m.span() for m in _QUOTED.finditer(line)] + [m.span() for m in _CLICK_LIBRARY.finditer(line)]
    for pattern in _ACTIONS:
        for m in pattern.finditer(line):
            start = m.start() + (len(m.group(1)) if pattern.pattern.startswith("(^|") and m.group(1) else 0)
            if not any(a <= start < b for a, b in spans):
                return True
    return False


def gui(skill: ParsedSkill) -> RuleResult:
    hits: list[tuple[int, str]] = []
    in_fence = False
    # only fence lines and lines an action pattern could match change the outcome
    index = line_index(skill.raw_text)
    fences, actions = index.candidates((_FENCE,)), index.candidates(tuple(_ACTIONS))
    visit = range(len(index.lines)) if fences is None or actions is None else sorted({*fences, *actions})
    for i in visit:
        line, n = index.lines[i], i + 1
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        # inside a code block only a comment is an instruction; the rest is content (an email
        # template, a string a program prints)
        if in_fence and not _COMMENT.match(line):
            continue
        if _action_at(line):
            hits.append((n, line.strip()[:240]))
            if len(hits) == 3:
                break
    if hits:
        return from_hits(RULE, Outcome.FAIL, "needs a graphical desktop", hits)
    return passed(RULE, "no step needs a graphical desktop")
