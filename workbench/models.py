"""Typed records that cross module boundaries."""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class SkillStatus(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    PENDING = "pending"


class Outcome(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


class ParsedSkill(BaseModel):
    """A skill as read from its package, before it gets an id in the store."""

    skill_key: str
    name: str
    description: str
    category: str
    category_inferred: bool
    steps: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    bins: list[str] = Field(default_factory=list)
    env_vars: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    os: list[str] = Field(default_factory=list)
    license: str | None = None
    skill_version: str | None = None
    source_kind: str
    source_path: str
    source_ref: str | None = None
    package_files: list[str] = Field(default_factory=list)
    front_matter: dict[str, Any] = Field(default_factory=dict)
    raw_text: str
    content_hash: str


class StoredSkill(ParsedSkill):
    id: str
    version: int
    is_current: bool
    status: SkillStatus = SkillStatus.PENDING
    auto_status: SkillStatus = SkillStatus.PENDING
    flagged_rules: list[str] = Field(default_factory=list)
    curated: bool = False
    ingested_at: datetime | None = None


class FilterVerdict(BaseModel):
    skill_id: str
    rule: str
    outcome: Outcome
    evidence: str
    location: str | None = None


class IngestProblem(BaseModel):
    """A package (or one file of it) that could not be ingested, and why."""

    source: str
    file: str
    reason: str


class CurationChange(BaseModel):
    """One field of one skill set to a new value, as staged by the user."""

    skill_id: str
    field: str
    new_value: str


class CurationEvent(BaseModel):
    event_id: str
    batch_id: str
    skill_id: str
    field: str
    old_value: str | None
    new_value: str | None
    author: str
    at: datetime
    undoes_batch: str | None = None


class Scenario(BaseModel):
    """A system state in FACET's five dimensions, plus one canonical sentence."""

    goal: str = Field(min_length=3)
    context: str = Field(min_length=3)
    capability: str = Field(min_length=3)
    state: str = Field(min_length=3)
    io_tool: str = Field(min_length=3)
    canonical: str = Field(min_length=8)


class ScenarioPair(BaseModel):
    """What holds before a skill runs (pre) and after it succeeded (post)."""

    pre: Scenario
    post: Scenario


class CheckResult(BaseModel):
    """One verification check of one task, with its log (capped) and structured details."""
    name: str                       # build | noop | oracle | rubric | decontam
    passed: bool
    reason: str = ""
    seconds: float = 0.0
    log: str = ""
    details: dict = Field(default_factory=dict)


class TaskRecord(BaseModel):
    """A synthesized task as the store keeps it (the files live in `bundle_dir`)."""
    task_id: str
    name: str
    path_id: str
    category: str
    difficulty: str
    n_steps: int
    recipes: list[str]
    skill_ids: list[str]
    scenario_ids: list[str]
    provider: str = "offline"
    bundle_dir: str
    bundle_hash: str
