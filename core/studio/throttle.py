"""Attempts limited per client: at most a few in a window (wrong room codes, wrong passcodes, joins of one room),
then that client waits. Kept in memory by the one server process; a restart forgets it.

An attempt is counted in the same locked step that lets it through (``take``), and given back when it turns out
right (``give_back``): were the check and the count two steps, guesses sent at once would all pass the check before
any was counted."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

MAX_CLIENTS = 10_000  # beyond this, the clients whose attempts are oldest are forgotten first


class Throttle:
    def __init__(self, attempts: int, window: float, clock: Callable[[], float] = time.monotonic):
        self.attempts, self.window, self.clock = attempts, window, clock
        self._counted: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        counted = self._counted.get(key, deque())
        while counted and counted[0] <= now - self.window:
            counted.popleft()
        return counted

    def take(self, key: str) -> float:
        """0 when ``key`` may make an attempt now, which is then counted; else the seconds before it may."""
        with self._lock:
            now = self.clock()
            counted = self._recent(key, now)
            if len(counted) >= self.attempts:
                return counted[0] + self.window - now
            counted.append(now)
            self._counted.pop(key, None)
            self._counted[key] = counted  # most recently counted last
            while len(self._counted) > MAX_CLIENTS:
                self._counted.pop(next(iter(self._counted)))
            return 0.0

    def give_back(self, key: str) -> None:
        """An attempt that was right does not count against ``key``."""
        with self._lock:
            if counted := self._counted.get(key):
                counted.pop()
