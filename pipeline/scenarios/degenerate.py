"""Is an LLM's scenario pair degenerate? Pure checks on one reply.

Small models answer the scenario prompt with text that validates against the schema yet
says nothing: pre and post the same, a field that echoes the field's own description back,
or a canonical sentence that restates the skill's description (its goal) instead of naming
a machine state. Such a pair must never be stored as valid: the caller asks again once
with `reask_message`, then records the problem as an inference failure.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workbench.models import ScenarioPair

DIMENSIONS = ("goal", "context", "capability", "state", "io_tool", "canonical")
# Fields that must name a state: a restated description there is not a state. (`goal` may
# legitimately say what the user wants, which is what the description says.)
STATE_FIELDS = ("canonical", "state")

SAME_TEXT = "same_text"
SCHEMA_ECHO = "schema_echo"
RESTATES_DESCRIPTION = "restates_description"
KINDS = (SAME_TEXT, SCHEMA_ECHO, RESTATES_DESCRIPTION)
# Consecutive words a state may share with the description before it counts as a copy of it.
COPIED_RUN = 6

_STOP = frozenset("a an the of to in on for and or with by from at as is are be its it this that "
                  "these those into using use via their them what must".split())
_PATHLIKE = re.compile(r"\S*\w[/.]\w\S*")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_BULLET = re.compile(r"^\s*[-*]\s*`?([a-z_]+)`?\s*:\s*(.+?)\s*[;.]?\s*$", re.M)


@dataclass(frozen=True)
class Problem:
    kind: str     # one of KINDS
    detail: str   # what was wrong and where, for the re-ask and the failure reason

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def normalise(text: str) -> str:
    """Lower case, punctuation to spaces, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def content_tokens(text: str) -> set[str]:
    """Words that carry meaning, with a plural `s` dropped so that file/files meet."""
    words = (w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
             for w in normalise(text).split())
    return {w for w in words if w not in _STOP}


def _covers(value: str, reference: str, *, own: float, other: float) -> bool:
    """`value` is mostly made of `reference`'s words and covers much of it."""
    v, r = content_tokens(value), content_tokens(reference)
    if not v or not r:
        return False
    shared = len(v & r)
    return shared / len(v) >= own and shared / len(r) >= other


def _prose(text: str) -> str:
    """The text without its paths and file names (words with a `/` or a `.` inside)."""
    return _PATHLIKE.sub(" ", text)


def _copies_a_run(value: str, reference: str, n: int = COPIED_RUN) -> bool:
    """`value` repeats `n` consecutive words of `reference` (a prefix cut short is a copy too)."""
    def grams(text: str) -> set[tuple[str, ...]]:
        words = normalise(text).split()
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    return bool(grams(value) & grams(reference))


def field_descriptions(prompt_text: str = "", schema: dict | None = None) -> dict[str, list[str]]:
    """Per field, the texts a reply would merely echo: its name and title, the JSON schema's
    `description`, and the prompt's own `- field: what it means` bullet."""
    out: dict[str, list[str]] = {f: [f, f.replace("_", " ")] for f in DIMENSIONS}
    for name, text in _BULLET.findall(prompt_text):
        if name in out:
            out[name].append(text)
    for defn in ((schema or {}).get("$defs") or {}).values():
        for name, prop in (defn.get("properties") or {}).items():
            if name in out:
                out[name] += [t for t in (prop.get("title"), prop.get("description")) if t]
    return out


def _same_text(pair: ScenarioPair) -> Problem | None:
    pre, post = pair.pre.model_dump(), pair.post.model_dump()
    if all(normalise(pre[f]) == normalise(post[f]) for f in DIMENSIONS):
        return Problem(SAME_TEXT, "pre and post are the same text; post must be the state after the skill ran")
    if normalise(pair.pre.canonical) == normalise(pair.post.canonical):
        return Problem(SAME_TEXT, f"pre.canonical and post.canonical are the same sentence "
                                  f"({pair.pre.canonical[:120]!r}); they must name two different states")
    return None


def _echo(pair: ScenarioPair, descriptions: Mapping[str, Iterable[str]]) -> Problem | None:
    for role in ("pre", "post"):
        values = getattr(pair, role).model_dump()
        for name in DIMENSIONS:
            value = values[name]
            for text in descriptions.get(name, ()):
                if normalise(value) == normalise(text) or _covers(value, text, own=0.8, other=0.6):
                    return Problem(SCHEMA_ECHO, f"{role}.{name} echoes the field's own description "
                                                f"({value[:120]!r}) instead of describing this skill's state")
    return None


def _restates(pair: ScenarioPair, description: str) -> Problem | None:
    # The whole description or any one sentence of it (its first usually is the goal);
    # one too short to tell a restatement from a coincidence is not compared.
    # Paths and file names are compared away: a state naming the files the description names
    # is what a state should be.
    parts = [_prose(t) for t in (description, *_SENTENCE_END.split(description))]
    parts = [t for t in parts if len(content_tokens(t)) >= 3]
    description = _prose(description)
    for role in ("pre", "post"):
        values = getattr(pair, role).model_dump()
        for name in STATE_FIELDS:
            value = _prose(values[name])
            if _copies_a_run(value, description) or any(
                    normalise(t) in normalise(value) or _covers(value, t, own=0.85, other=0.6) for t in parts):
                return Problem(RESTATES_DESCRIPTION,
                               f"{role}.{name} restates the skill's description ({values[name][:120]!r}); it must "
                               f"describe the machine state (files, data, processes), not the goal")
    return None


def problems(pair: ScenarioPair, *, description: str,
             descriptions: Mapping[str, Iterable[str]] | None = None) -> list[Problem]:
    """Everything degenerate about one reply, in a fixed order (empty: the pair is usable)."""
    descriptions = descriptions if descriptions is not None else field_descriptions()
    found = [_same_text(pair), _echo(pair, descriptions), _restates(pair, description)]
    return [p for p in found if p is not None]


def reask_message(found: list[Problem]) -> str:
    """The follow-up turn that says what was wrong with the last reply."""
    lines = "\n".join(f"- {p.detail}" for p in found)
    return ("That reply cannot be used:\n" + lines + "\nReply again with only the JSON object: `pre` and "
            "`post` must describe two different concrete machine states of this skill, in your own words.")


class DegenerateReply(ValueError):
    """A reply still degenerate after the one re-ask; its message is the stored failure reason."""

    def __init__(self, found: list[Problem]):
        self.problems = found
        super().__init__("still degenerate after one re-ask: " + "; ".join(map(str, found)))
