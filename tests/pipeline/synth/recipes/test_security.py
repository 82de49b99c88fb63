"""hmac-verify: the signed drop's expected statuses come from Python's hmac; in Docker the openssl
oracle passes and a solution that hashes without the key (plain `openssl dgst -sha256`) fails."""
import hashlib
import hmac
import random

import pytest

from pipeline.synth import recipes as R
from pipeline.synth.recipes.base import StepContext
from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

FAMILY = R.REGISTRY["hmac-verify"]


def test_statuses_follow_the_signatures():
    for seed in range(6):
        ctx = StepContext(random.Random(seed))
        ctx.index = 1
        art = FAMILY.seed(ctx)
        env = {"/app/" + k: v for k, v in ctx.env.items()}
        key = env[art.lines[0]].decode().strip()
        sigs = dict(reversed(l.split()) for l in env[art.path + "/SIGNATURES"].decode().splitlines())
        status = dict(x.split("\t") for x in art.lines[1:])
        for name, s in status.items():
            body = env[f"{art.path}/{name}"]
            mac = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
            want = "unsigned" if name not in sigs else "valid" if sigs[name] == mac else "bad-signature"
            assert s == want, (seed, name)
        assert sorted(status.values()).count("bad-signature") == 2 and "unsigned" in status.values()


@pytest.mark.docker
@pytest.mark.slow
def test_a_digest_without_the_key_fails():
    failed = oracle_passes_and_broken_fails(["hmac-verify", "organise-by-extension"],
                                            '-sha256 -hmac "$key"', "-sha256")
    assert any(n.endswith("_report") for n in failed) and any(n.endswith("_verified") for n in failed), failed
