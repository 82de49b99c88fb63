"""Polling for what another process does (a detached batch), with a deadline."""
from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(pred: Callable[[], object], timeout: float, every: float = 0.3) -> bool:
    """True as soon as `pred()` is true; False once `timeout` seconds have passed without."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(every)
    return False
