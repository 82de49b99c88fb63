"""Display conventions shared by the pages and their figures: the one highlight colour, how
long texts are shortened for labels and hovers, how a missing value reads, and how a page
spells a command to run and how a captured log reads."""
from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable

HIGHLIGHT = "#d62728"
MISSING = "—"
# ANSI escape sequences (CSI ones like colours, charset picks, the two-byte kind): Docker's builder wraps a
# RUN step's stderr in colour codes, which a code block shows as "\x1b[91m" noise
TERMINAL_CODES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_]")


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def text_or_missing(value: object, missing: str = MISSING) -> str:
    """A stored value as text; NULL (None, or NaN out of a DataFrame) and "" read ``missing``."""
    return missing if _missing(value) or str(value) == "" else str(value)


def short(text: object, n: int = 60) -> str:
    s = "" if _missing(text) else str(text)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def short_unique(texts: Iterable[object], n: int = 60) -> list[str]:
    """:func:`short` of each text, numbered where two read alike ("… (2)"): plotly merges equal
    category labels of an axis into one."""
    out, seen = [], {}
    for t in texts:
        lab = short(t, n)
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def workbench_command(args: str, workspace: str | None = None) -> str:
    """A `workbench` command line for the user to run, on the page's workspace when given
    (a plain command would act on the default workspace, not on the one the app shows)."""
    words = args.split()
    if workspace:  # right after the subcommand words, before their options
        at = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
        words[at:at] = ["--workspace", shlex.quote(workspace)]
    return " ".join(["workbench", *words])


def plain_log(text: object) -> str:
    """A captured log or evidence as a page shows it: the text without terminal control
    sequences (NULL reads "")."""
    return "" if _missing(text) else TERMINAL_CODES.sub("", str(text))
