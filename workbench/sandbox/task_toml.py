"""`task.toml` in Harbor's schema (1.4): what we write and what we read back.

Only the fields the workbench uses are modelled; Harbor ignores nothing we write and we
keep unknown sections when reading (they stay in `extra`).
"""
from __future__ import annotations

import json
import math
import re
import tomllib
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, ValidationError, field_validator

SCHEMA_VERSION = "1.4"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*$")


class RubricEvidence(BaseModel):
    """Why a step has its rubric score (pipeline.synth.fidelity_rubric): how it meets the skill
    (`via`), what it uses of it, and at 2 the SKILL.md line and the solution line, both verbatim."""
    via: Literal["script", "command", "tool", "kind", "none"]
    uses: str = ""              # the bundled script, "tool subcommand", or the shared tools / kinds
    skill_quote: str = ""
    solution_quote: str = ""
    note: str = ""


class StepFidelity(BaseModel):
    """Which skill a composed step serves and what of it the step's solution uses. The step claims
    its skill only at rubric score 2; below it the step is connective."""
    step: int
    skill_id: str
    skill_name: str = ""
    recipe: str
    tools_used: list[str] = Field(default_factory=list)    # the skill's tools the solution runs
    kinds_used: list[str] = Field(default_factory=list)    # the skill's state kinds the step reads or writes
    fidelity: Literal["tool", "artifact", "category-only"]
    score: Literal[0, 1, 2] | None = None    # the fidelity rubric; None on a task made before it
    evidence: RubricEvidence | None = None
    gap: str | None = None                   # why no step of the task runs this skill's own workflow


class TaskMetadata(BaseModel):
    category: str
    difficulty: str = "medium"
    tags: list[str] = Field(default_factory=list)
    scenario_ids: list[str] = Field(default_factory=list)
    skill_ids: list[str] = Field(default_factory=list)
    recipes: list[str] = Field(default_factory=list)
    path_id: str = ""
    seed: int = 0
    provider: str = "offline"
    skill_fidelity: list[StepFidelity] = Field(default_factory=list)
    # An evolved variant's lineage (pipeline/evolve): None on an original task, so its task.toml stays as it was.
    parent_id: str | None = None
    operator: str | None = None                  # harder | context_switch | easier
    steps: list[str] | None = None               # its path, "src_anchor>skill_id>dst_anchor" per composed step
    # Skill packages shipped read-only in the environment (/skills/<slug>); [] when the batch turned them
    # off; None on tasks made before packages travelled (their bytes unchanged).
    skill_packages: list[str] | None = None
    exercise_gaps: list[str] | None = None       # "<skill>: why no step runs its own workflow"


class TaskToml(BaseModel):
    name: str                                   # org/name
    description: str = ""
    metadata: TaskMetadata
    verifier_timeout_sec: float = 120.0
    agent_timeout_sec: float = 300.0
    build_timeout_sec: float = 300.0
    cpus: float = 1.0
    memory_mb: int = 1024
    storage_mb: int = 2048
    allow_internet: bool = False                # our verifier enforces it; Harbor's docker backend cannot
    # Set only by `ceilings.grant` once the user opted in: a bundle's word alone never opens the network.
    _network_granted: bool = PrivateAttr(default=False)

    @property
    def network_granted(self) -> bool:
        return self.allow_internet and self._network_granted

    @field_validator("verifier_timeout_sec", "agent_timeout_sec", "build_timeout_sec", "cpus", mode="before")
    @classmethod
    def _positive_finite(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"must be a number, not {v!r}")
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"must be a finite number above 0, not {v!r}")
        return v

    @field_validator("memory_mb", "storage_mb", mode="before")
    @classmethod
    def _positive_mb(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0 or v != int(v):
            raise ValueError(f"must be a whole number of MB above 0, not {v!r}")
        return int(v)

    @field_validator("allow_internet", mode="before")
    @classmethod
    def _strict_bool(cls, v: Any) -> Any:
        if not isinstance(v, bool):   # "false" (a string) must not read as true
            raise ValueError(f"must be true or false, not {v!r}")
        return v

    @field_validator("name")
    @classmethod
    def _org_name(cls, v: str) -> str:
        if not NAME_PATTERN.match(v):
            raise ValueError(f"task name {v!r} must look like 'org/name' (lower case, digits, . _ -)")
        return v


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)   # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):   # an inline table; keys are written quoted, so any key is valid
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_value(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to task.toml")


def _table(name: str, values: dict[str, Any]) -> str:
    lines = [f"[{name}]"] + [f"{k} = {_value(v)}" for k, v in values.items() if v is not None]
    return "\n".join(lines)


def render(t: TaskToml) -> str:
    parts = [f'schema_version = "{SCHEMA_VERSION}"',
             _table("task", {"name": t.name, "description": t.description}),
             _table("metadata", t.metadata.model_dump()),
             _table("verifier", {"timeout_sec": float(t.verifier_timeout_sec)}),
             _table("agent", {"timeout_sec": float(t.agent_timeout_sec)}),
             # allow_internet is written only when a task needs the network: Harbor's docker
             # backend rejects no-network modes, so offline tasks keep Harbor's default and our
             # own sandbox enforces their isolation.
             _table("environment", {"build_timeout_sec": float(t.build_timeout_sec), "cpus": t.cpus,
                                    "memory_mb": t.memory_mb, "storage_mb": t.storage_mb,
                                    "allow_internet": True if t.allow_internet else None})]
    return "\n\n".join(parts) + "\n"


# Where each field lives in task.toml, for error messages.
TOML_KEYS = {"name": "[task] name", "verifier_timeout_sec": "[verifier] timeout_sec",
             "agent_timeout_sec": "[agent] timeout_sec", "build_timeout_sec": "[environment] build_timeout_sec",
             "cpus": "[environment] cpus", "memory_mb": "[environment] memory_mb",
             "storage_mb": "[environment] storage_mb", "allow_internet": "[environment] allow_internet"}


def _explain(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        if e["loc"] and e["loc"][0] in TaskMetadata.model_fields:   # "[metadata] skill_fidelity[1].fidelity"
            loc = "[metadata] " + str(e["loc"][0]) + "".join(
                f"[{x + 1}]" if isinstance(x, int) else f".{x}" for x in e["loc"][1:])
        parts.append(f"{TOML_KEYS.get(loc, loc)} {msg}")
    return "; ".join(parts)


def parse(text: str, where: str = "task.toml") -> TaskToml:
    """Read a task.toml; raises ValueError naming the file, the key and the problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not valid TOML ({exc})") from exc
    try:
        task = data.get("task") or {}
        env = data.get("environment") or {}
        meta = dict(data.get("metadata") or {})
        meta.setdefault("category", "uncategorized")
        return TaskToml(
            name=task.get("name", ""), description=task.get("description", ""),
            metadata=TaskMetadata(**{k: v for k, v in meta.items() if k in TaskMetadata.model_fields}),
            verifier_timeout_sec=(data.get("verifier") or {}).get("timeout_sec", 120.0),
            agent_timeout_sec=(data.get("agent") or {}).get("timeout_sec", 300.0),
            build_timeout_sec=env.get("build_timeout_sec", 300.0),
            cpus=env.get("cpus", 1.0), memory_mb=env.get("memory_mb", 1024),
            storage_mb=env.get("storage_mb", 2048),
            allow_internet=env.get("allow_internet", False))
    except ValidationError as exc:
        raise ValueError(f"{where}: {_explain(exc)}") from None
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where}: {exc}") from exc
