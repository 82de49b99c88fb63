"""Display conventions shared by the Scenarios, Graph and Coverage figures: the one
highlight colour and how long texts are shortened for labels and hovers."""
from __future__ import annotations

import math

HIGHLIGHT = "#d62728"


def short(text: object, n: int = 60) -> str:
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"
