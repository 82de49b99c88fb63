"""Per-test outcomes from the JUnit XML pytest writes inside the container (or CTRF JSON)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

MAX_XML_BYTES = 2 * 1024 * 1024


def parse_junit(data: bytes | None) -> list[dict]:
    """[{name, outcome, message}], outcome one of passed | failed | error | skipped."""
    if not data or len(data) > MAX_XML_BYTES:
        return []
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return []
    tests = []
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (node.get("message") or node.text or "")[:500]
                break
        tests.append({"name": name, "outcome": outcome, "message": message})
    return tests


def parse_ctrf(data: bytes | None) -> list[dict]:
    """The same shape from a CTRF report (`results.tests[{name, status, message}]`), which
    hand-written Harbor tasks often write instead of JUnit XML."""
    import json
    if not data or len(data) > MAX_XML_BYTES:
        return []
    try:
        tests = json.loads(data)["results"]["tests"]
    except (ValueError, KeyError, TypeError):
        return []
    status = {"passed": "passed", "failed": "failed", "skipped": "skipped", "pending": "skipped"}
    return [{"name": str(t.get("name", "?")), "outcome": status.get(t.get("status"), "error"),
             "message": str(t.get("message") or "")[:500]} for t in tests if isinstance(t, dict)]
