"""Runaway repetition at the tail of a streamed answer.

A small model at temperature 0 that falls into a loop writes the same characters again and
again until its budget or the context is spent. The tail of such an answer is periodic:
its last `span` characters equal themselves shifted by one period. Loops that change a
counter each time ("step 7", "step 8") are not periodic; the answer budget caps those.
"""
from __future__ import annotations

MIN_REPEATS = 8        # the loop went round this many times ...
MIN_SPAN = 240         # ... over at least this many characters (so "----" rules are not loops)
MAX_PERIOD = 1200      # longest loop looked for, in characters
_NEEDLE = 16           # the tail piece whose earlier occurrences give the candidate periods
_MAX_CANDIDATES = 64


def repeating_period(text: str, *, min_repeats: int = MIN_REPEATS, min_span: int = MIN_SPAN,
                     max_period: int = MAX_PERIOD) -> int | None:
    """The period (in characters) of a loop that ends `text`, or None."""
    n = len(text)
    if n < min_span:
        return None
    key = text[-_NEEDLE:]
    lowest = max(0, n - max_period - _NEEDLE)
    end = n - 1  # occurrences ending before the tail itself
    for _ in range(_MAX_CANDIDATES):
        i = text.rfind(key, lowest, end)
        if i < 0:
            return None
        period = n - _NEEDLE - i
        span = max(min_span, period * min_repeats)
        if span > n:
            return None  # longer periods need even more text
        tail = text[n - span:]
        if tail[period:] == tail[:-period]:
            return period
        end = i + _NEEDLE - 1
    return None


class RepetitionWatch:
    """Checks a growing answer every `every` characters (a check costs a few string scans)."""

    def __init__(self, every: int = 64):
        self.every = every
        self._checked_at = 0
        self.period: int | None = None

    def looping_at(self, length: int, parts: list[str]) -> bool:
        """Whether the answer so far (`parts`, `length` characters in all) ends in a loop;
        `parts` is joined into one piece when checked, so the next join is short."""
        if length - self._checked_at < self.every:
            return False
        self._checked_at = length
        text = "".join(parts)
        parts[:] = [text]
        self.period = repeating_period(text)
        return self.period is not None
