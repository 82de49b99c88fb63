"""Which lines of a text a pattern could match at all, found without running the pattern on
every line (issue 25 item 6: the rules ran ~17M regex searches over the dev corpus's 176k lines).

From a compiled pattern's parse tree we take a set of literal strings such that every match
contains one of them (`\\b(get|create) (an? )?api[ _-]?keys?\\b` → {"api", "key"}). A line that
holds none of them cannot match, so a rule looks only at the lines that do: the same lines, in
the same order, that the full search would have found, and a fraction of the work. A pattern
with no such literal (`\\w+`, `[A-Z]\\w*`) gives None, and every line is looked at.

Case: the literals are compared lower case with the text folded (`fold`), which is sound for
IGNORECASE patterns and case-sensitive ones alike: every character Python's `re` matches to an
ASCII letter under IGNORECASE folds to that letter (the four non-ASCII ones that do are mapped;
tests/pipeline/filters/test_required_literals.py checks the whole Unicode range). Non-ASCII
literals are not used.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from re import _constants as sre  # noqa: the parse tree's opcodes
from re import _parser as sre_parse  # noqa: the stdlib's own parser, so the tree is the one re runs

# Non-ASCII characters that IGNORECASE matches to an ASCII letter (İ ı → i, ſ → s, K → k).
TO_ASCII = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))
_NEWLINE = re.compile("\n")
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def fold(text: str) -> str:
    """Lower case, with the characters IGNORECASE matches to ASCII letters made those letters."""
    if not text.isascii():   # (str.translate is ten times slower on such text)
        for char, letter in TO_ASCII:
            if char in text:
                text = text.replace(char, letter)
    return text.lower()


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    """The most selective set: longest shortest literal, then fewest literals."""
    return max(candidates, key=lambda s: (min(map(len, s)), -len(s)), default=None)


def _sequence(items) -> frozenset[str] | None:
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL and av < 128 and av != 10:   # no literal spans lines
            run.append(chr(av).lower())
            continue
        end_run()
        found = None
        if op is sre.SUBPATTERN:
            found = _sequence(av[3].data)
        elif op is sre.ATOMIC_GROUP:
            found = _sequence(av.data)
        elif op is sre.BRANCH:
            alternatives = [_sequence(alt.data) for alt in av[1]]
            if all(alternatives):
                found = frozenset().union(*alternatives)
        elif op in _REPEATS and av[0] >= 1:
            found = _sequence(av[2].data)
        # anything else (classes, any, anchors, lookarounds, group references) promises no literal
        if found:
            candidates.append(found)
    end_run()
    return _best(candidates)


@lru_cache(maxsize=None)
def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Lower-case strings one of which every match of `pattern` contains; None when there is
    no such set."""
    return _sequence(sre_parse.parse(pattern.pattern, pattern.flags).data)


def may_match(text: str, pattern: re.Pattern[str]) -> bool:
    """False only when `pattern` cannot match anywhere in `text`."""
    literals = required_literals(pattern)
    if literals is None:
        return True
    folded = fold(text)
    return any(lit in folded for lit in literals)


class LineIndex:
    """A text's lines (none holding a line break; `str.splitlines` gives such) and, for
    patterns, the lines that hold one of their required literals."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.folded = fold("\n".join(self.lines))
        self._breaks = [m.start() for m in _NEWLINE.finditer(self.folded)]
        self._memo: dict[tuple[re.Pattern[str], ...], list[int] | None] = {}

    def _lines_with(self, literal: str, out: set[int]) -> None:
        folded, breaks = self.folded, self._breaks
        i = folded.find(literal)
        while i >= 0:
            n = bisect_left(breaks, i)   # the line holding position i
            out.add(n)
            if n >= len(breaks):
                return
            i = folded.find(literal, breaks[n] + 1)

    def candidates(self, patterns: tuple[re.Pattern[str], ...]) -> list[int] | None:
        """Indices (0-based, ascending) of the lines any of `patterns` could match; None: all."""
        if patterns in self._memo:
            return self._memo[patterns]
        found: set[int] | None = set() if patterns else None
        for p in patterns:
            literals = required_literals(p)
            if literals is None:
                found = None
                break
            for lit in literals:
                self._lines_with(lit, found)
        out = None if found is None else sorted(found)
        self._memo[patterns] = out
        return out

    def indices(self, patterns: tuple[re.Pattern[str], ...]) -> range | list[int]:
        cands = self.candidates(patterns)
        return range(len(self.lines)) if cands is None else cands


@lru_cache(maxsize=8)   # every rule of one skill reads the same text, one after the other
def line_index(text: str) -> LineIndex:
    return LineIndex(text.splitlines())
