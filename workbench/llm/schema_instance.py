"""A deterministic minimal instance valid for a JSON schema.

The replay server answers a ``json_schema`` response format that no rule matches with
``schema_instance(schema)``, so that structured-output calls get a valid reply by default.
"""
from __future__ import annotations

import math
from typing import Any

__all__ = ["schema_instance"]

_FORMAT_EXAMPLES = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "x@example.com",
    "idn-email": "x@example.com",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
}

_MAX_DEPTH = 12


def _resolve_ref(ref: str, root: dict) -> dict:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for token in ref[1:].split("/"):
        if not token:
            continue
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _merge_all_of(schema: dict, root: dict) -> dict:
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for sub in schema["allOf"]:
        while isinstance(sub, dict) and "$ref" in sub:
            sub = {**_resolve_ref(sub["$ref"], root), **{k: v for k, v in sub.items() if k != "$ref"}}
        if not isinstance(sub, dict):
            continue
        if "allOf" in sub:
            sub = _merge_all_of(sub, root)
        for key, value in sub.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def schema_instance(schema: dict | bool, root: dict | None = None, *, name: str | None = None,
                    variant: int = 0, _depth: int = 0) -> Any:
    """A deterministic minimal instance valid for a JSON schema.

    Handles object/properties/required, strings (the property name or "x"; enum, const,
    minLength, maxLength, common formats), integer/number (minimum, exclusiveMinimum,
    maximum), boolean, null, arrays (minItems; one item otherwise), ``$ref`` into
    ``$defs``/``definitions``, ``anyOf``/``oneOf`` (first non-null branch) and ``allOf``.
    """
    if root is None:
        root = schema if isinstance(schema, dict) else {}
    if schema is True or schema == {} or not isinstance(schema, dict):
        return name or "x"
    if "$ref" in schema:
        target = _resolve_ref(schema["$ref"], root)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return schema_instance({**target, **rest} if rest else target, root, name=name,
                               variant=variant, _depth=_depth + 1)
    if "allOf" in schema:
        return schema_instance(_merge_all_of(schema, root), root, name=name, variant=variant,
                               _depth=_depth)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema and schema["enum"]:
        values = schema["enum"]
        return values[variant % len(values)]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = schema[key]
            chosen = next((b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")),
                          None)
            if chosen is None:
                return None
            rest = {k: v for k, v in schema.items() if k != key}
            if isinstance(chosen, dict) and rest:
                # keep the outer keywords (e.g. a $defs-free title/description) next to the branch
                chosen = {**{k: v for k, v in rest.items() if k not in ("type",)}, **chosen}
            return schema_instance(chosen, root, name=name, variant=variant, _depth=_depth + 1)

    typ = schema.get("type")
    if isinstance(typ, list):
        non_null = [t for t in typ if t != "null"]
        typ = non_null[0] if non_null else "null"
    if typ is None:
        if "properties" in schema or "required" in schema:
            typ = "object"
        elif "items" in schema or "prefixItems" in schema:
            typ = "array"
        else:
            return name or "x"

    if typ == "object":
        props = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for key in schema.get("required") or []:
            sub = props.get(key, True)
            out[key] = schema_instance(sub, root, name=key, _depth=_depth + 1)
        return out
    if typ == "array":
        prefix = schema.get("prefixItems") or []
        min_items = int(schema.get("minItems", 0))
        max_items = schema.get("maxItems")
        count = max(min_items, len(prefix) if prefix else 1)
        if min_items == 0 and _depth >= _MAX_DEPTH:
            count = 0  # stop recursive structures
        if max_items is not None:
            count = min(count, int(max_items))
        items = schema.get("items", True)
        item_name = name[:-1] if name and name.endswith("s") and len(name) > 1 else name
        out_list = []
        for i in range(count):
            sub = prefix[i] if i < len(prefix) else items
            if sub is False:
                break
            out_list.append(schema_instance(sub, root, name=item_name,
                                            variant=i if schema.get("uniqueItems") else 0,
                                            _depth=_depth + 1))
        return out_list
    if typ == "string":
        fmt = schema.get("format")
        if fmt in _FORMAT_EXAMPLES:
            return _FORMAT_EXAMPLES[fmt]
        value = name or "x"
        if variant:
            value = f"{value}{variant}"
        min_len = int(schema.get("minLength", 0))
        if len(value) < min_len:
            value = (value * (min_len // len(value) + 1))[:min_len]
        if schema.get("maxLength") is not None:
            value = value[: int(schema["maxLength"])]
        return value
    if typ in ("integer", "number"):
        value: float = 0
        if "minimum" in schema:
            value = schema["minimum"]
        elif "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            value = schema["exclusiveMinimum"] + 1
        elif "maximum" in schema and schema["maximum"] < 0:
            value = schema["maximum"]
        elif "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool) \
                and schema["exclusiveMaximum"] <= 0:
            value = schema["exclusiveMaximum"] - 1
        value += variant
        if typ == "integer":
            value = int(math.ceil(value))
        return value
    if typ == "boolean":
        return bool(variant % 2)
    if typ == "null":
        return None
    return name or "x"
