"""Display conventions shared by the pages and their figures: the one highlight colour, how
long texts are shortened for labels and hovers, and how a missing value reads."""
from __future__ import annotations

import math

HIGHLIGHT = "#d62728"
MISSING = "—"


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def text_or_missing(value: object, missing: str = MISSING) -> str:
    """A stored value as text; NULL (None, or NaN out of a DataFrame) and "" read ``missing``."""
    return missing if _missing(value) or str(value) == "" else str(value)


def short(text: object, n: int = 60) -> str:
    s = "" if _missing(text) else str(text)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"
