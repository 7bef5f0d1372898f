"""Guesses limited per client: at most a few failed attempts (a room code, the owner's passcode) in a window, then
that client waits. Kept in memory by the one server process; a restart forgets it."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

MAX_CLIENTS = 10_000  # beyond this, the clients whose failures are oldest are forgotten first


class Throttle:
    def __init__(self, attempts: int, window: float, clock: Callable[[], float] = time.monotonic):
        self.attempts, self.window, self.clock = attempts, window, clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        failures = self._failures.get(key, deque())
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures

    def wait(self, key: str) -> float:
        """Seconds before ``key`` may try again; 0 when it may now."""
        with self._lock:
            now = self.clock()
            failures = self._recent(key, now)
            return 0.0 if len(failures) < self.attempts else failures[0] + self.window - now

    def failed(self, key: str) -> None:
        with self._lock:
            now = self.clock()
            failures = self._recent(key, now)
            failures.append(now)
            self._failures.pop(key, None)
            self._failures[key] = failures  # most recently failed last
            while len(self._failures) > MAX_CLIENTS:
                self._failures.pop(next(iter(self._failures)))
