"""Parsing Python source safely from the batch's threads.

CPython 3.11's `ast.parse` is not thread-safe ("AST constructor recursion depth mismatch"
under concurrent parses); batches synthesize, guard and verify in threads, so every parse
of a task's Python goes through here and parses take turns.
"""
from __future__ import annotations

import ast
import threading

_PARSE_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, one thread at a time; raises SyntaxError as it does."""
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)
