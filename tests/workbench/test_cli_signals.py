"""Ctrl-C / SIGTERM in a long CLI run: the first sets the stop, a second kills the containers,
and the previous handlers come back afterwards."""
import os
import signal

from workbench.cli_signals import stop_on_signals


class _Engine:
    """Counts kill_all calls (the handler's only use of the engine)."""
    def __init__(self):
        self.kills = 0

    def kill_all(self):
        self.kills += 1


def test_first_signal_stops_the_second_kills_and_handlers_are_restored():
    before = signal.getsignal(signal.SIGTERM)
    engine = _Engine()
    stop, restore = stop_on_signals(engine)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.is_set() and engine.kills == 0
        os.kill(os.getpid(), signal.SIGINT)
        assert engine.kills == 1
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is before
