"""archive-recompress: gzip files become zstd (for a zstd skill) or xz copies, each tested before its
.gz is deleted; a damaged .gz stays. In Docker, the oracle passes and a solution that skips the
`gzip -t` integrity check (so it recompresses and deletes the damaged file) fails."""
import random

import pytest

from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.recipes.base import StepContext
from pipeline.synth.skill_fit import SkillParts, solution_commands
from pipeline.verify.run import image_for, verify_bundle
from tests.pipeline.synth.recipes.broken_solution import with_solve
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine

FAMILY = R.REGISTRY["archive-recompress"]


def build(seed: int, tools=frozenset()):
    ctx = StepContext(random.Random(seed))
    ctx.index, ctx.skill_tools = 1, frozenset(tools)
    art = FAMILY.seed(ctx)
    return ctx, art, FAMILY.build(ctx, art)


def test_a_zstd_skill_gets_zstd_and_an_xz_skill_gets_xz():
    for seed in range(8):
        assert {"zstd", "gzip"} <= solution_commands(build(seed, {"zstd"})[2].solve)
        assert "xz" in solution_commands(build(seed, {"xz"})[2].solve)
        assert "zstd" not in solution_commands(build(seed, {"xz"})[2].solve)


def test_the_damaged_file_is_really_cut_short_and_the_rest_decompress():
    import gzip
    ctx, art, frag = build(4, {"zstd"})
    damaged = art.lines[0]
    for rel, data in ctx.env.items():
        name = rel.rsplit("/", 1)[-1]
        if name == damaged:
            with pytest.raises(EOFError):
                gzip.decompress(data)
        else:
            assert gzip.decompress(data) == dict(art.files)[name]
    assert [r[1] for r in frag.output.table.rows].count("corrupt") == 1


def test_same_seed_same_bytes():
    (c1, _, f1), (c2, _, f2) = build(7, {"zstd"}), build(7, {"zstd"})
    assert c1.env == c2.env and f1.solve == f2.solve


def zstd_task():
    step = PathStep("zstd-skill", "recompress-logs-to-zstd", "archives-compression", "", "a0", "a1",
                    SkillParts(tools=("zstd", "gzip")))
    nxt = PathStep("json-step", "json-convert", "data-processing", "", "a1", "a2")
    task = synthesize_task([step, nxt], 0, base_image_name(), force=["archive-recompress", "json-convert"])
    assert "zstd -q -t" in task.bundle.text("solution/solve.sh")
    return task


@pytest.mark.docker
@pytest.mark.slow
def test_zstd_oracle_passes_and_skipping_the_integrity_check_fails():
    task = zstd_task()
    engine = Engine()
    try:
        good = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert good["oracle"].passed, (good["oracle"].reason, good["oracle"].log[-3000:])
        assert good["noop"].passed and good["rubric"].passed, (good["noop"].reason, good["rubric"].reason)
        broken = {c.name: c for c in verify_bundle(
            with_solve(task.bundle, 'if gzip -t "$f" 2>/dev/null; then', "if true; then"), engine=engine)}
    finally:
        engine.remove_image(image_for(task.bundle))
    oracle = broken["oracle"]
    assert not oracle.passed, oracle.reason
    failed = [t["name"] for t in oracle.details["tests"] if t["outcome"] != "passed"]
    assert any(n.endswith("_originals") for n in failed) and any(n.endswith("_report") for n in failed), failed
