"""How a test waits for something: for a condition, never for a stretch of time.

A wait's limit only matters when something is broken, so it is generous; ``MEDRAG_TEST_WAIT_SCALE`` (default 1)
multiplies every limit, for a machine much slower than usual. A wait that runs out fails naming what it waited for.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

PATIENCE = 30.0  # seconds, at scale 1: far beyond what any condition here takes on a working build


def scale() -> float:
    value = float(os.environ.get("MEDRAG_TEST_WAIT_SCALE", "1"))
    if value <= 0:
        raise ValueError(f"MEDRAG_TEST_WAIT_SCALE must be a positive number, not {value}")
    return value


def patience(seconds: float = PATIENCE) -> float:
    """``seconds`` scaled: the limit to give an event's ``wait``, a barrier or a ``join``."""
    return seconds * scale()


def wait_until(condition: Callable[[], T], what: str, timeout: float = PATIENCE, every: float = 0.02) -> T:
    """``condition()``'s first truthy value, checked ``every`` seconds (more where checking is itself work that
    would take the CPU from what it waits for); an AssertionError naming ``what`` once the (scaled) timeout has
    passed without it."""
    limit = patience(timeout)
    deadline = time.monotonic() + limit
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:g} s for {what}")
        time.sleep(every)
    return found
