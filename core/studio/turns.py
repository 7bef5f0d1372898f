"""Taking turns: threads that ask for a turn run the guarded work one at a time, in the order they asked.

Sixty participants' pages redraw a room at once when the presenter moves. Python runs one thread at a time and
switches between them every few milliseconds, so sixty redraws that share it all finish together, at the end of
the whole burst; taking turns, the first to ask is drawn first and the burst ends no later (sooner: the threads no
longer fight over the interpreter and each lock on the way).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

WAIT_AT_MOST = 10.0  # seconds; a turn that never comes (a stuck holder) is not waited for longer


class Turns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()  # the turn holder first, then those waiting, in order

    @contextmanager
    def turn(self) -> Iterator[None]:
        mine = threading.Event()
        with self._lock:
            self._waiting.append(mine)
            if self._waiting[0] is mine:
                mine.set()
        mine.wait(WAIT_AT_MOST)
        try:
            yield
        finally:
            with self._lock:
                self._waiting.remove(mine)
                if self._waiting:
                    self._waiting[0].set()
