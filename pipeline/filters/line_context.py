"""Where a line of a SKILL.md stands: in which section, inside a code block or not, and whether
what it says is optional (the skill works without it) or advice (it warns about a thing rather
than using it). Rules that look for what a skill NEEDS read this to tell need from mention."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_FENCE = re.compile(r"^\s*(```|~~~)")
_CONFIG_LANG = re.compile(r"^\s*(```|~~~)\s*(ya?ml|json|jsonc|toml|hcl|terraform|tf|ini|xml|dockerfile|properties)\b", re.I)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")

# The skill works without it: an optional extra, a fallback, a feature one may switch on.
OPTIONAL = re.compile(
    r"\boptional(ly)?\b|\[optional\]|\bif (you have|you'?ve got|needed|desired|you want|you prefer|the user "
    r"(has|wants|provides))\b|\b(if|when|once)\b[^.;]{0,40}\b(available|present|provided|configured|installed|"
    r"enabled|set|exists?)\b|\bonly (if|when)\b|\bgraceful(ly)?\b|\bdegrades?\b|\bis (not|n't) (set|configured)\b|"
    r"\bto enable\b|\benables?\b.{0,40}\b(feature|mode|support|integration)s?\b|\bfall(s)?\s*back\b|\bfallback\b|"
    r"\bnot required\b|\bnot needed\b|\bno (api )?key (is )?(needed|required)\b|\bworks without\b|"
    r"\bwithout (an? )?(api )?(key|token|account)\b|\bhigher rate limits?\b|\b(free|anonymous) (tier|access|usage)\b|"
    r"\balternative(ly)?\b|\bor (use|run) (it )?locally\b|\bas needed\b|\bwhen (the )?users? (mention|provide|ask|want|give)|[\"']?required[\"']?\s*:\s*false\b", re.I)

# Sections where a skill says what it needs before it starts
SETUP_HEADING = re.compile(r"\bprerequisites?\b|\brequire(ments|d)?\b|\bsetup\b|\bset ?up\b|\binstall|"
                           r"\bauth(entication|ori[sz]ation)?\b|\bconfigur|\bcredentials?\b|\bbefore you\b|"
                           r"\bgetting started\b|\bdependencies\b|\benvironment\b", re.I)

# Sections that are not the skill's core workflow: what is said there is secondary.
SECONDARY_HEADING = re.compile(
    r"\boptional\b|\badvanced\b|\bintegrations?\b|\balternatives?\b|\bsee also\b|\brelated\b|\bextensions?\b|"
    r"\bbonus\b|\bappendix\b|\btroubleshoot|\bfaq\b|\bextra\b|\bnext steps\b|"
    r"\bfurther\b|\bresources\b|\blinks\b|\bcredits?\b|\backnowledg", re.I)

# Sections and lines that warn about secrets, accounts and services instead of using them.
ADVICE_HEADING = re.compile(
    r"\bsecurity\b|\bbest practices?\b|\bmistakes?\b|\bpitfalls?\b|\banti-?patterns?\b|\bred flags?\b|"
    r"\bdon'?ts?\b|\bavoid\b|\bvulnerab|\bthreats?\b", re.I)
ADVICE_LINE = re.compile(
    r"\b(never|don'?t|do not|avoid|must not|should not|shouldn'?t)\b.{0,60}\b(hard-?cod|commit|log|print|expose|"
    r"leak|share|paste|embed|store|check in|include|put|echo|send)|\b(leaked|hard-?coded|exposed)\s+"
    r"(secrets?|keys?|tokens?|credentials?)|\b(detect|scan|find|flag|redact|mask)\w*\b.{0,60}\b(secrets?|keys?|"
    r"tokens?|credentials?)\b|\b(prevent|protect|rotate|revoke|sanitiz)\w*\b.{0,60}\b(secrets?|keys?|tokens?|"
    r"credentials?|persist)", re.I)


@dataclass(frozen=True)
class Line:
    number: int          # 1-based, in the whole SKILL.md
    text: str
    heading: str         # the nearest heading above ("" before the first), its parents joined by " / "
    in_code: bool
    in_front_matter: bool
    optional: bool       # a line just above it or its section says it is optional (see optional_at for the line's own words)
    secondary: bool      # in a section that is not the core workflow
    setup: bool          # in a prerequisites / set-up / configuration section
    advice: bool         # warns about the thing rather than using it
    in_config: bool = False  # in a YAML / JSON / TOML / HCL block: a file the skill writes, not commands it runs


@lru_cache(maxsize=4)   # every rule of one skill reads the same text, one after the other
def skill_lines(raw_text: str) -> tuple[Line, ...]:
    lines = raw_text.splitlines()
    front_end = _front_matter_end(lines)
    out: list[Line] = []
    headings: list[tuple[int, str]] = []
    in_code = in_config = False
    recent: list[str] = []   # the last few prose or comment lines, for "Optional:" lead-ins
    last_heading, flags = None, (False, False, False, False)
    heading = ""   # _path(headings), joined again only when they change
    for i, text in enumerate(lines, start=1):
        in_front = i <= front_end
        # (the `in` looks skip the patterns on the many lines that lack the characters they need)
        if not in_front and ("```" in text or "~~~" in text) and _FENCE.match(text):
            in_code = not in_code
            in_config = in_code and bool(_CONFIG_LANG.match(text))
            out.append(Line(i, text, heading, True, False, False, False, False, False))
            continue
        m = None if in_code or in_front or "#" not in text else _HEADING.match(text)
        if m:
            level = len(m.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, m.group(2))]
            heading = _path(headings)
            recent = []
        if heading != last_heading:
            # the H1 is the skill's title: "Kubernetes Troubleshooting" names the topic, not a side section
            last_heading, flags = heading, _heading_flags(" / ".join(h for lvl, h in headings if lvl > 1))
        section_optional, secondary, section_advice, setup = flags
        section_optional = section_optional and not m
        advice = section_advice or (_may_advise(text) and bool(ADVICE_LINE.search(text)))
        # "Optional:" or "# optional, for X" just above applies to this line
        lead_in = bool(recent) and _is_lead_in(recent[-1]) and bool(OPTIONAL.search(recent[-1]))
        optional = section_optional or lead_in
        out.append(Line(i, text, heading, in_code, in_front, optional, secondary, setup, advice, in_code and in_config))
        if text.strip():
            recent.append(text)
            recent = recent[-2:]
        elif not in_code:
            recent = []
    return tuple(out)


_ADVICE_WORDS = ("never", "don", "not", "avoid", "should", "leak", "hard", "expos", "detect", "scan", "find",
                 "flag", "redact", "mask")


def _may_advise(text: str) -> bool:
    """A cheap look for ADVICE_LINE's words before the regex runs (most lines have none)."""
    low = text.lower()
    return any(w in low for w in _ADVICE_WORDS)


def _heading_flags(heading: str) -> tuple[bool, bool, bool, bool]:
    return (bool(OPTIONAL.search(heading)), bool(SECONDARY_HEADING.search(heading)),
            bool(ADVICE_HEADING.search(heading)), bool(SETUP_HEADING.search(heading)))


_CLAUSE_END = re.compile(r"[;!?|]|\.(\s|$)|\s[—–]\s|\s-\s")


def optional_at(text: str, start: int, end: int) -> bool:
    """Does the clause of `text` around [start, end) say it is optional? ("E2B API key; optional
    SDK extras" makes the extras optional, not the key.)"""
    left = max([m.end() for m in _CLAUSE_END.finditer(text, 0, start)], default=0)
    right = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
    return bool(OPTIONAL.search(text[left:right]))


def _is_lead_in(text: str) -> bool:
    t = text.strip()
    return t.endswith(":") or t.startswith(("#", "//", "--")) or t.lower().startswith(("optional", "**optional", "*optional"))


def _path(headings: list[tuple[int, str]]) -> str:
    return " / ".join(h for _, h in headings)


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].strip() != "---":
        return 0
    for i, text in enumerate(lines[1:], start=2):
        if text.strip() in ("---", "..."):
            return i
    return 0
