"""The minimal JSON-schema instances the replay server answers structured-output requests with."""
from __future__ import annotations

from pydantic import BaseModel

from workbench.llm.schema_instance import schema_instance


def test_schema_instance_keywords():
    schema = {
        "$defs": {"Leaf": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}},
                           "required": ["n"]}},
        "type": "object",
        "properties": {
            "leaf": {"$ref": "#/$defs/Leaf"},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 8}]},
            "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
            "flag": {"type": "boolean"},
            "name": {"type": "string", "enum": ["b", "a"]},
            "short": {"type": "string", "maxLength": 2},
            "when": {"type": "string", "format": "date-time"},
            "ratio": {"type": "number", "exclusiveMinimum": 0.5},
            "skipped": {"type": "string"},
        },
        "required": ["leaf", "maybe", "ids", "flag", "name", "short", "when", "ratio"],
    }
    value = schema_instance(schema)
    assert value["leaf"] == {"n": 3}
    assert value["maybe"] == "maybemay"
    assert value["ids"] == [0, 1, 2]
    assert value["name"] == "b"
    assert value["short"] == "sh"
    assert "skipped" not in value
    assert value["ratio"] > 0.5
    import jsonschema
    jsonschema.validate(value, schema)


def test_schema_instance_stops_recursion():
    class Node(BaseModel):
        name: str
        children: list["Node"]

    value = schema_instance(Node.model_json_schema())
    Node.model_validate(value)
