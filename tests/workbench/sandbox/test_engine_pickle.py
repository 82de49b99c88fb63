import pickle

import pytest

from workbench.sandbox.engine import Engine, node_engine

pytestmark = pytest.mark.docker


def test_an_engine_pickles_as_this_processs_node_engine():
    # Its client and registry of live containers cannot travel; what arrives is the receiving
    # process's own connection (a Ray worker's), opened once.
    e = Engine(sweep=False)
    back = pickle.loads(pickle.dumps(e))
    assert back is node_engine() and back is not e
    assert pickle.loads(pickle.dumps(back)) is back
    assert back.client.ping()
