"""Verify one bundle: build, no-op, oracle, static rubric, 14-gram decontamination.

Every check is returned with its log; a check that cannot run because an earlier one
failed (no image → no no-op or oracle) is simply absent, and the first failing check is
what the store reports as the reason.
"""
from __future__ import annotations

from pipeline.verify.decontam import BenchmarkIndex, check_decontam
from pipeline.verify.docker_checks import check_build, check_noop_and_oracle
from pipeline.verify.rubric import check_rubric
from workbench.models import CheckResult
from workbench.sandbox.bundle import BundleError, TaskBundle
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import parse as parse_task_toml

ORDER = ("build", "noop", "oracle", "rubric", "decontam")


def verify_bundle(bundle: TaskBundle, *, engine: Engine | None = None, timeout_scale: float = 1.0,
                  benchmark: BenchmarkIndex | None = None) -> list[CheckResult]:
    try:
        bundle.validate()
        cfg = parse_task_toml(bundle.text("task.toml"))
    except (BundleError, ValueError) as exc:
        return [CheckResult(name="build", passed=False, reason=f"bundle rejected before building: {exc}")]
    engine = engine or Engine()
    checks: list[CheckResult] = []
    build, res = check_build(engine, bundle, cfg, timeout_scale)
    checks.append(build)
    if res.ok:
        checks.extend(check_noop_and_oracle(engine, res.image, bundle, cfg, timeout_scale))
    checks.append(check_rubric(bundle))
    checks.append(check_decontam(bundle, benchmark))
    return checks


def image_for(bundle: TaskBundle) -> str:
    from workbench.sandbox.engine import ENV_REPOSITORY
    return f"{ENV_REPOSITORY}:{bundle.environment_hash()[:20]}"
