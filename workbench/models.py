"""Typed records that cross module boundaries."""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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


class TestOutcome(BaseModel):
    """One test of a verifier run (from its JUnit XML)."""
    __test__ = False  # not a pytest class, despite the name
    model_config = ConfigDict(extra="allow")

    name: str
    outcome: Literal["passed", "failed", "error", "skipped"]
    message: str = ""

    @field_validator("message", mode="before")
    @classmethod
    def _no_message(cls, v):
        return "" if v is None else v


class CheckDetails(BaseModel):
    """What a check reports besides pass/fail, in one shape for every check: the no-op and
    oracle checks fill ``tests``, ``reward`` and ``exit_code``; the rubric ``test_count``
    and ``problems``; decontamination ``matches``. Check-specific extras (``image``,
    ``solve_exit_code``, ``benchmark``, …) are kept as they are."""
    model_config = ConfigDict(extra="allow")

    tests: list[TestOutcome] = Field(default_factory=list)
    test_count: int | None = None   # test functions found without running them (rubric)
    reward: float | None = None
    exit_code: int | None = None
    problems: list[str] = Field(default_factory=list)
    matches: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _tests_as_count(cls, data):
        # Rows stored before this model have the rubric's count in `tests` (an int).
        if isinstance(data, dict) and isinstance(data.get("tests"), int) and not isinstance(data["tests"], bool):
            data = {**data, "test_count": data.get("test_count", data["tests"]), "tests": []}
        return data


# The checks of a task, in verification order: the vocabulary of CheckResult.name. Defined
# here, beside the row it names, because the store and the pages need it and must not import
# pipeline/; pipeline.verify.failures re-exports it and owns the verdict rule.
CHECK_NAMES: tuple[str, ...] = ("build", "noop", "oracle", "redteam", "rubric", "decontam", "judge")


class CheckResult(BaseModel):
    """One verification check of one task, with its log (capped) and structured details.

    ``details`` stays a plain dict for JSON and for readers that index it, but it is
    validated as :class:`CheckDetails` on the way in, so every stored row has one shape."""
    name: str                       # one of CHECK_NAMES
    passed: bool
    reason: str = ""
    seconds: float = 0.0
    log: str = ""
    details: dict = Field(default_factory=dict)

    @field_validator("details", mode="before")
    @classmethod
    def _typed_details(cls, v):
        if isinstance(v, CheckDetails):
            return v.model_dump(exclude_unset=True)
        return CheckDetails.model_validate(v).model_dump(exclude_unset=True)


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
