"""Offline provider for scenario inference: deterministic, from the skill's typed artifacts.

The whole SKILL.md is read into what the skill consumes and produces
(:mod:`pipeline.artifacts.extract`); the pre- and postcondition describe the machine state
before and after in FACET's five dimensions, and their canonical sentences come only from
the state vocabulary's templates (:mod:`pipeline.artifacts.vocabulary`). So a skill that
leaves a CSV table and one that needs a CSV table get the very same sentence and meet in
one graph node; the description (the goal) never becomes the state.

A kind a skill both reads and writes (a CSV table cleaned into a new one) is "newly
produced" afterwards, so the skill is not a self-loop. Skills with thin evidence get a
state sentence about their main tool, or else their own topic, so they never pile into one
generic hub.
"""
from __future__ import annotations

import re

from pipeline.artifacts import vocabulary as voc
from pipeline.artifacts.extract import ArtifactRef, SkillArtifacts, extract
from workbench.models import Scenario, ScenarioPair

PROVIDER = "offline"
MODEL = "artifacts-v2"
MAX_KINDS = 2            # kinds named in one canonical sentence: enough to tell states apart, few enough to meet
_GENERIC_TOOLS = frozenset({"cat", "ls", "cp", "mv", "rm", "mkdir", "echo", "grep", "head", "tail", "bash", "sh",
                            "python", "python3", "pip", "pip3", "npm", "npx", "node", "sudo", "cd", "wc", "sort",
                            "find", "chmod", "touch", "apt", "apt-get", "brew", "uv"})


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def _plain(text: str, limit: int = 220) -> str:
    text = re.sub(r"\s+", " ", text.replace("`", "")).strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _top(refs: tuple[ArtifactRef, ...], limit: int = MAX_KINDS) -> list[tuple[str, str | None]]:
    """The strongest kinds, each with its qualifier (the language of a source tree); names of
    single files are left out so that two skills reading different CSV files still meet."""
    out: dict[str, str | None] = {}
    for r in refs:
        if r.kind not in out and len(out) < limit:
            out[r.kind] = r.name if r.kind in voc.QUALIFIED else None
    return list(out.items())


def _named(refs: tuple[ArtifactRef, ...], limit: int = 4) -> str:
    names = [r.name for r in refs if r.name and r.kind not in voc.QUALIFIED]
    return ", ".join(dict.fromkeys(names[:limit]))


def _describe(refs: tuple[ArtifactRef, ...], limit: int = 4) -> str:
    parts = []
    for r in refs:
        part = voc.kind(r.kind).what(r.name if r.kind in voc.QUALIFIED else None)
        part = f"{r.name} ({part})" if r.name and r.kind not in voc.QUALIFIED else part
        if part not in parts:
            parts.append(part)
    return "; ".join(parts[:limit])


def _main_tool(arts: SkillArtifacts, bins: list[str]) -> str | None:
    specific = [t for t in (*arts.tools, *bins) if t not in _GENERIC_TOOLS]
    return specific[0] if specific else None


def _topic(name: str) -> str:
    words = re.findall(r"[A-Za-z0-9+#]+", name.replace("-", " ").replace("_", " "))
    return " ".join(words[:5]).lower() or "this task"


def canonical_pair(arts: SkillArtifacts, name: str, bins: list[str]) -> tuple[str, str]:
    """The pre- and postcondition's canonical sentences: machine state in vocabulary words."""
    pre_kinds = _top(arts.consumes)
    consumed = {k for k, _ in pre_kinds}
    produced = _top(arts.produces)
    tool = _main_tool(arts, bins)
    if pre_kinds:
        pre = voc.present_state(pre_kinds)
    elif produced and tool:
        pre = voc.EMPTY_WITH_TOOL.format(tool=tool)
    elif produced:
        pre = voc.EMPTY_FOR_TOPIC.format(topic=_topic(name))
    elif tool:
        pre = voc.TOOL_INPUTS.format(tool=tool)
    else:
        pre = voc.TOPIC_INPUTS.format(topic=_topic(name))
    if produced:
        fresh = [(k, q) for k, q in produced if k not in consumed]
        again = [(k, q) for k, q in produced if k in consumed]
        post = " ".join(filter(None, [voc.present_state(fresh) if fresh else "",
                                      *(voc.kind(k).produced(q) for k, q in again)]))
    elif pre_kinds:
        k, q = pre_kinds[0]
        post = voc.report_on(k, q)
    elif tool:
        post = voc.TOOL_SUMMARY.format(tool=tool)
    else:
        post = voc.TOPIC_SUMMARY.format(topic=_topic(name))
    return pre, post


def infer(name: str, description: str, category: str, steps: list[str], inputs: list[str],
          outputs: list[str], bins: list[str], raw_text: str = "", artifacts: SkillArtifacts | None = None
          ) -> ScenarioPair:
    arts = artifacts or extract(raw_text, bins=bins, inputs=inputs, outputs=outputs)
    sentences = _sentences(description) or [name.replace("-", " ")]
    goal = _plain(sentences[0])
    use_when = next((s for s in sentences[1:] if s.lower().startswith(("use when", "use it when", "use this"))), "")
    domain = category.replace("-", " ")
    context = _plain(use_when) if use_when else f"{domain} work in a Linux shell"
    tools = list(dict.fromkeys([*arts.tools, *bins]))
    capability = f"a Linux shell with {', '.join(tools[:6])}" if tools else "a Linux shell with standard POSIX tools"
    pre_canonical, post_canonical = canonical_pair(arts, name, bins)
    pre_state = _describe(arts.consumes) or pre_canonical
    post_state = _describe(arts.produces) or post_canonical
    with_tools = f" with {', '.join(tools[:4])}" if tools else ""
    pre = Scenario(goal=goal, context=context, capability=capability, state=_plain(pre_state),
                   io_tool=_plain(f"reads {_named(arts.consumes) or 'the working directory'}{with_tools}"),
                   canonical=pre_canonical)
    post = Scenario(goal=f"achieved: {goal}", context=context, capability=capability, state=_plain(post_state),
                    io_tool=_plain(f"writes {_named(arts.produces) or 'its result'}"), canonical=post_canonical)
    return ScenarioPair(pre=pre, post=post)
