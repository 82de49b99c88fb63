"""Verify one bundle: build, no-op, oracle, red-team probe, static rubric, 14-gram decontamination.

Every check is returned with its log, in verification order (CHECK_NAMES; the LLM judge,
when there is one, is appended by its caller); a check that cannot run because an earlier one
failed (no image → no no-op or oracle) is simply absent. The verdict, the first failing check
and the artifact at fault are worked out from them once, in pipeline.verify.failures.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from pipeline.verify.decontam import BenchmarkIndex, check_decontam
from pipeline.verify.docker_checks import check_build, check_noop_and_oracle
from pipeline.verify.red_team import check_red_team, enabled_by_default
from pipeline.verify.rubric import check_rubric
from workbench.models import CheckResult
from workbench.sandbox.bundle import BundleError, TaskBundle
from workbench.sandbox.ceilings import Grant, grant
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import parse as parse_task_toml


def verify_bundle(bundle: TaskBundle, *, engine: Engine | None = None, timeout_scale: float = 1.0,
                  benchmark: BenchmarkIndex | None = None, allow_network: bool = False,
                  red_team: bool | None = None) -> list[CheckResult]:
    """`allow_network`: the user's opt-in; without it a task that asks for the network runs without.
    `red_team`: run the red-team probe once no-op and oracle passed (None: unless WORKBENCH_RED_TEAM=0)."""
    try:
        granted = _granted(bundle, allow_network)
    except (BundleError, ValueError) as exc:
        return [CheckResult(name="build", passed=False, reason=f"bundle rejected before building: {exc}")]
    cfg = granted.task
    engine = engine or Engine()
    checks: list[CheckResult] = []
    build, res = check_build(engine, bundle, cfg, timeout_scale)
    checks.append(build)
    if res.ok:
        noop, oracle = check_noop_and_oracle(engine, res.image, bundle, cfg, timeout_scale)
        checks += [noop, oracle]
        if noop.passed and oracle.passed and (enabled_by_default() if red_team is None else red_team):
            checks.append(check_red_team(engine, res.image, bundle, cfg, timeout_scale))
    checks.append(check_rubric(bundle))
    checks.append(check_decontam(bundle, benchmark))
    return _say_limits(checks, granted)


def probe_bundle(bundle: TaskBundle, *, engine: Engine | None = None, timeout_scale: float = 1.0,
                 allow_network: bool = False) -> list[CheckResult]:
    """Build, then the red-team probe alone (`workbench verify --probe`): whether the task's
    tests can be hacked, whatever its other checks would say."""
    try:
        granted = _granted(bundle, allow_network)
    except (BundleError, ValueError) as exc:
        return [CheckResult(name="build", passed=False, reason=f"bundle rejected before building: {exc}")]
    engine = engine or Engine()
    build, res = check_build(engine, bundle, granted.task, timeout_scale)
    checks = [build]
    if res.ok:
        checks.append(check_red_team(engine, res.image, bundle, granted.task, timeout_scale))
    return _say_limits(checks, granted)


def _granted(bundle: TaskBundle, allow_network: bool) -> Grant:
    bundle.validate()
    return grant(parse_task_toml(bundle.text("task.toml")), allow_network=allow_network)


def _say_limits(checks: list[CheckResult], granted: Grant) -> list[CheckResult]:
    """Put what task.toml asked for beyond the limits on the build check, and next to any
    sandboxed check that failed (a refused network may be why)."""
    if not granted.notes:
        return checks
    for c in checks:
        if c.name == "build":
            c.details["limits_capped"] = list(granted.notes)
            c.reason += f"; task.toml asked for more than the sandbox allows: {granted.summary}"
        elif c.name in ("noop", "oracle") and not c.passed:
            c.reason += f" (limits: {granted.summary})"
    return checks


def image_for(bundle: TaskBundle) -> str:
    from workbench.sandbox.engine import ENV_REPOSITORY
    return f"{ENV_REPOSITORY}:{bundle.environment_hash()[:20]}"


@dataclass(frozen=True)
class BundleItem:
    """One bundle to verify as an executor item: its files travel in it, so a worker reads
    nothing from the driver's disk. `name`: where it came from (a folder), also its key."""
    name: str
    bundle: TaskBundle

    @property
    def key(self) -> str:
        return self.name


@dataclass
class VerifyContext:
    """What every verifying worker shares. Locally `engine` and `stop` are the driver's (a stop
    kills the containers in flight); pickled for Ray they are dropped and the worker makes its
    own: this node's engine, once per process, and a stop that is never set (running items finish)."""
    benchmark: BenchmarkIndex | None = None
    allow_network: bool = False
    red_team: bool | None = None          # None: on unless WORKBENCH_RED_TEAM=0
    probe_only: bool = False              # build and the red-team probe, nothing else
    engine: Engine | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "engine": None, "stop": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.stop = threading.Event()
        self.__dict__["_on_worker"] = True      # the engine is made on first use, of this node's Docker

    def the_engine(self) -> Engine | None:
        if self.engine is None and self.__dict__.get("_on_worker"):
            self.engine = node_engine()
        return self.engine

    def verify(self, bundle: TaskBundle) -> list[CheckResult]:
        if self.probe_only:
            return probe_bundle(bundle, engine=self.the_engine(), allow_network=self.allow_network)
        return verify_bundle(bundle, engine=self.the_engine(), benchmark=self.benchmark,
                             allow_network=self.allow_network, red_team=self.red_team)


def verify_item(item: BundleItem, ctx: VerifyContext) -> list[CheckResult]:
    """The executor's pure function of `workbench verify`: checks, nothing written."""
    return ctx.verify(item.bundle)


_NODE_ENGINE: Engine | None = None
_NODE_LOCK = threading.Lock()


def node_engine() -> Engine:
    """One engine per worker process (a Ray worker runs many items). It does not sweep: what
    other processes on the node left is theirs, or their driver's, to clear."""
    global _NODE_ENGINE
    with _NODE_LOCK:
        if _NODE_ENGINE is None:
            _NODE_ENGINE = Engine(sweep=False)
        return _NODE_ENGINE
