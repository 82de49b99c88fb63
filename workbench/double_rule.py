"""The one rule that says whether a figure comes from a test double or a simulated agent, and the
label it then carries (issue 22.4): pages, figures, tables, exports, notebooks and CLI summaries
all ask here, so a scripted model never passes for a model anywhere.

A *test double* is a model name the project's scripted replay servers answer under: every one of
them starts with `scripted-` (the synthesis replay `scripted-replay`, its demo-priced
`scripted-replay (demo price)`, the Terminus-2 replay `scripted-terminus:<behaviour> (test
double)`, the trajectory judge `scripted-trajectory-judge`), or is the replay server's own
default (`replay-model`, `replay`); a provider prefix such as Harbor's `openai/` does not hide
it. A *simulated agent* makes up its pass rates without a model (noisy-oracle). The scripted
probes nop, oracle and ablation are neither: they say what they are in their own labels.

Pure functions of names; this module imports nothing of the project (the doubles themselves are
imported only where they are used, tests check their names against this rule)."""
from __future__ import annotations

import re
from collections.abc import Iterable

TAG = "test double"
SIMULATED = "simulated, not a model"
SIMULATED_AGENTS = frozenset({"noisy-oracle"})
# what a double's cost and yield are, where one is shown
COST_NOTE = "a test double's cost (a scripted replay at a made-up price), not a model's"
DOUBLE_NOTE = "a test double: a scripted replay, not an LLM"

_DOUBLE_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:scripted-|replay(?:-model)?$)", re.I)


def _name(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def is_double_model(model: object) -> bool:
    """The model name is one a scripted replay server answers under."""
    name = _name(model)
    return bool(name) and (bool(_DOUBLE_MODEL.match(name)) or f"({TAG})" in name)


def is_simulated_agent(agent: object) -> bool:
    """The agent makes up its pass rates without a model (noisy-oracle; an imported `harbor:` one too)."""
    name = _name(agent)
    return name.removeprefix("harbor:") in SIMULATED_AGENTS


def is_double(*, model: object = None, agent: object = None) -> bool:
    """A figure by this agent config (or this model alone) is a double's or a simulation's, not a model's."""
    return is_double_model(model) or is_simulated_agent(agent)


def any_double(models: Iterable[object]) -> bool:
    return any(is_double_model(m) for m in models)


def model_label(model: object) -> str:
    """The model name as shown: a double's carries "test double" (once), any other is itself."""
    name = _name(model)
    if not is_double_model(name) or TAG in name:
        return name
    if name.endswith(")") and "(" in name:           # "scripted-replay (demo price)"
        return f"{name[:-1]}, {TAG})"
    return f"{name} ({TAG})"


def _names(models: object) -> list[str]:
    """Model names from a list, or from one text of names joined by ", " (NaN, None: none)."""
    if isinstance(models, str):
        names = [m.strip() for m in models.split(", ")]
    elif isinstance(models, Iterable):
        names = [_name(m) for m in models]
    else:
        names = []
    return list(dict.fromkeys(m for m in names if m))


def models_label(models: object) -> str:
    """Several model names (a list, or one text of names joined by ", ") as one label, each labelled."""
    return ", ".join(model_label(m) for m in _names(models))


def provider_label(provider: object, models: object = None) -> str:
    """A synthesizer provider with the model(s) that answered it: `llm` alone hides a double, so the
    label names the model and says when it is a test double ("llm · scripted-replay (test double)")."""
    name = _name(provider) or "?"
    shown = models_label(models)
    return f"{name} · {shown}" if shown else name


def agent_config_label(agent: str, base: str, models: object = None) -> str:
    """An agent's label (`base`, e.g. AGENT_LABELS') for runs against `models` (one name or several):
    an LLM agent that talked only to a double says so instead of "LLM agent", one that talked to a
    double in some runs says that; a simulated agent says it is simulated."""
    names = _names(models)
    doubles = [m for m in names if is_double_model(m)]
    if doubles and len(doubles) < len(names):
        return f"{base}; some runs against a scripted replay model ({TAG})"
    if doubles:
        head = re.sub(r"\s*\(LLM agent\)", "", base)
        return f"{head} · {TAG}: against a scripted replay model, not an LLM"   # the tag first: columns cut
    if is_simulated_agent(agent) and SIMULATED not in base:
        return f"{base} ({SIMULATED})"
    return base
