"""signed-drop-verify: an openssl skill gets HMAC-SHA256 signatures (expected statuses recomputed
here with Python's hmac), a gpg skill detached GnuPG signatures made at image build time. In Docker
each oracle passes; hashing without the key (plain `openssl dgst -sha256`) fails, and so does a gpg
check that takes any signature file as good."""
import hashlib
import hmac
import random

import pytest

from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, SynthesisError, synthesize_task
from pipeline.synth.recipes.base import StepContext
from pipeline.synth.skill_fit import SkillParts, solution_commands
from pipeline.verify.run import image_for, verify_bundle
from tests.pipeline.synth.recipes.broken_solution import with_solve
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Engine

FAMILY = R.REGISTRY["signed-drop-verify"]


def seeded(seed: int, tools):
    ctx = StepContext(random.Random(seed))
    ctx.index, ctx.skill_tools = 1, frozenset(tools)
    return ctx, FAMILY.seed(ctx)


def test_hmac_statuses_follow_the_signatures():
    for seed in range(6):
        ctx, art = seeded(seed, {"openssl"})
        env = {"/app/" + k: v for k, v in ctx.env.items()}
        key = env[art.lines[0]].decode().strip()
        sigs = dict(reversed(line.split()) for line in env[art.path + "/SIGNATURES"].decode().splitlines())
        status = dict(x.split("\t") for x in art.lines[1:])
        for name, s in status.items():
            mac = hmac.new(key.encode(), env[f"{art.path}/{name}"], hashlib.sha256).hexdigest()
            want = "unsigned" if name not in sigs else "valid" if sigs[name] == mac else "bad-signature"
            assert s == want, (seed, name)
        assert list(status.values()).count("bad-signature") == 2 and "unsigned" in status.values()


def test_a_gpg_skill_gets_signatures_made_at_image_build_and_the_signing_keys_are_removed():
    for seed in range(4):
        ctx, art = seeded(seed, {"gpg"})
        assert art.fmt == "gpg" and not any(k.endswith("SIGNATURES") for k in ctx.env)
        run = " ".join(ctx.docker_run)
        assert "--detach-sign" in run and "rm -rf /tmp/wb-sign /tmp/wb-forge" in run
        assert "gpg" in solution_commands(FAMILY.build(ctx, art).solve)
    assert seeded(3, {"gpg"})[0].docker_run == seeded(3, {"gpg"})[0].docker_run


def task_for(tools):
    steps = [PathStep("sig-skill", "verify-signed-files", "security-permissions", "", "a0", "a1", SkillParts(tools=tools)),
             PathStep("next", "organise-by-extension", "file-operations", "", "a1", "a2")]
    for seed in range(20):     # the first seed whose drop the next family can read
        try:
            return synthesize_task(steps, seed, base_image_name(), force=["signed-drop-verify", "organise-by-extension"])
        except SynthesisError:
            continue
    raise AssertionError("no seed composes the chain")


def broken_twin_fails(task, old, new):
    engine = Engine()
    try:
        good = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert good["oracle"].passed, (good["oracle"].reason, good["oracle"].log[-3000:])
        assert good["noop"].passed and good["rubric"].passed, (good["noop"].reason, good["rubric"].reason)
        broken = {c.name: c for c in verify_bundle(with_solve(task.bundle, old, new), engine=engine)}
    finally:
        engine.remove_image(image_for(task.bundle))
    assert not broken["oracle"].passed, broken["oracle"].reason
    return [t["name"] for t in broken["oracle"].details["tests"] if t["outcome"] != "passed"]


@pytest.mark.docker
@pytest.mark.slow
def test_a_digest_without_the_key_fails():
    failed = broken_twin_fails(task_for(("openssl",)), '-sha256 -hmac "$key"', "-sha256")
    assert any(n.endswith("_report") for n in failed) and any(n.endswith("_verified") for n in failed), failed


@pytest.mark.docker
@pytest.mark.slow
def test_a_gpg_check_that_accepts_any_signature_file_fails():
    failed = broken_twin_fails(task_for(("gpg",)), 'elif gpg --batch --quiet --verify', "elif true || gpg --verify")
    assert any(n.endswith("_report") for n in failed) and any(n.endswith("_verified") for n in failed), failed
