"""Parse bytes that must hold one JSON object, saying what was wrong and where — for files an
agent, a Harbor job or another machine wrote (hostile by default: any bytes, any nesting)."""
from __future__ import annotations

import json


class JSONObjectError(ValueError):
    """The bytes are not one JSON object; the message names `what` and the place."""


def parse_json_object(data: bytes, what: str, *, kind: str = "an object") -> dict:
    """`what` names the source in every message ("trial x/result.json"); `kind` says what the
    object should have been ("a trajectory"), for the message when it is another JSON value."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise JSONObjectError(f"{what}: not UTF-8 (byte {e.start}: {e.reason})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise JSONObjectError(f"{what}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise JSONObjectError(f"{what}: JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise JSONObjectError(f"{what}: {kind} is a JSON object, this is {type(doc).__name__}")
    return doc
