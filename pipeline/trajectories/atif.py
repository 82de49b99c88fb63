"""Our own pydantic models of ATIF (Agent Trajectory Interchange Format, the trajectory format
Harbor writes), a builder for agents, a reader for files from anywhere, and a bridge to
Harbor's own validator.

The models mirror `harbor.models.trajectories` (harbor 0.26, ATIF-v1.8): same class and field
names, `extra="forbid"` wherever Harbor forbids, and the rules Harbor checks (step ids 1..n,
agent-only fields, `llm_call_count == 0` steps without LLM fields, observation results that
name a tool call of their own step, resolvable subagent refs). Harbor itself is not importable
from our venv (it needs Python >= 3.12), so `validate_with_harbor` runs its validator in
`.harbor-venv` as a subprocess: our models are for building and reading, Harbor's word is the
check that a file is valid for Harbor.
"""
from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from workbench.json_object import JSONObjectError, parse_json_object

SCHEMA_VERSION = "ATIF-v1.8"        # the newest Harbor 0.26 accepts
SCHEMA_VERSIONS = tuple(f"ATIF-v1.{n}" for n in range(9))
MAX_TRAJECTORY_BYTES = 256 * 1024 * 1024    # read_trajectory refuses bigger files unread
AGENT_ONLY_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class _Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Agent(_Forbid):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


class ContentPart(_Forbid):
    """A part of a multimodal message (ATIF-v1.6+). We write text only; media sources are kept
    as given (Harbor checks their media types)."""
    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _fields_match_type(self) -> ContentPart:
        if self.type == "text" and (self.text is None or self.source is not None):
            raise ValueError("a 'text' part needs 'text' and no 'source'")
        if self.type != "text" and (self.source is None or self.text is not None):
            raise ValueError(f"an '{self.type}' part needs 'source' and no 'text'")
        return self


class SubagentTrajectoryRef(_Forbid):
    trajectory_id: str | None = None
    session_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _resolvable(self) -> SubagentTrajectoryRef:
        if self.trajectory_id is None and self.trajectory_path is None:
            raise ValueError("a subagent ref needs trajectory_id or trajectory_path")
        return self


class ToolCall(_Forbid):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class ObservationResult(_Forbid):
    source_call_id: str | None = None
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Forbid):
    results: list[ObservationResult]


class Metrics(_Forbid):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Forbid):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class Step(_Forbid):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart]
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso_timestamp(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError as e:
                raise ValueError(f"invalid ISO 8601 timestamp: {e}") from None
        return v

    @model_validator(mode="after")
    def _agent_only_fields(self) -> Step:
        if self.source != "agent":
            for name in AGENT_ONLY_FIELDS:
                if getattr(self, name) is not None:
                    raise ValueError(f"field '{name}' is only for source 'agent', not '{self.source}'")
        if self.source == "agent" and self.llm_call_count == 0:
            for name in ("metrics", "reasoning_content"):
                if getattr(self, name) is not None:
                    raise ValueError(f"field '{name}' must be absent when llm_call_count is 0")
        return self


class Trajectory(_Forbid):
    schema_version: Literal[SCHEMA_VERSIONS] = SCHEMA_VERSION  # type: ignore[valid-type]
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Trajectory:
        for i, step in enumerate(self.steps):
            if step.step_id != i + 1:
                raise ValueError(f"steps[{i}].step_id: expected {i + 1} (sequential from 1), "
                                 f"got {step.step_id}")
            ids = {tc.tool_call_id for tc in step.tool_calls or ()}
            for r in (step.observation.results if step.observation else ()):
                if r.source_call_id is not None and r.source_call_id not in ids:
                    raise ValueError(f"step {step.step_id}: observation names source_call_id "
                                     f"'{r.source_call_id}', not a tool call of that step")
        seen: set[str] = set()
        for i, sub in enumerate(self.subagent_trajectories or ()):
            if sub.trajectory_id is None or sub.trajectory_id in seen:
                raise ValueError(f"subagent_trajectories[{i}].trajectory_id must be set and unique")
            seen.add(sub.trajectory_id)
        return self

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON document as Harbor writes it (None fields left out)."""
        return self.model_dump(exclude_none=True, mode="json")


class TrajectoryError(ValueError):
    """A trajectory that cannot be read: says what was wrong and where (file, JSON position or
    field path)."""


# ------------------------------------------------------------------------------- building
def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _sum(values: list[int | float | None]) -> int | float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


ToolCallLike = ToolCall | dict[str, Any]
ObservationLike = str | Observation | ObservationResult | dict[str, Any] | list[Any]


class TrajectoryBuilder:
    """Builds one ATIF document step by step: `system`/`user` for prompts, `agent` for each
    turn; `finish` checks it against our models and returns the JSON dict. Step ids are 1..n
    in call order, timestamps ISO 8601 (UTC), final_metrics the sums of the step metrics."""

    def __init__(self, session_id: str, agent_name: str, agent_version: str,
                 model_name: str | None = None, *, extra: dict[str, Any] | None = None):
        self._agent = Agent(name=agent_name, version=agent_version, model_name=model_name)
        self._session_id = session_id
        self._extra = extra
        self._steps: list[Step] = []

    @property
    def steps(self) -> int:
        return len(self._steps)

    def _add(self, **fields: Any) -> Step:
        step = Step(step_id=len(self._steps) + 1, timestamp=_now(), **fields)
        self._steps.append(step)
        return step

    def system(self, text: str) -> Step:
        return self._add(source="system", message=text)

    def user(self, text: str) -> Step:
        return self._add(source="user", message=text)

    def agent(self, message: str, *, reasoning: str | None = None,
              tool_calls: Iterable[ToolCallLike] | None = None,
              observation: ObservationLike | None = None,
              metrics: Metrics | dict[str, Any] | None = None,
              extra: dict[str, Any] | None = None, llm_call_count: int | None = None,
              model_name: str | None = None) -> Step:
        """One agent turn. `observation` may be a plain string (one result; linked to the tool
        call when there is exactly one), result dicts/models, or an Observation. Scripted agents
        pass `llm_call_count=0` (then no metrics or reasoning, as ATIF-v1.7 requires)."""
        calls = [c if isinstance(c, ToolCall) else ToolCall(**c) for c in tool_calls or ()]
        return self._add(source="agent", message=message, reasoning_content=reasoning,
                         tool_calls=calls or None, observation=self._observation(observation, calls),
                         metrics=Metrics(**metrics) if isinstance(metrics, dict) else metrics,
                         extra=extra, llm_call_count=llm_call_count, model_name=model_name)

    @staticmethod
    def _observation(obs: ObservationLike | None, calls: list[ToolCall]) -> Observation | None:
        if obs is None or isinstance(obs, Observation):
            return obs
        if isinstance(obs, str):
            linked = calls[0].tool_call_id if len(calls) == 1 else None
            return Observation(results=[ObservationResult(source_call_id=linked, content=obs)])
        items = obs if isinstance(obs, list) else [obs]
        return Observation(results=[r if isinstance(r, ObservationResult) else
                                    ObservationResult(**r) for r in items])

    def trajectory(self, notes: str | None = None) -> Trajectory:
        metrics = [s.metrics for s in self._steps if s.metrics is not None]
        final = FinalMetrics(
            total_prompt_tokens=_sum([m.prompt_tokens for m in metrics]),
            total_completion_tokens=_sum([m.completion_tokens for m in metrics]),
            total_cached_tokens=_sum([m.cached_tokens for m in metrics]),
            total_cost_usd=_sum([m.cost_usd for m in metrics]),
            total_steps=len(self._steps))
        return Trajectory(session_id=self._session_id, agent=self._agent, steps=list(self._steps),
                          notes=notes, final_metrics=final, extra=self._extra)

    def finish(self, notes: str | None = None) -> dict[str, Any]:
        """The JSON document (None fields left out). Raises TrajectoryError when no step was
        added (ATIF needs at least one)."""
        if not self._steps:
            raise TrajectoryError("trajectory has no steps: ATIF needs at least one")
        return self.trajectory(notes).to_json_dict()


# -------------------------------------------------------------------------------- reading
def _where(loc: tuple[Any, ...]) -> str:
    return "trajectory" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def read_trajectory(source: str | os.PathLike[str] | bytes) -> Trajectory:
    """A Trajectory from a file path or the file's bytes. Garbage (too big, not UTF-8, not
    JSON, not an object, not ATIF) raises TrajectoryError naming the file and the place."""
    if isinstance(source, (bytes, bytearray)):
        name, data = "<bytes>", bytes(source)
        if len(data) > MAX_TRAJECTORY_BYTES:
            raise TrajectoryError(f"{name}: {len(data)} bytes, over the {MAX_TRAJECTORY_BYTES} cap")
    else:
        path = Path(source)
        name = str(path)
        try:
            size = path.stat().st_size
            if size > MAX_TRAJECTORY_BYTES:
                raise TrajectoryError(f"{name}: {size} bytes, over the {MAX_TRAJECTORY_BYTES} cap")
            data = path.read_bytes()
        except OSError as e:
            raise TrajectoryError(f"{name}: cannot read ({e.strerror or e})") from None
    try:
        doc = parse_json_object(data, name, kind="a trajectory")
    except JSONObjectError as exc:
        raise TrajectoryError(str(exc)) from None
    try:
        return Trajectory.model_validate(doc)
    except ValidationError as e:
        problems = [f"{_where(err['loc'])}: {err['msg']}" for err in e.errors()[:10]]
        more = f" (+{e.error_count() - 10} more)" if e.error_count() > 10 else ""
        raise TrajectoryError(f"{name}: not valid ATIF: " + "; ".join(problems) + more) from None


# -------------------------------------------------------------------- Harbor's own validator
# Harbor's CLI (`python -m harbor.utils.trajectory_validator FILE`) takes one file per process
# and prints its errors as "  - ..." lines on stderr; for many files we run its
# TrajectoryValidator class in one process instead (same checks, one interpreter start).
_BATCH_SCRIPT = """
import json, sys
from harbor.utils.trajectory_validator import TrajectoryValidator
out = {}
for p in json.load(sys.stdin):
    v = TrajectoryValidator()
    try:
        ok = v.validate(p)
    except Exception as e:
        out[p] = [f"validator crashed: {type(e).__name__}: {e}"]
        continue
    out[p] = [] if ok else list(v.errors)
json.dump(out, sys.stdout)
"""


def validate_with_harbor(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                         *, timeout_s: float = 300) -> list[str]:
    """Harbor's verdict on trajectory files: its errors, each prefixed with the file
    ("PATH: trajectory.steps.0.step_id: ..."), [] when every file is valid. Raises
    HarborNotInstalled when `.harbor-venv` (or WORKBENCH_HARBOR_VENV) is missing."""
    from pipeline.export.harbor_runner import harbor_python   # where Harbor's venv is, defined once

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [str(Path(p).resolve()) for p in paths]
    if not files:
        return []
    python = harbor_python()
    if len(files) == 1:
        proc = subprocess.run([str(python), "-m", "harbor.utils.trajectory_validator", files[0]],
                              capture_output=True, text=True, timeout=timeout_s,
                              errors="replace")
        if proc.returncode == 0:
            return []
        lines = [ln.strip()[2:] for ln in proc.stderr.splitlines() if ln.strip().startswith("- ")]
        return [f"{files[0]}: {ln}" for ln in lines] or [f"{files[0]}: {proc.stderr.strip()}"]
    proc = subprocess.run([str(python), "-c", _BATCH_SCRIPT], input=json.dumps(files),
                          capture_output=True, text=True, timeout=timeout_s, errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"Harbor's trajectory validator failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    verdicts: dict[str, list[str]] = json.loads(proc.stdout)
    return [f"{f}: {err}" for f in files for err in verdicts.get(f, ["not validated"])]
