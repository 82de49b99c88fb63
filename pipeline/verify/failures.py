"""Typed failures: for every failed check, the artifact at fault and the evidence.

The check names, their order and the verdict rule are defined here once; the store is
handed the verdict, never works it out again.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Artifact = Literal["environment", "solution", "tests", "instruction"]
ARTIFACTS: tuple[str, ...] = ("environment", "solution", "tests", "instruction")
CHECK_NAMES: tuple[str, ...] = ("build", "noop", "oracle", "rubric", "decontam", "judge")


class Failure(BaseModel):
    check: str                          # one of CHECK_NAMES, or a guard's name (guard.*)
    artifact: Artifact
    reason: str
    evidence: list[str] = Field(default_factory=list)    # log excerpt lines, failing test ids
    failing_tests: list[str] = Field(default_factory=list)
