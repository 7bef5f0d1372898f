"""How a test waits for something: for a condition, never for a stretch of time.

A wait's limit only matters when something is broken, so it is generous; ``MEDRAG_TEST_WAIT_SCALE`` multiplies
every limit, for a machine much slower than usual (by default 1 on two cores or more, 2 on one). A wait that runs
out fails naming what it waited for.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from itertools import count
from typing import TypeVar

T = TypeVar("T")

PATIENCE = 30.0  # seconds, at scale 1: far beyond what any condition here takes on a working build


# The limits are sized for this many cores: a process allowed fewer (``taskset``, a container's share) waits longer
# by default, as several slow things (a model, a browser, an app) then share each core.
REFERENCE_CORES = 2


def scale() -> float:
    """``MEDRAG_TEST_WAIT_SCALE``, or by default the reference cores over the cores this process may run on (at
    least 1): 2 on one core."""
    raw = os.environ.get("MEDRAG_TEST_WAIT_SCALE")
    if raw is None:
        from core.engine.settings import usable_cores

        return max(1.0, REFERENCE_CORES / usable_cores())
    value = float(raw)
    if value <= 0:
        raise ValueError(f"MEDRAG_TEST_WAIT_SCALE must be a positive number, not {value}")
    return value


def patience(seconds: float = PATIENCE) -> float:
    """``seconds`` scaled: the limit to give an event's ``wait``, a barrier or a ``join``."""
    return seconds * scale()


def wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = PATIENCE,
    every: float = 0.02,
    pause: Callable[[float], object] = time.sleep,
    named: str = "",
) -> T:
    """``condition()``'s first truthy value, checked ``every`` seconds (more where checking is itself work that
    would take the CPU from what it waits for); an AssertionError naming ``what`` (and the limit's own ``named``)
    once the (scaled) timeout has passed without it. ``pause`` waits between checks: a browser test's lets the
    page's own handlers run meanwhile."""
    limit = patience(timeout)
    deadline = time.monotonic() + limit
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:g} s{named} for {what}")
        pause(every)
    return found


class Gate:
    """Where scripted calls wait until the test lets them on, first come first: ``let(n)`` lets the n that have
    waited longest pass, ``open()`` every one from now on; ``held`` counts those waiting now, so a test sees calls in
    flight before it lets them end."""

    def __init__(self, is_open: bool = False) -> None:
        self._turn = threading.Condition()
        self._passes = float("inf") if is_open else 0.0
        self._line: list[int] = []  # the waiting calls' tickets, in the order they came
        self._tickets = count()

    @property
    def held(self) -> int:
        return len(self._line)

    def let(self, n: float = 1) -> None:
        with self._turn:
            self._passes += n
            self._turn.notify_all()

    def open(self) -> None:
        self.let(float("inf"))

    def shut(self) -> None:
        """Calls from now on wait again (those already let on go on)."""
        with self._turn:
            self._passes = 0

    def wait(self, cancel: threading.Event | None = None, limit: float = PATIENCE) -> bool:
        """Waits for a pass (True) or for ``cancel`` (False). A call neither let on nor cancelled within the tests'
        patience (``limit`` seconds, scaled) fails, so that a stop that never lands fails its test rather than hanging
        it."""
        deadline = time.monotonic() + patience(limit)
        with self._turn:
            ticket = next(self._tickets)
            self._line.append(ticket)
            try:
                # a cancel event cannot wake the condition: look at it between short waits
                while not self._turn.wait_for(lambda: self._passes > 0 and self._line[0] == ticket, timeout=0.02):
                    if cancel is not None and cancel.is_set():
                        return False
                    if time.monotonic() > deadline:
                        raise AssertionError(
                            f"held at the gate for {patience(limit):g} s: never let on, never cancelled"
                        )
                self._passes -= 1
                return True
            finally:
                self._line.remove(ticket)
                self._turn.notify_all()  # the next in line may have a pass waiting for it
