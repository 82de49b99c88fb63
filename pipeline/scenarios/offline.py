"""Offline provider for scenario inference: deterministic, from the skill's parsed parts.

Pre- and postconditions are read off the inputs, outputs, binaries and first/last steps.
Canonical sentences name the files and formats involved so that skills meeting in the same
state get close sentences (the dedup stage clusters them).
"""
from __future__ import annotations

import re

from workbench.models import Scenario, ScenarioPair

PROVIDER = "offline"
MODEL = "heuristic-v1"
_PATH = re.compile(r"`([^`]+)`")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def _plain(text: str, limit: int = 220) -> str:
    text = re.sub(r"\s+", " ", text.replace("`", "")).strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _items(values: list[str], limit: int = 3) -> str:
    return "; ".join(_plain(v, 120) for v in values[:limit])


_PATHLIKE = re.compile(r"(?:~|\.{0,2})/[\w.@%+-]+(?:/[\w.@%*+-]*)*|\b[\w-]+\.(?:csv|json|jsonl|ya?ml|txt|log|db|"
                       r"sqlite|tar|gz|tgz|zip|xz|zst|md|py|sh|c|h|toml|ini|conf|xml|html|sql|patch|diff)\b")


def _paths(values: list[str]) -> list[str]:
    """File and folder names the items mention (in backticks or path-shaped), in order."""
    out: list[str] = []
    for v in values:
        found = [m for m in _PATH.findall(v) if _PATHLIKE.search(m)] or _PATHLIKE.findall(v)
        out.extend(f for f in found[:2] if f not in out)
    return out


def infer(name: str, description: str, category: str, steps: list[str], inputs: list[str],
          outputs: list[str], bins: list[str]) -> ScenarioPair:
    sentences = _sentences(description) or [name.replace("-", " ")]
    goal = _plain(sentences[0])
    use_when = next((s for s in sentences[1:] if s.lower().startswith(("use when", "use it when", "use this"))), "")
    domain = category.replace("-", " ")
    context = _plain(use_when) if use_when else f"{domain} work in a Linux shell"
    tools = ", ".join(bins[:6]) if bins else "standard POSIX tools"
    capability = f"a Linux shell with {tools}"
    first = _plain(steps[0], 160) if steps else goal
    last = _plain(steps[-1], 160) if steps else goal
    in_paths, out_paths = _paths(inputs), _paths(outputs)
    pre_state = _items(inputs) if inputs else f"the material for this step is in place: {first}"
    post_state = _items(outputs) if outputs else f"done: {last}"
    pre = Scenario(
        goal=goal, context=context, capability=capability, state=pre_state,
        io_tool=f"reads {', '.join(in_paths[:3]) if in_paths else 'the working directory'} with {tools}",
        canonical=_plain(f"{domain}: " + (f"{', '.join(in_paths[:3])} present and unprocessed"
                                           if in_paths else f"ready to {goal[0].lower() + goal[1:]}"), 200))
    post = Scenario(
        goal=f"achieved: {goal}", context=context, capability=capability, state=post_state,
        io_tool=f"writes {', '.join(out_paths[:3]) if out_paths else 'its result'}",
        canonical=_plain(f"{domain}: " + (f"{', '.join(out_paths[:3])} produced"
                                           if out_paths else f"finished: {goal[0].lower() + goal[1:]}"), 200))
    return ScenarioPair(pre=pre, post=post)
