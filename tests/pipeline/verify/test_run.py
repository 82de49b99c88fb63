"""The verification stage as an executor's pure function: a BundleItem carries the bundle's
files, and the VerifyContext pickles (as Ray ships it) without the driver's engine and stop."""
from __future__ import annotations

import threading

import cloudpickle
import pytest

from pipeline.verify.run import BundleItem, VerifyContext, node_engine, verify_item
from tests.helpers import sum_bundle

pytestmark = pytest.mark.docker


def test_a_pickled_context_verifies_on_its_own_engine_and_stop(engine):
    here = VerifyContext(engine=engine, stop=threading.Event())
    there, item = cloudpickle.loads(cloudpickle.dumps((here, BundleItem("sum", sum_bundle()))))
    assert there.engine is None and there.stop is not here.stop and not there.stop.is_set()
    here.stop.set()                                   # the driver's stop does not reach a shipped worker
    checks = verify_item(item, there)
    assert [c.name for c in checks][:3] == ["build", "noop", "oracle"] and all(c.passed for c in checks), checks
    assert there.engine is node_engine()              # one engine per worker process, made on first use
    assert item.key == "sum"
