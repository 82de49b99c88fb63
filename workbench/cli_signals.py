"""How a long CLI run (rollout, evolve) takes Ctrl-C and the dashboard's cancel (SIGTERM to its
process group): the first sets the run's stop (nothing new starts, what is running finishes or
ends at its next turn), a second kills the containers at once."""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.sandbox.engine import Engine


def stop_on_signals(engine: "Engine") -> tuple[threading.Event, Callable[[], None]]:
    """The stop event SIGTERM/SIGINT set, and the function that puts the previous handlers back."""
    stop = threading.Event()

    def on_signal(signum, frame):
        if stop.is_set():
            engine.kill_all()
        stop.set()
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for s, h in previous.items():
            signal.signal(s, h)
    return stop, restore
