"""Bounds on what a front matter or a JSONL record may expand to, checked before it is built.

A few hundred bytes of YAML aliases can stand for billions of values (a "billion laughs"),
and deep nesting exhausts Python's stack. So YAML is composed into nodes first (aliases stay
shared, nothing is expanded), the node graph is measured iteratively as if every alias were
expanded, and only a graph within the bounds is constructed. JSON values get the same
measure. Every refusal says which bound was crossed.
"""
from __future__ import annotations

import time
from typing import Any

import yaml

MAX_DEPTH = 32              # real front matter nests 4-5 levels (metadata.openclaw.requires.bins)
MAX_NODES = 20_000          # values after expanding every alias
MAX_CHARS = 2 << 20         # characters of all scalars after expanding every alias
MAX_SECONDS = 2.0           # wall clock for measuring one value
MAX_NAME_CHARS = 128        # a skill name (the name rule in skill_builder allows as many)

# libyaml stops at its own nesting limit before our walk sees the node graph.
_LIBYAML_NESTING = "exceeded maximum nesting depth"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ValueBoundError(ValueError):
    """A value larger or deeper than the bounds; the message (a predicate: "is nested deeper
    than 32 levels") says which bound, to follow the name of what was measured."""


def nested_too_deep() -> ValueBoundError:
    return ValueBoundError(f"is nested deeper than {MAX_DEPTH} levels")


def load_yaml(text: str) -> Any:
    """yaml.safe_load, refusing a document whose expanded value would cross a bound."""
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            if _LIBYAML_NESTING in str(exc):
                raise nested_too_deep() from None
            raise
        except RecursionError:  # the pure-Python composer, where libyaml is missing
            raise nested_too_deep() from None
        if node is None:
            return None
        measure_nodes(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def measure_nodes(root: yaml.Node) -> None:
    """Expanded size and depth of a composed YAML graph, each shared node measured once."""
    deadline = time.monotonic() + MAX_SECONDS
    size: dict[int, tuple[int, int, int]] = {}  # id -> (nodes, chars, depth) when expanded
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = [size[id(k)] for k in _children(node)]
            nodes = 1 + sum(k[0] for k in kids)
            chars = (len(node.value) if isinstance(node, yaml.ScalarNode) else 0) + sum(k[1] for k in kids)
            depth = 1 + max((k[2] for k in kids), default=0)
            size[key] = (nodes, chars, depth)
            _check(nodes, chars, depth)
            continue
        if key in size:
            continue
        if key in on_path:
            raise ValueBoundError("has an alias inside the value it names (a recursive alias)")
        if len(on_path) >= MAX_DEPTH:
            raise nested_too_deep()
        if time.monotonic() > deadline:
            raise ValueBoundError(f"took over {MAX_SECONDS:g} s to measure")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


def _check(nodes: int, chars: int, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise nested_too_deep()
    if nodes > MAX_NODES:
        raise ValueBoundError(f"expands to over {MAX_NODES:,} values (aliases included)")
    if chars > MAX_CHARS:
        raise ValueBoundError(f"expands to over {MAX_CHARS:,} characters (aliases included)")


def measure_value(value: Any) -> None:
    """The same bounds for a plain value (parsed JSON, or YAML already constructed)."""
    deadline = time.monotonic() + MAX_SECONDS
    nodes = chars = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            raise nested_too_deep()
        if isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str):
            chars += len(item)
        _check(nodes, chars, 0)
        if not nodes % 4096 and time.monotonic() > deadline:
            raise ValueBoundError(f"took over {MAX_SECONDS:g} s to measure")
